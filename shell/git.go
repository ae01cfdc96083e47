package shell

import "strings"

// safeGitConfig lists `git -c` keys (lower case) that change no program git
// runs; any other key makes the command exec (core.pager, core.sshCommand,
// alias.*, core.hooksPath, credential.helper, diff.external, *.textconv,
// protocol.*, ... all run programs).
var safeGitConfig = map[string]bool{
	"user.name": true, "user.email": true, "core.quotepath": true, "core.abbrev": true,
	"core.autocrlf": true, "core.safecrlf": true, "core.filemode": true, "core.ignorecase": true,
	"color.ui": true, "color.diff": true, "color.status": true, "color.branch": true,
	"column.ui": true, "init.defaultbranch": true, "commit.gpgsign": true, "tag.gpgsign": true,
	"pull.rebase": true, "pull.ff": true, "push.default": true, "merge.conflictstyle": true,
	"diff.noprefix": true, "diff.renames": true, "diff.algorithm": true, "log.showsignature": true,
	"log.decorate": true, "advice.detachedhead": true, "safe.directory": true, "i18n.logoutputencoding": true,
	"core.longpaths": true, "gc.auto": true, "fetch.prune": true, "rebase.autostash": true,
	"maintenance.auto": true, "status.showuntrackedfiles": true,
}

// gitSub describes a git subcommand's base classes.
var gitSub = map[string]Class{
	// read
	"annotate": ClassGitRead, "blame": ClassGitRead, "cat-file": ClassGitRead, "check-attr": ClassGitRead,
	"check-ignore": ClassGitRead, "check-ref-format": ClassGitRead, "cherry": ClassGitRead,
	"count-objects": ClassGitRead, "describe": ClassGitRead, "diff": ClassGitRead, "diff-files": ClassGitRead,
	"diff-index": ClassGitRead, "diff-tree": ClassGitRead, "for-each-ref": ClassGitRead, "fsck": ClassGitRead,
	"grep": ClassGitRead, "help": ClassGitRead, "log": ClassGitRead, "ls-files": ClassGitRead,
	"ls-tree": ClassGitRead, "merge-base": ClassGitRead, "name-rev": ClassGitRead, "range-diff": ClassGitRead,
	"rev-list": ClassGitRead, "rev-parse": ClassGitRead, "shortlog": ClassGitRead, "show": ClassGitRead,
	"show-branch": ClassGitRead, "show-ref": ClassGitRead, "status": ClassGitRead, "var": ClassGitRead,
	"verify-commit": ClassGitRead, "verify-tag": ClassGitRead, "version": ClassGitRead,
	"whatchanged": ClassGitRead, "ls-remote": ClassGitRead | ClassNetwork,
	// write
	"add": ClassGitWrite, "am": ClassGitWrite, "apply": ClassGitWrite | ClassModify, "bisect": ClassGitWrite,
	"checkout": ClassGitWrite, "checkout-index": ClassGitWrite | ClassWrite, "cherry-pick": ClassGitWrite,
	"clean": ClassGitWrite | ClassDelete, "clone": ClassGitWrite | ClassNetwork | ClassWrite,
	"commit": ClassGitWrite, "commit-tree": ClassGitWrite, "fetch": ClassGitWrite | ClassNetwork,
	"filter-branch": ClassGitWrite | ClassExec | ClassDelete, "format-patch": ClassGitRead | ClassWrite,
	"gc": ClassGitWrite, "hash-object": ClassGitRead, "init": ClassGitWrite | ClassWrite,
	"merge": ClassGitWrite, "merge-file": ClassGitWrite | ClassModify, "mktree": ClassGitWrite,
	"mv": ClassGitWrite | ClassModify, "notes": ClassGitWrite, "prune": ClassGitWrite | ClassDelete,
	"pull": ClassGitWrite | ClassNetwork, "push": ClassGitWrite | ClassNetwork, "read-tree": ClassGitWrite,
	"rebase": ClassGitWrite, "repack": ClassGitWrite, "replace": ClassGitWrite,
	"reset": ClassGitWrite, "restore": ClassGitWrite | ClassDelete, "revert": ClassGitWrite,
	"rm": ClassGitWrite | ClassDelete, "sparse-checkout": ClassGitWrite, "stash": ClassGitWrite,
	"submodule": ClassGitWrite | ClassNetwork, "switch": ClassGitWrite, "symbolic-ref": ClassGitWrite,
	"update-index": ClassGitWrite, "update-ref": ClassGitWrite, "worktree": ClassGitWrite | ClassWrite,
	"lfs": ClassGitWrite | ClassNetwork, "maintenance": ClassGitWrite, "fast-import": ClassGitWrite,
	"bundle": ClassGitRead | ClassWrite, "archive": ClassGitRead,
	// list-or-write, refined below
	"branch": ClassGitRead, "tag": ClassGitRead, "remote": ClassGitRead, "config": ClassGitRead,
	"reflog": ClassGitRead,
	// run other programs
	"difftool": ClassExec, "mergetool": ClassExec, "instaweb": ClassExec | ClassNetwork,
	"daemon": ClassNetwork | ClassBackground, "send-email": ClassNetwork, "web--browse": ClassExec,
	"credential": ClassExec, "request-pull": ClassGitRead | ClassNetwork,
}

