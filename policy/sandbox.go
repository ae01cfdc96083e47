package policy

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/statewright-go/statewright/sandbox"
	"github.com/statewright-go/statewright/workflow"
)

// ProtectedTrees returns the trees that stay read-only under the OS sandbox
// in every phase, for a project and a home directory: the harness
// configuration directories and their user-level twins, MCP and opencode
// configuration, statewright's own directories, shell rc files, and git's
// configuration and hooks. They are the literal entries of HostFences'
// protected set (one definition, fences.go), concrete paths: the sandbox
// binds them, and missing ones are skipped, never created. The static law
// guards the same set, on resolved paths, in every phase too.
func ProtectedTrees(project, home string) []string {
	return literalFences(HostFences(&Host{ProjectDir: project, Home: home}, SecretRules{}).Protected)
}

// SecretPaths returns the concrete paths hidden from sandboxed commands by
// default (docs/sandbox.md, the hidden set): statewright's credentials, SSH and cloud
// credentials, the GitHub CLI's tokens, and the harnesses' credentials and
// transcripts: the literal entries of HostFences' secret set under home.
// Pattern entries (.env*, *.pem at any depth) are not concrete paths; the
// static law denies reading them.
func SecretPaths(home string) []string {
	if home == "" {
		return nil
	}
	return literalFences(HostFences(&Host{Home: home}, SecretRules{}).Secret)
}

func literalFences(fs []Fence) []string {
	var out []string
	for _, f := range fs {
		if !f.Pattern {
			out = append(out, f.Path)
		}
	}
	return out
}

// IsSecret reports whether the law keeps the real path p from every read
// (a host or workflow secret: .env files, PEM keys, credentials). The
// runtime hides such files of the project from sandboxed commands, which
// the static law cannot see into.
func (l *Law) IsSecret(p string) bool { return l.isSecretPath(p) }

// runnerOutputs are the project-relative directories test runners write
// (build trees, caches, coverage), writable wherever the phase has a shell
// tool. Only those that exist are bound (nothing is created in the user's
// tree); a runner that cannot write its cache carries on without it.
var runnerOutputs = []string{
	"target", ".pytest_cache", "__pycache__", "coverage", "htmlcov", ".coverage", ".nyc_output",
	".vite", "node_modules/.vite", "node_modules/.cache", ".mypy_cache", ".ruff_cache", ".tox",
}

// SandboxEnv says where a profile's paths are on this host. The caller
// (the hook, the launcher) fills it; SandboxProfile does no I/O.
type SandboxEnv struct {
	// ProjectDir is the project root (absolute).
	ProjectDir string
	// Home is the user's home directory.
	Home string
	// Store is the store file ("" for a PostgreSQL store); it and its side
	// files are hidden.
	Store string
	// Secrets are further hidden paths: the operator token and tokens
	// file, the signing key, the decider's socket directory.
	Secrets []string
	// SessionDir is the session's own directory (its /tmp), created by
	// the caller; it is writable. Empty: none (a fresh /tmp and no caches).
	SessionDir string
	// CacheDir holds the build and test caches sandboxed commands write
	// (GOCACHE, GOMODCACHE, npm, pip, cargo): never the user's own, so
	// nothing planted there runs in the user's unsandboxed builds
	// (docs/sandbox.md, "Caches"). Empty: SessionDir/cache, per session. The hooks and
	// the agent share one per user (sandbox.DefaultRoot/cache), since a cold
	// Go build cache costs minutes per session; see docs/sandbox.md.
	CacheDir string
	// CallDir is the call's own writable directory ("" for none).
	CallDir string
	// GoModCache is the user's real Go module cache. Commands never write
	// it: they get a per-session GOMODCACHE that Go fills from it through
	// GOPROXY=file://… (and from GoProxy where the phase grants Network).
	GoModCache string
	// GoProxy is the user's GOPROXY, used after the real cache where the
	// phase grants Network.
	GoProxy string
}

