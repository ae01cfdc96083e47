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
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
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
	h.GitDirs = gitDirs(h.ProjectDir)
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
	if f := getenv("CLAUDE_ENV_FILE"); filepath.IsAbs(f) {
		h.EnvFile = realPath(f)
	}
	return h
}

// realPath resolves p's symbolic links ("" stays ""; a missing tail is kept).
func realPath(p string) string {
	if p == "" || !filepath.IsAbs(p) {
		return p
	}
	return resolve(p).Real
}

// gitDirs finds the git directories of the repository holding dir: its
// .git directory, or for a linked worktree (a .git file) the worktree's
// gitdir and the common directory, whose config and hooks apply.
func gitDirs(dir string) []string {
	for d := dir; d != "" && d != "/" && d != "."; d = path.Dir(d) {
		g := path.Join(d, ".git")
		fi, err := os.Stat(g)
		if err != nil {
			continue
		}
		if fi.IsDir() {
			return []string{g}
		}
		b, err := os.ReadFile(g)
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
		gd = realPath(gd)
		out := []string{gd}
		if c, err := os.ReadFile(path.Join(gd, "commondir")); err == nil {
			cd := strings.TrimSpace(string(c))
			if !filepath.IsAbs(cd) {
				cd = path.Join(gd, cd)
			}
			out = append(out, realPath(cd))
		}
		return out
	}
	return nil
}