// gitGlobal are git's own options (git.c, handle_options), before the
// subcommand; gitGlobalValue those that take a value after "=".
var gitGlobal = map[string]bool{
	"--exec-path": true, "--html-path": true, "--man-path": true, "--info-path": true, "-p": true, "--paginate": true,
	"-P": true, "--no-pager": true, "--no-replace-objects": true, "--git-dir": true, "--namespace": true,
	"--work-tree": true, "--super-prefix": true, "--bare": true, "-c": true, "--config-env": true,
	"--literal-pathspecs": true, "--no-literal-pathspecs": true, "--glob-pathspecs": true, "--noglob-pathspecs": true,
	"--icase-pathspecs": true, "--no-optional-locks": true, "--shallow-file": true, "-C": true, "--list-cmds": true,
	"-h": true, "--help": true, "-v": true, "--version": true,
}

var gitGlobalValue = map[string]bool{
	"--exec-path": true, "--git-dir": true, "--namespace": true, "--work-tree": true, "--super-prefix": true,
	"--config-env": true, "--list-cmds": true, "--shallow-file": false,
}

func gitConfigKeyDangerous(kv string) bool {
	k, _, _ := strings.Cut(kv, "=")
	return !safeGitConfig[strings.ToLower(k)]
}

func progGit(x *cmdCtx) {
	args := x.rest()
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !a.lit {
			x.add(ClassExec | ClassUnknown)
			return
		}
		v := a.val
		if !strings.HasPrefix(v, "-") {
			break
		}
		name, val, eq := strings.Cut(v, "=")
		if name == "-C" || name == "-c" {
			name, val, eq = v, "", false // git reads -C and -c exactly, their value in the next word
		}
		if !gitGlobal[name] || eq && !gitGlobalValue[name] {
			// git's own options are matched exactly; one it does not
			// have fails, or is newer than this table (and may take a
			// value that hides the subcommand: --shallow-file FILE)
			x.add(ClassExec | ClassUnknown)
			return
		}
		switch name {
		case "--shallow-file":
			x.add(ClassExec | ClassUnknown) // takes the next word; nobody uses it by hand
			return
		case "-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "-c", "--config-env", "--exec-path":
			if !eq && name != "--exec-path" {
				if name == "-C" || name == "-c" || !eq {
					i++
					if i >= len(args) {
						x.add(ClassGitRead)
						return
					}
					val = args[i].val
					if !args[i].lit {
						x.add(ClassExec | ClassUnknown)
					}
				}
			}
			switch name {
			case "-c":
				if gitConfigKeyDangerous(val) {
					x.add(ClassExec)
				}
			case "--config-env":
				if gitConfigKeyDangerous(val) {
					x.add(ClassExec)
				}
			case "--exec-path":
				if eq {
					x.add(ClassExec)
				}
			case "--git-dir":
				if d := strings.TrimSuffix(val, "/"); d != ".git" && !strings.HasSuffix(d, "/.git") || outsideProject(d) {
					x.add(ClassExec) // a repository whose config (core.fsmonitor, ...) any file write can supply
				}
			case "-C", "--work-tree":
				if outsideProject(val) || !args[i].lit {
					x.add(ClassExec) // another repository: its config (core.fsmonitor, core.pager, ...) runs programs
				}
			}
		case "--version", "-v", "--help", "-h", "--html-path", "--man-path", "--info-path", "--list-cmds":
			x.add(ClassGitRead)
			return
		}
	}
	if i >= len(args) {
		x.add(ClassGitRead)
		return
	}
	sub := args[i].val
	x.c.Subcommand = sub
	rest := args[i+1:]
	cls, ok := gitSub[sub]
	if !ok {
		x.add(ClassExec) // an alias or an external git-<name> program
		return
	}
	x.add(cls)
	p, _ := x.gitParse(sub, rest)
	has := p.has
	ops := literal(p.ops)
	first := ""
	if len(ops) > 0 {
		first = ops[0]
	}
	if sub == "diff" {
		// git diff --no-index A B compares two files; so does git diff A B
		// when a path lies outside the repository (git diff ~/.ssh/id_rsa
		// /dev/null prints the key)
		for _, o := range p.ops {
			if has("--no-index") || o.lit && (strings.HasPrefix(o.val, "/") || strings.HasPrefix(o.val, "~") ||
				o.val == ".." || strings.HasPrefix(o.val, "../")) {
				x.read(o)
			}
		}
	}
	if sub == "grep" {
		paths := afterDashDash(rest)
		if paths == nil && len(p.ops) > 1 && !has("e", "f") {
			paths = p.ops[1:]
		}
		if paths == nil && has("e", "f") {
			paths = p.ops
		}
		x.read(paths...)
	}
	if sub == "fsck" && has("--lost-found") {
		x.add(ClassGitWrite | ClassWrite)
		x.writeDyn(".git/lost-found")
	}
	switch sub {
	case "branch":
		if has("d", "D", "--delete") {
			x.add(ClassGitWrite | ClassDelete)
		} else if has("m", "M", "c", "C", "--move", "--copy", "--set-upstream-to", "u", "--unset-upstream", "--edit-description", "f", "--force") ||
			len(ops) > 0 && !has("l", "--list", "--contains", "--merged", "--no-merged", "--points-at") {
			x.add(ClassGitWrite)
		}
	case "tag":
		if has("d", "--delete") {
			x.add(ClassGitWrite | ClassDelete)
		} else if len(ops) > 0 && !has("l", "--list", "v", "--verify", "--contains", "--points-at") || has("--annotate", "--sign", "--message", "--force", "--file", "--local-user") {
			x.add(ClassGitWrite)
		}
	case "remote":
		switch first {
		case "", "get-url":
		case "show":
			if len(ops) > 1 && !has("n") {
				x.add(ClassNetwork) // queries the remote (unless -n)
			}
		case "update", "prune":
			x.add(ClassGitWrite | ClassNetwork)
		default:
			x.add(ClassGitWrite)
		}
	case "config":
		readOnly := has("l", "--list", "--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool") ||
			first == "get" || first == "list" || (len(ops) == 1 && !has("--unset", "--unset-all", "--add", "--replace-all", "--remove-section", "--rename-section", "e", "--edit"))
		if !readOnly {
			x.add(ClassGitWrite)
			key := first
			if key == "set" && len(ops) > 1 {
				key = ops[1]
			}
			if gitConfigKeyDangerous(key) {
				x.add(ClassExec)
			}
			if has("e", "--edit") {
				x.add(ClassExec)
			}
		}
	case "reflog":
		switch first {
		case "expire", "delete":
			x.add(ClassGitWrite | ClassDelete)
		}
	case "stash":
		switch first {
		case "list", "show":
			x.c.Classes = x.c.Classes&^ClassGitWrite | ClassGitRead
		case "drop", "clear":
			x.add(ClassDelete)
		}
	case "reset":
		if has("--hard", "--merge", "--keep") {
			x.add(ClassDelete)
		}
	case "checkout":
		if has("f", "--force") || contains(ops, ".") || containsDashDash(rest) {
			x.add(ClassDelete) // discards working-tree changes
		}
	case "restore":
		if has("S", "--staged") && !has("W", "--worktree") {
			// only the index: the working tree is not touched
			x.c.Classes &^= ClassDelete
		}
	case "switch":
		if has("f", "--force", "--discard-changes") {
			x.add(ClassDelete)
		}
	case "clean":
		if has("n", "--dry-run") {
			x.c.Classes = x.c.Classes&^(ClassGitWrite|ClassDelete) | ClassGitRead
		}
	case "gc":
		if has("--prune", "--aggressive") {
			x.add(ClassDelete)
		}
	case "apply":
		if has("--check", "--stat", "--numstat", "--summary") && !has("--apply") {
			x.c.Classes = x.c.Classes&^(ClassGitWrite|ClassModify) | ClassGitRead
		}
	case "update-ref":
		if has("d") {
			x.add(ClassDelete)
		}
	case "rebase":
		if has("x", "--exec") {
			x.add(ClassExec)
		}
	case "bisect":
		if first == "run" {
			x.add(ClassExec)
		}
	case "submodule":
		switch first {
		case "status", "summary":
			x.c.Classes = x.c.Classes&^(ClassGitWrite|ClassNetwork) | ClassGitRead
		case "foreach":
			x.add(ClassExec)
		}
	case "worktree":
		switch first {
		case "list":
			x.c.Classes = x.c.Classes&^(ClassGitWrite|ClassWrite) | ClassGitRead
		case "remove", "prune":
			x.add(ClassDelete)
		}
	case "notes":
		if first == "" || first == "list" || first == "show" {
			x.c.Classes = x.c.Classes&^ClassGitWrite | ClassGitRead
		}
	case "format-patch":
		switch {
		case has("--output-directory"): // the grammar wrote DIR/*
		case !has("--stdout"):
			x.writeDyn("*.patch")
		case len(x.c.Writes) == 0:
			x.c.Classes &^= ClassWrite // --stdout, and no --output
		}
	case "bundle":
		if first == "create" && len(ops) > 1 {
			x.write(word{val: ops[1], lit: true})
		} else {
			x.c.Classes &^= ClassWrite
		}
	case "maintenance":
		if first == "start" || first == "register" {
			// schedules git maintenance in the user's crontab or systemd timers
			x.add(ClassBackground | ClassWrite)
			x.writeDyn("git maintenance schedule")
		}
	case "rm", "mv":
		if sub == "rm" && has("--cached") {
			// only the index: the working tree keeps the files
			x.c.Classes &^= ClassDelete
			x.write(p.ops...) // their index entries
			break
		}
		x.write(p.ops...)
	case "symbolic-ref":
		if len(p.ops) <= 1 && !has("d", "--delete") {
			x.c.Classes = x.c.Classes&^ClassGitWrite | ClassGitRead // reads where HEAD points
		}
	case "hash-object":
		if has("w") {
			x.add(ClassGitWrite)
		}
	}
	gitTargets(x, sub, first, ops, p, rest)
	if p.dyn {
		x.add(ClassExec | ClassUnknown)
	}
}

