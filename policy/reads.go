package policy

import (
	"slices"
	"strings"

	"github.com/statewright-go/statewright/shell"
)

// namesOnly are programs whose read targets yield names and metadata, not
// content: listing a secret directory, counting its lines or hashing it is
// not reading a secret.
var namesOnly = map[string]bool{
	"ls": true, "stat": true, "du": true, "tree": true, "file": true, "test": true, "[": true, "[[": true,
	"realpath": true, "readlink": true, "dirname": true, "basename": true, "find": true, "exa": true, "eza": true,
	"lsattr": true, "wc": true, "sha1sum": true, "sha256sum": true, "sha512sum": true, "md5sum": true, "b2sum": true,
	"cksum": true, "sum": true, "cd": true, "pushd": true, "mkdir": true, "touch": true, "rmdir": true, "chmod": true, "chown": true,
}

// nameListFiles returns the files a names-only program reads a list of
// names from: wc, du and find's --files0-from (-files0-from), file's -f
// (--files-from), tree's --fromfile operands. The names reach the output,
// printed or in an error ("wc: 'API_KEY=…': No such file"), so the file's
// content is read.
func nameListFiles(c *shell.Command) []string {
	if !namesOnly[c.Program] || len(c.Argv) < 2 {
		return nil
	}
	argv := c.Argv
	var out []string
	fromFile := false
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		next := func() {
			if i+1 < len(argv) {
				i++
				out = append(out, argv[i])
			}
		}
		switch {
		case a == "--":
			if fromFile {
				out = append(out, argv[i+1:]...)
			}
			return out
		case a == "--files0-from" || a == "-files0-from" || c.Program == "file" && (a == "-f" || a == "--files-from"):
			next()
		case strings.HasPrefix(a, "--files0-from=") || c.Program == "file" && strings.HasPrefix(a, "--files-from="):
			out = append(out, a[strings.IndexByte(a, '=')+1:])
		case c.Program == "file" && strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "f"):
			// clustered short options: -bf LIST, -fLIST
			if j := strings.IndexByte(a, 'f'); j == len(a)-1 {
				next()
			} else {
				out = append(out, a[j+1:])
			}
		case c.Program == "tree" && (a == "--fromfile" || strings.HasPrefix(a, "--fromfile=")):
			fromFile = true
		case fromFile && !strings.HasPrefix(a, "-"):
			out = append(out, a)
		}
	}
	if fromFile && len(out) == 0 {
		out = append(out, "-")
	}
	return slices.DeleteFunc(out, func(s string) bool { return s == "-" })
}

// recursive reports the directories c reads recursively, the way it walks
// them, and whether it reads recursively at all, honouring the program's
// defaults (rg and ag skip hidden and ignored files; grep -r does not).
func recursive(c *shell.Command) (roots []string, w Walk, ok bool) {
	argv := c.Argv
	if len(argv) == 0 {
		return nil, w, false
	}
	switch c.Program {
	case "grep", "egrep", "fgrep", "rgrep", "zgrep":
		return grepRoots(argv, c.Program == "rgrep")
	case "rg", "ripgrep", "ag", "ack", "ack-grep", "pt", "ugrep", "ug":
		return searcherRoots(c.Program, argv)
	case "find", "bfs":
		return findRoots(argv)
	case "cp", "scp", "rsync", "zip", "diff", "tar", "bsdtar", "7z", "7za", "cpio", "pax", "rclone":
		return copierRoots(c, argv)
	case "git":
		return gitRoots(c, argv)
	}
	return nil, w, false
}

