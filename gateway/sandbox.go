package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/statewright-go/statewright/internal/mcpio"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/sandbox"
)

// Sandbox runs stdio upstreams under the OS sandbox (docs/sandbox.md, "Per
// harness"): each client session gets its own process of each stdio
// upstream, spawned under the profile of the phase its calls are decided
// in, and stopped when the run leaves that phase (the next call spawns one
// under the new phase's profile and says so). The gateway's own process of
// each upstream, which lists its tools, prompts and resources and serves
// prompts/get and resources/read, runs under Listing. HTTP upstreams are
// other processes; they are not sandboxed.
type Sandbox struct {
	// Avail is bubblewrap here (sandbox.Detect). When it is not OK the
	// upstreams run as without a sandbox, and Status says why.
	Avail sandbox.Availability
	// Env says where the profiles' paths are (harness.HostEnv); the
	// session and cache directories are filled per session from Root.
	Env policy.SandboxEnv
	// Root holds the sessions' directories (their /tmp) and the shared
	// build caches (sandbox.DefaultRoot); "" for none (a fresh /tmp).
	Root string
	// Profile derives the profile of a session's current phase with env
	// (runtime.Service.SandboxProfile).
	Profile func(ctx context.Context, session string, env policy.SandboxEnv) (*sandbox.Profile, error)
	// Listing is the profile of the gateway's own process of each
	// upstream (ListingProfile).
	Listing *sandbox.Profile
}

// ListingProfile is the profile of the gateway's own process of each
// upstream, from the dormant profile (the secrets and the store hidden, the
// protected trees read-only): nothing writable but a fresh /tmp. Its
// network is the dormant profile's (open), so an upstream can list what a
// remote service offers.
func ListingProfile(dormant *sandbox.Profile) *sandbox.Profile {
	p := *dormant
	p.Phase = "gateway listing"
	p.Writable, p.Tmp = nil, ""
	return &p
}

// active reports whether stdio upstreams run sandboxed.
func (sb *Sandbox) active() bool { return sb != nil && sb.Avail.OK() }

// String says how the upstreams run, for status and logs.
func (sb *Sandbox) String() string {
	switch {
	case sb == nil:
		return "off"
	case sb.Avail.OK():
		return "bubblewrap, per session and phase (" + sb.Avail.Bwrap + ")"
	}
	return "none: " + sb.Avail.Why + "; upstream servers run unsandboxed"
}

// SetSandbox makes the manager run its stdio upstreams under sb (nil: as
// without a sandbox). Call it before Start.
func (m *Manager) SetSandbox(sb *Sandbox) { m.sb = sb }

// Sandbox returns the manager's sandbox (nil when none was set).
func (m *Manager) Sandbox() *Sandbox { return m.sb }

// sandboxedCommand returns the command that runs the upstream's server
// under p, and a func that stops what runs beside it (the network proxy
// of a profile that has one).
func (u *upstream) sandboxedCommand(p *sandbox.Profile) (*exec.Cmd, func(), error) {
	c := u.cfg
	dir := c.Dir
	if dir == "" {
		dir = u.m.dir
	}
	prog := c.Command
	if !strings.Contains(prog, "/") {
		p, err := exec.LookPath(prog)
		if err != nil {
			return nil, nil, fmt.Errorf("gateway: upstream %q: %w", c.Name, err)
		}
		prog = p
	}
	if !filepath.IsAbs(prog) {
		prog = filepath.Join(dir, prog) // as os/exec runs it: relative to the directory
	}
	if abs, err := filepath.Abs(prog); err == nil {
		prog = abs
	}
	env := os.Environ()
	for _, k := range slices.Sorted(maps.Keys(c.Env)) {
		env = append(env, k+"="+expandEnv(c.Env[k]))
	}
	q := *p
	q.Visible = append(append([]string{}, p.Visible...), programTrees(prog)...)
	ctx, cancel := context.WithCancel(context.Background())
	cmd, err := sandbox.Command(ctx, u.m.sb.Avail, &q, dir, append([]string{prog}, c.Args...), sandbox.StripEnv(env))
	if err != nil {
		cancel()
		return nil, nil, fmt.Errorf("gateway: upstream %q under the sandbox: %w", c.Name, err)
	}
	// The server's process is bubblewrap's child, the PID 1 of its
	// namespace: when bubblewrap is killed the kernel kills it and all it
	// started. The transport closes stdin, then terminates and kills;
	// cancel kills too, and stops the network proxy of a profile that has
	// one.
	return cmd, cancel, nil
}