// SandboxProfile derives the OS sandbox profile of a phase (docs/sandbox.md):
// the tree readable; the phase's write scope writable (the project, or the
// literal directories of allowed_paths, when the phase can edit; runners'
// outputs where it has a shell; the sandbox block's writable paths), plus
// the session's tmp and caches; the protected trees read-only over that;
// secrets, operator credentials and the store hidden; the network only
// where the phase grants Network, and only through the proxy (the hosts of
// its domain list) where the phase names domains.
//
// State "" is a session with no run (dormant): the project writable and the
// network open, as without statewright, but the protected trees read-only
// and the secrets and store hidden, as in every phase (self-protection
// holds when no run is active).
func (l *Law) SandboxProfile(state string, env SandboxEnv) (sandbox.Profile, error) {
	if state == "" {
		return sandboxProfile(nil, l.sandboxProtected(), l.gitDirs(env), env), nil
	}
	cs, ok := l.states[state]
	if !ok {
		return sandbox.Profile{}, fmt.Errorf("the workflow has no state %q", state)
	}
	return sandboxProfile(cs, l.sandboxProtected(), l.gitDirs(env), env), nil
}

// gitDirs are the project's git directories: the host's (a worktree's
// gitdir and common directory), else the project's .git.
func (l *Law) gitDirs(env SandboxEnv) []string {
	if h := l.opts.Host; h != nil && len(h.GitDirs) > 0 && h.ProjectDir == env.ProjectDir {
		return h.GitDirs
	}
	if env.ProjectDir == "" {
		return nil
	}
	return []string{path.Join(env.ProjectDir, ".git")}
}

// sandboxProtected are the protected paths the sandbox keeps read-only
// besides ProtectedTrees: Options.ProtectedPaths and the literal trees of
// the law's own protected set, which holds what the runtime found on the
// host (the PATH directories under home, the git directories of a
// worktree, the sandbox's root, the decider's directory): one set for
// both walls.
func (l *Law) sandboxProtected() []string {
	return append(slices.Clone(l.opts.ProtectedPaths), literalFences(l.fences.Protected)...)
}