// shortOpts splits argv[1:] into options and operands with a getopt-style
// scan: valueShort are short options that take a value, valueLong long
// ones without "=". "--" ends options.
func shortOpts(argv []string, valueShort string, valueLong []string) (opts, ops []string) {
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "--":
			return opts, append(ops, argv[i+1:]...)
		case strings.HasPrefix(a, "--"):
			opts = append(opts, a)
			if !strings.Contains(a, "=") {
				for _, v := range valueLong {
					if a == "--"+v && i+1 < len(argv) {
						i++
						opts = append(opts, argv[i])
						break
					}
				}
			}
		case strings.HasPrefix(a, "-") && a != "-":
			for j := 1; j < len(a); j++ {
				opts = append(opts, "-"+string(a[j]))
				if strings.IndexByte(valueShort, a[j]) >= 0 {
					if j+1 < len(a) {
						opts = append(opts, a[j+1:])
					} else if i+1 < len(argv) {
						i++
						opts = append(opts, argv[i])
					}
					break
				}
			}
		default:
			ops = append(ops, a)
		}
	}
	return opts, ops
}

func hasOpt(opts []string, names ...string) bool {
	for _, o := range opts {
		for _, n := range names {
			if o == n || strings.HasPrefix(n, "--") && strings.HasPrefix(o, n+"=") {
				return true
			}
		}
	}
	return false
}

func grepRoots(argv []string, always bool) ([]string, Walk, bool) {
	opts, ops := shortOpts(argv, "efmABCdDX", []string{"regexp", "file", "max-count", "after-context", "before-context",
		"context", "directories", "devices", "label", "include", "exclude", "exclude-dir", "exclude-from", "binary-files", "color", "colour"})
	rec := always || hasOpt(opts, "-r", "-R", "--recursive", "--dereference-recursive", "--directories=recurse", "--recurse")
	for i, o := range opts {
		if (o == "-d" || o == "--directories") && i+1 < len(opts) && opts[i+1] == "recurse" {
			rec = true
		}
	}
	if !rec {
		return nil, Walk{}, false
	}
	if !hasOpt(opts, "-e", "-f", "--regexp", "--file") && len(ops) > 0 {
		ops = ops[1:] // the pattern
	}
	if len(ops) == 0 {
		ops = []string{"."}
	}
	return ops, Walk{Hidden: true, Ignored: true, Follow: hasOpt(opts, "-R", "--dereference-recursive")}, true
}

func searcherRoots(prog string, argv []string) ([]string, Walk, bool) {
	opts, ops := shortOpts(argv, "efgjmABCMtTErd", []string{"regexp", "file", "glob", "iglob", "threads", "max-count",
		"after-context", "before-context", "context", "max-columns", "type", "type-not", "encoding", "replace",
		"max-depth", "maxdepth", "ignore-file", "pre", "pre-glob", "sort", "sortr", "path-separator", "color", "colors",
		"engine", "type-add", "type-clear", "max-filesize", "dfa-size-limit", "regex-size-limit", "context-separator", "field-match-separator"})
	if hasOpt(opts, "--files", "--type-list", "--version", "-V", "--help", "-h") && prog != "ack" {
		return nil, Walk{}, false // names only
	}
	if !hasOpt(opts, "-e", "-f", "--regexp", "--file") && len(ops) > 0 {
		ops = ops[1:]
	}
	if len(ops) == 0 {
		ops = []string{"."}
	}
	u := 0
	for _, o := range opts {
		if o == "-u" {
			u++
		}
	}
	w := Walk{
		Hidden:  hasOpt(opts, "--hidden", "-.", "--unrestricted") || u >= 2,
		Ignored: hasOpt(opts, "--no-ignore", "--no-ignore-vcs", "--unrestricted", "--skip-vcs-ignores", "-U") || u >= 1,
		Follow:  hasOpt(opts, "-L", "--follow"),
	}
	if prog == "ack" || prog == "ack-grep" || prog == "ugrep" || prog == "ug" {
		w.Hidden, w.Ignored = true, true
	}
	return ops, w, true
}