// worktreeVerbs rewrite files of the working tree that the command line
// does not name.
var worktreeVerbs = map[string]bool{
	"am": true, "apply": true, "cherry-pick": true, "merge": true, "pull": true, "rebase": true,
	"revert": true, "switch": true, "read-tree": true, "checkout-index": true, "filter-branch": true,
	"bisect": true,
}

// gitTargets records the paths a git subcommand writes in the working tree.
func gitTargets(x *cmdCtx, sub, first string, ops []string, p parsed, rest []word) {
	if x.c.Classes&(ClassGitWrite|ClassWrite|ClassModify|ClassDelete) == 0 {
		return
	}
	paths := afterDashDash(rest)
	switch {
	case sub == "restore" && p.has("S", "--staged") && !p.has("W", "--worktree"):
		x.writeDyn("git index")
	case sub == "checkout" || sub == "restore":
		if paths == nil && sub == "restore" {
			paths = p.ops
		}
		if paths == nil && len(p.ops) > 1 {
			paths = p.ops[1:] // git checkout TREE-ISH PATH...
		}
		if len(paths) > 0 {
			x.write(paths...)
		} else if sub == "checkout" && !p.has("b", "B", "--orphan") {
			x.writeDyn("git working tree") // switching branches rewrites files
		}
	case sub == "reset":
		if p.has("--hard", "--merge", "--keep") {
			x.writeDyn("git working tree")
		}
	case sub == "stash":
		if first == "" || first == "push" || first == "save" || first == "pop" || first == "apply" {
			x.writeDyn("git working tree")
		}
	case sub == "clean":
		if len(p.ops) > 0 {
			x.write(p.ops...)
		} else {
			x.writeDyn("untracked files")
		}
	case sub == "clone":
		if len(ops) > 1 {
			x.write(word{val: ops[1], lit: true})
		} else {
			x.writeDyn("clone directory")
		}
	case sub == "init":
		if len(ops) > 0 {
			x.write(word{val: ops[0], lit: true})
		} else {
			x.write(word{val: ".git", lit: true})
		}
	case sub == "worktree" && first == "add" && len(ops) > 1:
		x.write(word{val: ops[1], lit: true})
	case sub == "submodule" && (first == "add" || first == "update"):
		x.writeDyn("submodule directories")
	case worktreeVerbs[sub]:
		x.writeDyn("git working tree")
	}
}

// afterDashDash returns the words after a "--", or nil.
func afterDashDash(ws []word) []word {
	for i, w := range ws {
		if w.lit && w.val == "--" {
			return ws[i+1:]
		}
	}
	return nil
}

func containsDashDash(ws []word) bool {
	for _, w := range ws {
		if w.lit && w.val == "--" {
			return true
		}
	}
	return false
}