func sandboxProfile(cs *compiledState, protectedPaths, gitDirs []string, env SandboxEnv) sandbox.Profile {
	var (
		state                   string
		write, network, shell   bool
		final                   bool
		allowedPath, deniedPath []pathGlob
		sb                      *workflow.SandboxPolicy
	)
	if cs == nil {
		write, network, shell = true, true, true
	} else {
		state, final = cs.name, cs.final
		write, network, shell = cs.caps&capWrite != 0, cs.caps&capNetwork != 0, cs.anyTool || cs.allowed.tools&bit(kBash) != 0
		allowedPath, deniedPath, sb = cs.allowedPath, cs.deniedPath, cs.st.Sandbox
	}
	p := sandbox.Profile{Phase: state, Network: network && !final}
	if cs != nil && !final {
		p.Proxy, p.Network = cs.rules.netPolicy(p.Network)
	}
	if env.ProjectDir != "" {
		p.Visible = []string{env.ProjectDir}
	}
	abs := func(s string) string {
		switch {
		case s == "~" || strings.HasPrefix(s, "~/"):
			if env.Home == "" {
				return ""
			}
			return path.Join(env.Home, strings.TrimPrefix(s, "~"))
		case strings.HasPrefix(s, "/"):
			return path.Clean(s)
		case env.ProjectDir == "":
			return ""
		}
		return path.Join(env.ProjectDir, s)
	}
	add := func(list *[]string, s string) {
		if a := abs(s); a != "" {
			*list = append(*list, a)
		}
	}

	if !final {
		if write {
			if len(allowedPath) == 0 {
				add(&p.Writable, env.ProjectDir)
			}
			for _, g := range allowedPath {
				add(&p.Writable, literalDir(g.pattern))
			}
			for _, g := range deniedPath {
				if !hasMeta(g.pattern) {
					add(&p.ReadOnly, g.pattern)
				}
			}
		}
		if shell {
			for _, o := range runnerOutputs {
				add(&p.Writable, o)
			}
		}
		if cs != nil && cs.caps&capGitWrite != 0 {
			// GitWrite: git writes its repository (objects, refs, the
			// index, HEAD and its lock files) whether or not the phase
			// may edit the tree. Its configuration and hooks stay
			// read-only, and a name of the law it reads that does not
			// exist yet (.git/commondir) is taken out after the command
			// if the command created it (sandbox.Absent).
			p.Writable = append(p.Writable, gitDirs...)
		}
		if sb != nil {
			for _, w := range sb.Writable {
				add(&p.Writable, w)
			}
		}
	}
	if sb != nil {
		for _, h := range sb.Hidden {
			add(&p.Hidden, h)
		}
	}
	if cs != nil && cs.view != nil {
		// The phase's read fences that are plain trees (literal
		// denied_paths, Read(...) deny rules): hidden, as secrets are.
		p.Hidden = append(p.Hidden, cs.view.phase.literal...)
	}

	// The phase's writable paths never reach into a protected tree (a
	// deeper writable mount would win over the read-only one).
	protected := ProtectedTrees(env.ProjectDir, env.Home)
	for _, pp := range protectedPaths {
		add(&protected, pp)
	}
	if cs != nil && cs.caps&capGitWrite == 0 && env.ProjectDir != "" {
		// Without GitWrite the repository is read-only as a whole: git
		// reads more than .git/config and .git/hooks (a commondir or
		// config.worktree planted beside them redirects its configuration,
		// and names that do not exist yet cannot be bound), and the static
		// law denies git writes in such a phase anyway. git status still
		// runs (it refreshes the index only when it can).
		protected = append(protected, path.Join(env.ProjectDir, ".git"))
	}
	p.Writable = slices.DeleteFunc(p.Writable, func(w string) bool {
		for _, t := range protected {
			if w == t || strings.HasPrefix(w, t+"/") {
				return true
			}
		}
		return false
	})
	p.ReadOnly = append(p.ReadOnly, protected...)

	if env.SessionDir != "" {
		s := env.SessionDir
		c := env.CacheDir
		if c == "" {
			c = path.Join(s, "cache")
		}
		p.Tmp = path.Join(s, "tmp")
		p.Writable = append(p.Writable, c)
		p.Env = append(p.Env,
			"TMPDIR=/tmp",
			"XDG_CACHE_HOME="+path.Join(c, "xdg"),
			"GOCACHE="+path.Join(c, "go-build"),
			"GOMODCACHE="+path.Join(c, "gomod"),
			"npm_config_cache="+path.Join(c, "npm"),
			"PIP_CACHE_DIR="+path.Join(c, "pip"),
			"CARGO_HOME="+path.Join(c, "cargo"),
		)
		var proxies []string
		if env.GoModCache != "" {
			proxies = append(proxies, "file://"+path.Join(env.GoModCache, "cache", "download"))
		}
		if p.Network {
			gp := env.GoProxy
			if gp == "" {
				gp = "https://proxy.golang.org,direct"
			}
			proxies = append(proxies, gp)
		} else {
			proxies = append(proxies, "off")
		}
		p.Env = append(p.Env, "GOPROXY="+strings.Join(proxies, ","))
		if !p.Network {
			p.Env = append(p.Env, "GOSUMDB=off")
		}
		// Other sessions' directories stay read-only.
		p.ReadOnly = append(p.ReadOnly, path.Dir(s))
	}
	if env.CallDir != "" {
		p.Writable = append(p.Writable, env.CallDir)
	}

	p.Hidden = append(p.Hidden, SecretPaths(env.Home)...)
	for _, s := range env.Secrets {
		add(&p.Hidden, s)
	}
	if env.Store != "" && !strings.Contains(env.Store, "://") {
		st := abs(env.Store)
		p.Hidden = append(p.Hidden, st, st+"-wal", st+"-shm", st+"-journal")
	}
	return p
}

// literalDir returns the directory part of a glob before its first
// metacharacter ("src/**/*.go" -> "src", "**/*.go" -> "", "docs/a.md" ->
// "docs/a.md").
func literalDir(pattern string) string {
	if !hasMeta(pattern) {
		return pattern
	}
	i := strings.IndexAny(pattern, "*?[{\\")
	d := pattern[:i]
	if j := strings.LastIndex(d, "/"); j >= 0 {
		return d[:j]
	}
	return ""
}

