package runtime

import (
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/statewright-go/statewright/internal/hookwire"
	"github.com/statewright-go/statewright/policy"
)

// HostOptions name what DiscoverHost cannot find by itself.
type HostOptions struct {
	// ProjectDir is the project root (default: the working directory).
	ProjectDir string
	// Store is the SQLite store file ("" for none or PostgreSQL).
	Store string
	// Binary is the statewright binary the hooks run (default: this executable).
	Binary string
	// Getenv reads the environment (default os.Getenv).
	Getenv func(string) string
}

// DiscoverHost finds where the law and the secrets live on this host: the
// home and configuration directories, the project and its git directories
// (a worktree's gitdir and common directory too), the store, the binary
// and CLAUDE_ENV_FILE, every path absolute and resolved. It is the input
// of policy.HostFences, for the static law and the sandbox alike.
func DiscoverHost(o HostOptions) *policy.Host {
	return discoverHost(o, &hostFS{})
}

func discoverHost(o HostOptions, f *hostFS) *policy.Host {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	realPath := f.realPath
	h := &policy.Host{}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	h.Home = realPath(home)
	if c := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(c) {
		h.ConfigHome = realPath(c)
	} else if h.Home != "" {
		h.ConfigHome = path.Join(h.Home, ".config")
	}
	pd := o.ProjectDir
	if pd == "" {
		pd, _ = os.Getwd()
	}
	h.ProjectDir = realPath(pd)
	h.GitDirs = f.gitDirs(h.ProjectDir)
	for _, g := range h.GitDirs {
		// The linked worktrees' own files that point git at a
		// configuration: rewritten, the person's next git in that
		// worktree reads another config (core.fsmonitor runs programs).
		ents, _ := f.readDir(path.Join(g, "worktrees"))
		for _, e := range ents {
			if e.IsDir() {
				for _, f := range []string{"commondir", "config.worktree"} {
					h.Protected = append(h.Protected, path.Join(g, "worktrees", e.Name(), f))
				}
			}
		}
	}
	h.Store = realPath(o.Store)
	if h.Store != "" && filepath.IsAbs(h.Store) {
		// The registry of harness processes (internal/person) beside it.
		h.Protected = append(h.Protected, path.Join(path.Dir(h.Store), "harnesses"))
	}
	cache := getenv("XDG_CACHE_HOME")
	if !filepath.IsAbs(cache) && h.Home != "" {
		cache = path.Join(h.Home, ".cache")
	}
	if filepath.IsAbs(cache) {
		// The sandbox's root (sandbox.DefaultRoot): its availability
		// record (a forged "unavailable" would turn every later command,
		// a test run included, into an unsandboxed one), the calls'
		// profiles and results, the sessions' tmp and the shared caches.
		// Sandboxed commands write their tmp and caches through the
		// sandbox's binds; nothing else of the agent's may.
		h.Protected = append(h.Protected, path.Join(realPath(cache), "statewright"))
	}
	bin := o.Binary
	if bin == "" {
		bin, _ = os.Executable()
	}
	h.Binary = realPath(bin)
	if h.Binary != "" && filepath.IsAbs(h.Binary) {
		// The thin hook client and the slim sandbox launcher beside the
		// binary run the hooks and the sandboxed commands (whether they
		// are installed yet or not).
		for _, name := range []string{hookwire.ClientName, "statewright-sandbox"} {
			h.Protected = append(h.Protected, path.Join(path.Dir(h.Binary), name))
		}
	}
	if d := hookwire.Dir(getenv); d != "" {
		// The local decider's socket and key: hidden in the sandbox, never
		// read or changed by the agent (docs/sandbox.md, docs/hooks.md).
		d = realPath(d)
		h.Protected = append(h.Protected, d)
		h.Secrets = append(h.Secrets, d)
	}
	if ef := getenv("CLAUDE_ENV_FILE"); filepath.IsAbs(ef) {
		h.EnvFile = realPath(ef)
	}
	h.Protected = append(h.Protected, f.pathDirs(getenv("PATH"), h.Home, h.ProjectDir)...)
	return h
}

// pathDirs returns the directories on PATH where a program the agent
// planted would run later in the person's own shell, unconfined (a git in
// ~/.pyenv/shims runs at their next commit, with their token): those under
// the home directory (~/.pyenv/shims, ~/.npm-global/bin, ~/.nvm/…/bin,
// whether they exist yet or not) and any other this process can write (a
// Homebrew prefix; /usr/local/bin and /usr/bin when it runs as root). The
// project's own (node_modules/.bin) are its code, unless the project is
// the home directory (or holds it); a directory that holds the project or
// is the home directory itself is left out: it cannot be protected as a
// tree without protecting the project.
func (f *hostFS) pathDirs(pathList, home, project string) []string {
	var out []string
	for _, d := range filepath.SplitList(pathList) {
		if !filepath.IsAbs(d) {
			continue
		}
		r := f.realPath(d)
		if r == filepath.Dir(r) || r == home || project != "" && within(project, r) {
			continue
		}
		if project != "" && within(r, project) && !(home != "" && within(home, project)) {
			continue // the project's own (node_modules/.bin), unless the project holds the home directory
		}
		if home != "" && home != filepath.Dir(home) && within(r, home) || f.writable(r) {
			out = append(out, r)
		}
	}
	return out
}

// gitDirs finds the git directories of the repository holding dir: its
// .git directory, or for a linked worktree (a .git file) the worktree's
// gitdir and the common directory, whose config and hooks apply.
func (f *hostFS) gitDirs(dir string) []string {
	for d := dir; d != "" && d != "/" && d != "."; d = path.Dir(d) {
		g := path.Join(d, ".git")
		fi, err := f.stat(g)
		if err != nil {
			continue
		}
		if fi.IsDir() {
			return []string{g}
		}
		b, err := f.readFile(g)
		if err != nil {
			return []string{g}
		}
		gd, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
		if !ok {
			return []string{g}
		}
		gd = strings.TrimSpace(gd)
		if !filepath.IsAbs(gd) {
			gd = path.Join(d, gd)
		}
		gd = f.realPath(gd)
		out := []string{gd}
		if c, err := f.readFile(path.Join(gd, "commondir")); err == nil {
			cd := strings.TrimSpace(string(c))
			if !filepath.IsAbs(cd) {
				cd = path.Join(gd, cd)
			}
			out = append(out, f.realPath(cd))
		}
		return out
	}
	return nil
}

// within reports whether p is dir or below it (both clean, absolute).
func within(p, dir string) bool {
	sep := string(filepath.Separator)
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, sep)+sep)
}
