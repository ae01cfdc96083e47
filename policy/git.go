package policy

import (
	"path"
	"strings"

	"github.com/statewright-go/statewright/shell"
)

// gitCall returns the call as git sees it: relative paths are relative to
// its -C directories. A write of git run with --git-dir or --work-tree (a
// repository and working tree chosen on the command line) cannot be placed
// statically: outside the sandbox it is denied.
func (l *Law) gitCall(call *ToolCall, c *shell.Command) (*ToolCall, *block) {
	cc := call
	writes := c.Classes&(shell.ClassGitWrite|shell.ClassWrite|shell.ClassModify|shell.ClassDelete) != 0
	for i := 1; i < len(c.Argv); i++ {
		a := c.Argv[i]
		if !strings.HasPrefix(a, "-") {
			break // the subcommand
		}
		name, val, eq := strings.Cut(a, "=")
		switch name {
		case "-C":
			if i+1 >= len(c.Argv) {
				return cc, nil
			}
			i++
			dir := c.Argv[i]
			if cc == call {
				cp := *call
				cc = &cp
			}
			cc.Cwd = l.absPath(cc, dir)
		case "--git-dir", "--work-tree":
			if !eq {
				i++
				if i < len(c.Argv) {
					val = c.Argv[i]
				}
			}
			if writes && !call.Sandboxed {
				return cc, unknownBlock("`%s` writes through %s=%s, whose working tree and repository cannot be placed before it runs and could hold the law (git hooks and config, harness settings); outside the sandbox run git in the repository instead", commandText(c), name, val)
			}
		case "-c", "--namespace", "--super-prefix", "--config-env", "--exec-path":
			if !eq && name != "--exec-path" {
				i++
			}
		}
	}
	return cc, nil
}

// isDescription reports whether a dynamic target is the analysis's
// description of what git changes ("git working tree", "untracked
// files") rather than a path.
func isDescription(t string) bool {
	return strings.Contains(t, " ") && !strings.Contains(t, "/")
}

// gitTreeBlock decides a git command that rewrites files across the
// working tree (checkout of a branch, reset --hard, stash, clean, merge,
// pull, rebase, apply, am, ...): those files may include the law
// (.claude/, .statewright/, the store: `git clean -fdx` deletes untracked
// and ignored files). Outside the sandbox it is denied when the working
// tree holds a protected path; naming paths (`git checkout -- src/`) is
// the way through.
func (l *Law) gitTreeBlock(call *ToolCall, c *shell.Command, what string) *block {
	if call.Sandboxed {
		return nil
	}
	scope := cleanPath(call.Cwd)
	if scope == "" {
		return deferBlock("`%s` rewrites the %s, which may hold protected files; name the paths it may change", commandText(c), what)
	}
	// git works on the whole repository, wherever in it the command runs.
	for _, root := range l.repoRoots(call) {
		if underOrEqual(foldPath(scope), foldPath(root)) {
			scope = root
			break
		}
	}
	r := l.resolve(call, scope)
	var pbuf [2]string
	for _, p := range r.paths(&pbuf) {
		if hit, ok := l.protectedBy(p); ok {
			return deferBlock("`%s` rewrites the %s in %s, which is protected (%s)", commandText(c), what, p, hit)
		}
		if hit, ok := l.lawAncestor(call, p); ok {
			return deferBlock("`%s` rewrites the %s in %s, which holds %s (protected): git would change or delete the law with it. Name the paths it may change (`git checkout -- src/`, `git clean -fd src/`), or ask a person to run it", commandText(c), what, p, hit)
		}
	}
	return nil
}

// repoRoots are the working trees the call's project belongs to: the
// project directory and the parents of the host's git directories.
func (l *Law) repoRoots(call *ToolCall) []string {
	roots := l.projectRoots(call)
	if h := l.opts.Host; h != nil {
		for _, g := range h.GitDirs {
			if path.Base(g) == ".git" {
				roots = append(roots, path.Dir(g))
			}
		}
	}
	return roots
}

// gitElsewhere returns the repository a git command outside the OS sandbox
// would take its configuration from when that is not the project's own
// ("" when it is, or cannot be told): a --git-dir other than a project's
// git directory, or a working directory (the call's, a `cd` of the line,
// -C) outside the project's working trees, or inside them below a
// directory that holds a .git or is shaped like a git directory (HEAD).
// git runs the programs that configuration names (core.fsmonitor at
// `git status`, aliases, hooks, core.sshCommand, pagers), and the agent
// can write such a repository with ordinary file writes, so git there
// is Exec (docs/threat-model.md, "What holds without a sandbox").
func (l *Law) gitElsewhere(call *ToolCall, c *shell.Command) string {
	roots := l.repoRoots(call)
	dir := cleanPath(call.Cwd)
	if call.Sandboxed || len(roots) == 0 || !strings.HasPrefix(dir, "/") {
		return ""
	}
	if c.DirUnknown {
		return "a directory a `cd` of the line moves to"
	}
	if c.Dir != "" {
		dir = l.absPath(&ToolCall{Cwd: dir, ProjectDir: call.ProjectDir}, c.Dir)
	}
	gitDir := ""
	for i := 1; i < len(c.Argv); i++ {
		a := c.Argv[i]
		if !strings.HasPrefix(a, "-") {
			break // the subcommand
		}
		name, val, eq := strings.Cut(a, "=")
		switch name {
		case "-C", "--git-dir":
			if name == "-C" || !eq {
				if i++; i >= len(c.Argv) {
					return ""
				}
				val = c.Argv[i]
			}
			p := l.absPath(&ToolCall{Cwd: dir, ProjectDir: call.ProjectDir}, val)
			if name == "-C" {
				dir = p
			} else {
				gitDir = p
			}
		case "--work-tree", "-c", "--namespace", "--super-prefix", "--config-env", "--exec-path":
			if !eq && name != "--exec-path" {
				i++
			}
		}
	}
	if gitDir != "" {
		for _, r := range roots {
			if gitDir == path.Join(r, ".git") {
				return ""
			}
		}
		if h := l.opts.Host; h != nil {
			for _, g := range h.GitDirs {
				if gitDir == cleanPath(g) {
					return ""
				}
			}
		}
		return gitDir
	}
	root := ""
	for _, r := range roots {
		if underOrEqual(dir, r) && len(r) > len(root) {
			root = r
		}
	}
	if root == "" {
		return dir
	}
	// git looks for its repository from dir upwards: the first directory
	// with a .git, or that is a git directory itself.
	for d := dir; d != root && len(d) > len(root); d = path.Dir(d) {
		if l.info(call, path.Join(d, ".git")).Exists || l.info(call, path.Join(d, "HEAD")).Exists {
			return d
		}
	}
	return ""
}