// programTrees are the trees an upstream's program needs in order to run,
// kept visible (read-only) where the sandbox mounts its own /tmp (the rest
// of the root is visible anyway): the program's directory, through its
// link too, or the outermost node_modules tree it lies in, from which a
// Node server loads its packages.
func programTrees(prog string) []string {
	paths := []string{prog}
	if r, err := filepath.EvalSymlinks(prog); err == nil && r != prog {
		paths = append(paths, r)
	}
	var out []string
	for _, p := range paths {
		if i := strings.Index(p, "/node_modules/"); i >= 0 {
			out = append(out, p[:i+len("/node_modules")])
		} else {
			out = append(out, filepath.Dir(p))
		}
	}
	return out
}

// instance is one client session's process of a stdio upstream, spawned
// under the profile of the phase in which the call that needed it was
// decided.
type instance struct {
	cs    *mcp.ClientSession
	cmd   *exec.Cmd
	stop  func()
	state string // the run's state the profile was derived for
	phase string // the profile's phase, for messages
	key   string // the profile's digest
	dead  chan struct{}
}

// close stops the instance's process and waits for it.
func (in *instance) close() {
	in.cs.Close()
	if in.cmd.Process != nil {
		_ = in.cmd.Process.Kill()
	}
	select {
	case <-in.dead:
	case <-time.After(5 * time.Second):
	}
	in.stop()
}

// alive reports whether the instance's connection is still up.
func (in *instance) alive() bool {
	select {
	case <-in.dead:
		return false
	default:
		return true
	}
}

// sessionUpstreams are one client session's upstream processes.
type sessionUpstreams struct {
	mu    sync.Mutex // held while one is spawned: one process per upstream
	insts map[*upstream]*instance
	// stopped names, per upstream, the phase of a process stopped because
	// the run left it, until the next call says so.
	stopped map[*upstream]string
	closed  bool
}

// sessionUps returns the client session id's upstream processes.
func (m *Manager) sessionUps(id string) *sessionUpstreams {
	m.smu.Lock()
	defer m.smu.Unlock()
	if m.sessions == nil {
		m.sessions = map[string]*sessionUpstreams{}
	}
	su := m.sessions[id]
	if su == nil {
		su = &sessionUpstreams{insts: map[*upstream]*instance{}, stopped: map[*upstream]string{}}
		m.sessions[id] = su
	}
	return su
}