func hasMeta(p string) bool { return strings.ContainsAny(p, "*?[{\\") }

// SandboxLesson teaches what to do about a path the sandbox kept from a
// command in state (docs/sandbox.md, "Lessons"): that it is protected in every phase,
// or which events lead, in one step, to a phase whose profile lets the
// path be written. p is absolute.
func (l *Law) SandboxLesson(state, p string, env SandboxEnv) string {
	cur, err := l.SandboxProfile(state, env)
	if err != nil {
		return ""
	}
	where := "phase '" + state + "'"
	if state == "" {
		where = "this session"
	}
	if under(p, cur.Hidden) {
		return fmt.Sprintf("[statewright] The OS sandbox of %s hides %s (a secret or statewright's own state): commands never see it, in any phase.", where, p)
	}
	if under(p, ProtectedTrees(env.ProjectDir, env.Home)) || under(p, l.sandboxProtected()) {
		return fmt.Sprintf("[statewright] The OS sandbox keeps %s read-only in every phase: it is part of the law (harness settings, hooks, git configuration, shell rc files or statewright's own files). A person changes it, outside the agent.", p)
	}
	var events []string
	if st := l.def.States[state]; st != nil {
		for _, ev := range sortedEvents(st) {
			for _, target := range transitionTargets(st.On[ev]) {
				prof, err := l.SandboxProfile(target, env)
				if err == nil && writable(p, &prof) {
					events = append(events, ev+" (to '"+target+"')")
					break
				}
			}
		}
	}
	msg := fmt.Sprintf("[statewright] The OS sandbox of %s keeps %s read-only: this phase may not write there.", where, p)
	if len(events) > 0 {
		msg += " It is writable after " + strings.Join(events, ", ") + "."
	} else {
		msg += " No single event leads to a phase where it is writable."
	}
	return msg
}

func sortedEvents(st *workflow.State) []string {
	out := make([]string, 0, len(st.On))
	for ev := range st.On {
		out = append(out, ev)
	}
	slices.Sort(out)
	return out
}

func transitionTargets(t *workflow.Transition) []string {
	if t == nil {
		return nil
	}
	var out []string
	if t.Target != "" {
		out = append(out, t.Target)
	}
	for _, b := range t.Branches {
		if b != nil && b.Target != "" {
			out = append(out, b.Target)
		}
	}
	return out
}

// writable reports whether a profile lets p be written.
func writable(p string, prof *sandbox.Profile) bool {
	return under(p, prof.Writable) && !under(p, prof.ReadOnly) && !under(p, prof.Hidden)
}

// under reports whether p is one of trees or below one.
func under(p string, trees []string) bool {
	for _, t := range trees {
		if t != "" && (p == t || strings.HasPrefix(p, strings.TrimSuffix(t, "/")+"/")) {
			return true
		}
	}
	return false
}

// netPolicy is the phase's network in the OS sandbox (docs/policy.md,
// "Domains"), given whether its capabilities grant Network: nil and
// network unchanged where the phase names no domains; else no direct
// network, and the proxy with the phase's list: allowed_domains (which
// replaces the capability), the hosts of WebFetch(domain:…) allow rules
// (which grant without it), and WebFetch(domain:…) deny rules (which hold
// under Network too). A phase whose list grants nothing gets no network.
func (rs *ruleSet) netPolicy(network bool) (*sandbox.NetPolicy, bool) {
	if rs == nil {
		return nil, network
	}
	np := &sandbox.NetPolicy{Allow: rs.grantDomains, Deny: rs.denyDomains}
	switch {
	case rs.restrict:
	case network && len(rs.denyDomains) > 0:
		np.Allow, np.AllowAll = nil, true
	case network:
		return nil, true
	}
	if !np.AllowAll && len(np.Allow) == 0 {
		return nil, false
	}
	return np, false
}