func findRoots(argv []string) ([]string, Walk, bool) {
	follow := false
	var roots []string
	i := 1
	for ; i < len(argv); i++ {
		a := argv[i]
		if a == "-L" || a == "-follow" {
			follow = true
			continue
		}
		if a == "-H" || a == "-P" || strings.HasPrefix(a, "-O") || a == "-D" {
			if a == "-D" {
				i++
			}
			continue
		}
		break
	}
	for ; i < len(argv); i++ {
		a := argv[i]
		if strings.HasPrefix(a, "-") || a == "(" || a == "!" || a == "\\(" {
			break
		}
		roots = append(roots, a)
	}
	reads := false
	for ; i < len(argv); i++ {
		switch argv[i] {
		case "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls":
			reads = true
		case "-L", "-follow":
			follow = true
		}
	}
	if !reads {
		return nil, Walk{}, false
	}
	if len(roots) == 0 {
		roots = []string{"."}
	}
	return roots, Walk{Hidden: true, Ignored: true, Follow: follow}, true
}

// gitRoots: git commands that read files outside the index, below the
// paths they are given: diff --no-index (directories recursively, like
// diff -r) and grep --no-index or --untracked (the working directory when
// no path is given; ignored files too unless --exclude-standard).
func gitRoots(c *shell.Command, argv []string) ([]string, Walk, bool) {
	sub := -1
	for i := 1; i < len(argv); i++ {
		if argv[i] == c.Subcommand {
			sub = i
			break
		}
	}
	if sub < 0 || c.Subcommand != "diff" && c.Subcommand != "grep" {
		return nil, Walk{}, false
	}
	rest := argv[sub:]
	opts, ops := shortOpts(rest, "efmABCOU", []string{"regexp", "file", "max-count", "after-context", "before-context", "context", "max-depth", "threads", "open-files-in-pager", "output", "unified", "src-prefix", "dst-prefix", "line-prefix", "word-diff-regex", "color-moved", "anchored", "diff-algorithm", "relative", "ignore-matching-lines"})
	w := Walk{Hidden: true, Ignored: true}
	switch c.Subcommand {
	case "diff":
		if !hasOpt(opts, "--no-index") {
			return nil, Walk{}, false
		}
		return ops, w, len(ops) > 0
	default:
		if !hasOpt(opts, "--no-index", "--untracked") {
			return nil, Walk{}, false
		}
		if hasOpt(opts, "--exclude-standard") {
			w.Ignored = false
		}
		var roots []string
		for i, a := range rest {
			if a == "--" {
				roots = append(roots, rest[i+1:]...)
				break
			}
		}
		if roots == nil && !hasOpt(opts, "-e", "--regexp", "-f", "--file") && len(ops) > 1 {
			roots = ops[1:]
		} else if roots == nil && hasOpt(opts, "-e", "--regexp", "-f", "--file") {
			roots = ops
		}
		if len(roots) == 0 {
			roots = []string{"."}
		}
		return roots, w, true
	}
}

// copierRoots: programs that copy or archive a tree read everything below
// the directories they are given, when they recurse.
func copierRoots(c *shell.Command, argv []string) ([]string, Walk, bool) {
	opts, _ := shortOpts(argv, "", nil)
	rec := false
	follow := hasOpt(opts, "-L", "--dereference", "--copy-links", "-h")
	switch c.Program {
	case "tar", "bsdtar", "7z", "7za", "cpio", "pax", "rclone":
		rec = true
	case "zip":
		rec = hasOpt(opts, "-r", "-R", "--recurse-paths")
	case "diff":
		rec = hasOpt(opts, "-r", "--recursive")
	default:
		rec = hasOpt(opts, "-r", "-R", "-a", "--recursive", "--archive")
	}
	if !rec {
		return nil, Walk{}, false
	}
	var roots []string
	for _, t := range c.Reads {
		if !t.Dynamic {
			roots = append(roots, t.Path)
		}
	}
	return roots, Walk{Hidden: true, Ignored: true, Follow: follow}, len(roots) > 0
}