// profileKey is a digest of a profile: two phases with the same profile
// share a process.
func profileKey(p *sandbox.Profile) string {
	q := *p
	q.Phase = ""
	b, _ := json.Marshal(&q)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// errPhaseMoved is returned when the run left the phase a call was decided
// in before its upstream process could be spawned: nothing was called.
var errPhaseMoved = errors.New("the run left the phase this call was decided in before the upstream's sandbox started; nothing was done, call it again")

// sessionClient returns the connection to the client session id's process
// of u for a call decided in state, spawning it under the profile of the
// session's current phase when there is none for that state. note, when
// not empty, tells the model that a process of an earlier phase was
// stopped and this one started under the new phase's profile.
func (m *Manager) sessionClient(ctx context.Context, id, session, state string, u *upstream) (cs *mcp.ClientSession, note string, err error) {
	su := m.sessionUps(id)
	su.mu.Lock()
	defer su.mu.Unlock()
	if su.closed {
		return nil, "", errors.New("the client session ended")
	}
	if in := su.insts[u]; in != nil {
		if in.state == state && in.alive() {
			return in.cs, "", nil
		}
		delete(su.insts, u)
		if in.state != state {
			su.stopped[u] = in.phase
		}
		in.close()
	}
	p, err := m.sessionProfile(ctx, id, session)
	if err != nil {
		return nil, "", err
	}
	if p.Phase != state {
		return nil, "", errPhaseMoved
	}
	in, err := u.spawn(ctx, p)
	if err != nil {
		return nil, "", err
	}
	in.state = state
	su.insts[u] = in
	if prev, ok := su.stopped[u]; ok {
		delete(su.stopped, u)
		note = fmt.Sprintf("[statewright] upstream %q now runs under the OS sandbox of phase %s: its process of phase %s was stopped when the run left that phase (with anything it left running), and this call started a new one under the new phase's profile.",
			u.cfg.Name, phaseName(p.Phase), phaseName(prev))
	}
	return in.cs, note, nil
}

// sessionProfile derives the profile of the store session's current
// phase for the client session id's processes (its own /tmp, the shared
// caches).
func (m *Manager) sessionProfile(ctx context.Context, id, session string) (*sandbox.Profile, error) {
	sb := m.sb
	env := sb.Env
	if sb.Root != "" {
		env.SessionDir = sandbox.SessionDir(sb.Root, "gateway:"+id)
		env.CacheDir = sandbox.SharedCache(sb.Root)
		if err := sandbox.PrepareSession(env.SessionDir, env.CacheDir); err != nil {
			return nil, err
		}
	}
	p, err := sb.Profile(ctx, session, env)
	if err != nil {
		return nil, fmt.Errorf("the phase's sandbox profile: %w", err)
	}
	return p, nil
}

// stopOutOfPhase stops the client session id's upstream processes that do
// not run under the profile of the store session's current phase: those
// of a phase the run left, and those whose profile changed within it (a
// secret the project gained). Called when the session sees its run
// change.
func (m *Manager) stopOutOfPhase(ctx context.Context, id, session string) {
	if !m.sb.active() || !m.hasSessionUps(id) {
		return
	}
	p, err := m.sessionProfile(ctx, id, session)
	if err != nil {
		m.stopSession(id, nil, false)
		return
	}
	key := profileKey(p)
	m.stopSession(id, func(in *instance) bool { return in.state == p.Phase && in.key == key }, false)
}

func phaseName(p string) string {
	if p == "" {
		return "(no run)"
	}
	return p
}

// spawn starts a process of u under p and connects to it.
func (u *upstream) spawn(ctx context.Context, p *sandbox.Profile) (*instance, error) {
	cmd, stop, err := u.sandboxedCommand(p)
	if err != nil {
		return nil, err
	}
	cmd.Stderr = u.stderr
	cl := mcp.NewClient(&mcp.Implementation{Name: "statewright-gateway", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: u.m.forwardProgress,
	})
	cctx, cancel := context.WithTimeout(ctx, time.Duration(u.cfg.Timeout))
	defer cancel()
	cs, err := cl.Connect(cctx, &mcpio.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil)
	if err != nil {
		stop()
		return nil, fmt.Errorf("gateway: start upstream %q under the sandbox of phase %s: %w%s", u.cfg.Name, phaseName(p.Phase), err, u.stderrNote())
	}
	in := &instance{cs: cs, cmd: cmd, stop: stop, phase: p.Phase, key: profileKey(p), dead: make(chan struct{})}
	go func() { _ = cs.Wait(); close(in.dead) }()
	return in, nil
}

// stopSession stops the client session id's upstream processes that keep
// does not keep (all of them when keep is nil), with everything they
// started; end says the client session ended, so none is spawned again.
func (m *Manager) stopSession(id string, keep func(*instance) bool, end bool) {
	m.smu.Lock()
	su := m.sessions[id]
	if end {
		delete(m.sessions, id)
	}
	m.smu.Unlock()
	if su == nil {
		return
	}
	su.mu.Lock()
	defer su.mu.Unlock()
	su.closed = su.closed || end
	for u, in := range su.insts {
		if keep != nil && keep(in) {
			continue
		}
		delete(su.insts, u)
		su.stopped[u] = in.phase
		in.close()
	}
}

// hasSessionUps reports whether the client session id has upstream
// processes running.
func (m *Manager) hasSessionUps(id string) bool {
	m.smu.Lock()
	su := m.sessions[id]
	m.smu.Unlock()
	if su == nil {
		return false
	}
	su.mu.Lock()
	defer su.mu.Unlock()
	return len(su.insts) > 0
}

// sessionPID returns the host PID of the client session id's process of
// the named upstream (bubblewrap's), and the phase of its profile; 0 when
// none runs. For tests and status.
func (m *Manager) sessionPID(id, name string) (int, string) {
	m.smu.Lock()
	su := m.sessions[id]
	m.smu.Unlock()
	if su == nil {
		return 0, ""
	}
	su.mu.Lock()
	defer su.mu.Unlock()
	for u, in := range su.insts {
		if u.cfg.Name == name && in.cmd.Process != nil {
			return in.cmd.Process.Pid, in.phase
		}
	}
	return 0, ""
}
