// Package decider is the local decider: a long-lived, per-user process
// (`statewright decider serve`) that answers the thin hook client's
// requests (cmd/statewright-hook) over a unix socket, so that a hook costs
// a small process's spawn and one round trip instead of a full binary's
// start-up, a store open and a workflow compile (docs/hooks.md).
//
// Every request runs through the one hook runner (harness/hook), in the
// hook process's environment, working directory and umask, so the decider
// answers exactly as the hook would have answered in process, sandbox
// rewrite included. What a long-lived process adds: stores stay open
// (checked against their location before every request), and a runtime
// per (store, options, host) keeps compiled workflows by snapshot digest,
// so workflow size no longer shows in the hook.
//
// The decider and the client authenticate each other with the
// per-install key (package hookwire); the socket and the key sit in
// statewright's configuration directory, hidden by the OS sandbox. A
// decider whose binary was replaced, whose socket was taken over or that
// sat idle exits; a client that finds one started by an older binary asks
// it to quit and starts a new one.
package decider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/statewright-go/statewright/harness"
	"github.com/statewright-go/statewright/harness/adapters"
	"github.com/statewright-go/statewright/harness/hook"
	"github.com/statewright-go/statewright/internal/hookwire"
	"github.com/statewright-go/statewright/internal/person"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
)

// Options configure a decider.
type Options struct {
	// Dir is the decider directory (hookwire.Dir); Binary the absolute
	// path of the statewright binary it runs as (the one its clients
	// exec when it does not answer).
	Dir, Binary string
	// Idle ends the decider after this long without a request (default
	// DefaultIdle).
	Idle time.Duration
	// Registry returns where the hooks of the store at loc record their
	// harnesses (internal/person); nil records nothing.
	Registry func(loc string) string
	// Log receives the decider's log lines (nil: the log file in Dir).
	Log io.Writer
}

// DefaultIdle is how long a decider waits for a request before it exits.
const DefaultIdle = 30 * time.Minute

// Status is what `statewright decider status` shows.
type Status struct {
	Pid      int       `json:"pid"`
	Binary   string    `json:"binary"`
	Protocol string    `json:"protocol"`
	Started  time.Time `json:"started"`
	Requests int64     `json:"requests"`
	Stores   []string  `json:"stores"`
	Runtimes int       `json:"runtimes"`
}

// Decider serves hook requests.
type Decider struct {
	o     Options
	paths hookwire.Paths
	key   []byte
	id    hookwire.Identity
	log   *log.Logger
	// sock identifies the socket file the decider listens on; one-shot
	// requests made for another are refused.
	sock hookwire.Identity
	// replays refuses a one-shot request seen before.
	replays hookwire.ReplayGuard

	started  time.Time
	requests atomic.Int64
	last     atomic.Int64 // unix nanoseconds of the last request

	// sem serialises hooks: each runs in its hook's process environment
	// and working directory, which are the process's own.
	sem chan struct{}

	// hosts keeps each hook environment's host discovery while the
	// paths it read are unchanged (runtime.HostCache).
	hosts runtime.HostCache

	mu       sync.Mutex
	stores   map[string]store.Store // by location and id
	runtimes map[string]*runtime.Service
	quit     chan struct{}
	quitOnce sync.Once
}

// ErrRunning is returned by Serve when a healthy decider for the same
// binary runs already.
var ErrRunning = errors.New("decider: one runs already")

// Serve runs a decider until it goes idle, is asked to quit, is replaced,
// or ctx ends. It returns ErrRunning at once when a healthy decider of the
// same binary holds the socket.
func Serve(ctx context.Context, o Options) (err error) {
	if o.Idle <= 0 {
		o.Idle = DefaultIdle
	}
	if o.Dir == "" || !filepath.IsAbs(o.Binary) {
		return errors.New("decider: no directory or binary")
	}
	d := &Decider{o: o, paths: hookwire.PathsFor(o.Dir, o.Binary), started: time.Now(), sem: make(chan struct{}, 1),
		stores: map[string]store.Store{}, runtimes: map[string]*runtime.Service{}, quit: make(chan struct{})}
	defer func() {
		if err != nil && !errors.Is(err, ErrRunning) {
			// Clients do not start another decider for a while.
			_ = os.WriteFile(d.paths.Fail, []byte(err.Error()+"\n"), 0o600)
		}
	}()
	if err := ensureDir(o.Dir); err != nil {
		return err
	}
	w := o.Log
	if w == nil {
		f, err := openLog(d.paths.Log)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	d.log = log.New(w, fmt.Sprintf("decider[%d] ", os.Getpid()), log.LstdFlags|log.LUTC)
	if d.key, err = hookwire.EnsureKey(d.paths.Key); err != nil {
		return fmt.Errorf("decider: the key: %w", err)
	}
	if d.id, err = selfIdentity(o.Binary); err != nil {
		return fmt.Errorf("decider: its own binary: %w", err)
	}
	lock, err := d.lock(ctx)
	if err != nil {
		return err
	}
	defer lock.Close()
	ln, sockID, err := d.listen()
	if err != nil {
		d.log.Printf("cannot listen on %s: %v", d.paths.Socket, err)
		return err
	}
	d.sock = sockID
	os.Remove(d.paths.Fail)
	d.log.Printf("serving %s for %s", d.paths.Socket, o.Binary)
	defer d.closeStores()
	defer func() {
		ln.Close()
		// Remove the socket only while it is still ours (a newer decider
		// may have taken the name over).
		if id, err := hookwire.StatIdentity(d.paths.Socket); err == nil && id.Dev == sockID.Dev && id.Ino == sockID.Ino {
			os.Remove(d.paths.Socket)
		}
	}()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go d.watch(ctx, cancel, sockID)
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	d.last.Store(time.Now().UnixNano())
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				d.log.Printf("stopping: %v", context.Cause(ctx))
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		go d.serveConn(ctx, cancel, c.(*net.UnixConn))
	}
}

// ensureDir makes the decider directory private to the user.
func ensureDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("decider: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("decider: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("decider: %s is not a directory", dir)
	}
	if !ownedByMe(fi) {
		return fmt.Errorf("decider: %s belongs to another user", dir)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return os.Chmod(dir, 0o700)
	}
	return nil
}

// openLog opens the log file, starting it afresh past 1 MiB.
func openLog(path string) (*os.File, error) {
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	if fi, err := os.Stat(path); err == nil && fi.Size() > 1<<20 {
		flags |= os.O_TRUNC
	}
	return os.OpenFile(path, flags, 0o600)
}

// listen binds the socket (removing a dead one's file) and returns the
// listener and the socket file's identity.
func (d *Decider) listen() (*net.UnixListener, hookwire.Identity, error) {
	os.Remove(d.paths.Socket)
	old := setUmask(0o077)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: d.paths.Socket, Net: "unix"})
	setUmask(old)
	if err != nil {
		return nil, hookwire.Identity{}, err
	}
	ln.SetUnlinkOnClose(false)
	id, err := hookwire.StatIdentity(d.paths.Socket)
	if err != nil {
		ln.Close()
		return nil, hookwire.Identity{}, err
	}
	return ln, id, nil
}

// watch ends the decider when it idles, when its binary is replaced (its
// clients would find it stale), when its socket is taken over, or when
// asked to quit.
func (d *Decider) watch(ctx context.Context, cancel context.CancelFunc, sock hookwire.Identity) {
	t := time.NewTicker(2 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.quit:
			cancel()
			return
		case <-t.C:
		}
		if time.Since(time.Unix(0, d.last.Load())) > d.o.Idle {
			d.log.Printf("idle for %v", d.o.Idle)
			cancel()
			return
		}
		if id, err := hookwire.StatIdentity(d.o.Binary); err != nil || id != d.id {
			d.log.Printf("the binary %s was replaced", d.o.Binary)
			cancel()
			return
		}
		if id, err := hookwire.StatIdentity(d.paths.Socket); err != nil || id.Dev != sock.Dev || id.Ino != sock.Ino {
			d.log.Printf("the socket was removed or taken over")
			cancel()
			return
		}
	}
}

// connTimeout bounds one connection's reads and writes.
const connTimeout = 10 * time.Second

func (d *Decider) serveConn(ctx context.Context, cancel context.CancelFunc, c *net.UnixConn) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(connTimeout))
	peer, err := peerOf(c)
	if err != nil {
		d.log.Printf("refused a connection: %v", err)
		return
	}
	kind, p, err := hookwire.ReadFirst(c)
	if err != nil {
		return
	}
	var s *hookwire.ServerSession
	var req *hookwire.Request
	if kind == hookwire.KindOneShot {
		// A hook in one round trip: the hello goes out at once, the
		// answer once decided.
		s, req, err = hookwire.AcceptOneShot(c, p, d.key, d.id, os.Getpid(), d.sock, &d.replays, time.Now())
		if s != nil && err != nil {
			// The client expects another binary (it takes this decider
			// as stale), connected to another socket file, or replays:
			// nothing is done for it.
			d.log.Printf("refused a request from pid %d: %v", peer.pid, err)
			s.WriteAnswer(&hookwire.Answer{Refused: err.Error()})
			return
		}
	} else if s, err = hookwire.AcceptHello(c, p, d.key, d.id, os.Getpid()); err == nil {
		req, err = s.ReadRequest()
	}
	if err != nil {
		if errors.Is(err, hookwire.ErrBadMAC) {
			d.log.Printf("refused a request from pid %d: it does not hold the key", peer.pid)
		}
		return
	}
	d.last.Store(time.Now().UnixNano())
	var a *hookwire.Answer
	switch req.Op {
	case hookwire.OpHook:
		c.SetDeadline(time.Now().Add(req.Budget + connTimeout))
		a = d.hook(ctx, req, peer)
	case hookwire.OpStatus:
		b, _ := json.Marshal(d.status())
		a = &hookwire.Answer{Stdout: b}
	case hookwire.OpQuit:
		d.log.Printf("asked to quit by pid %d", peer.pid)
		a = &hookwire.Answer{}
		d.quitOnce.Do(func() { close(d.quit) })
	default:
		a = &hookwire.Answer{Refused: "unknown operation"}
	}
	s.WriteAnswer(a)
}

func (d *Decider) status() Status {
	st := Status{Pid: os.Getpid(), Binary: d.o.Binary, Protocol: hookwire.Version, Started: d.started, Requests: d.requests.Load()}
	d.mu.Lock()
	for k := range d.stores {
		loc, _, _ := strings.Cut(k, "\x00")
		st.Stores = append(st.Stores, store.Display(loc))
	}
	st.Runtimes = len(d.runtimes)
	d.mu.Unlock()
	return st
}

// hook answers one hook request through the hook runner, in the hook
// process's environment, working directory and umask.
func (d *Decider) hook(ctx context.Context, req *hookwire.Request, peer peer) *hookwire.Answer {
	if len(req.Args) < 3 || req.Args[0] != "hook" {
		return &hookwire.Answer{Refused: "not a hook call"}
	}
	a := adapters.Find(req.Args[1])
	if a == nil {
		return &hookwire.Answer{Refused: "unknown harness " + req.Args[1]}
	}
	if peer.otherMounts {
		// Paths resolve on the hook's host as the hook sees them
		// (docs/hooks.md): another mount namespace decides in process.
		return &hookwire.Answer{Refused: "the hook runs in another mount namespace"}
	}
	if req.Budget <= 0 {
		return &hookwire.Answer{Refused: "no time left"}
	}
	budget := time.NewTimer(req.Budget)
	defer budget.Stop()
	select {
	case d.sem <- struct{}{}:
	case <-budget.C:
		// An earlier hook still runs (a locked store): the client decides
		// in process with the time it kept.
		return &hookwire.Answer{Refused: "busy"}
	case <-ctx.Done():
		return &hookwire.Answer{Refused: "stopping"}
	}
	released := false
	release := func() {
		if !released {
			released = true
			<-d.sem
		}
	}
	defer func() { release() }()
	if err := enter(req); err != nil {
		return &hookwire.Answer{Refused: err.Error()}
	}
	d.requests.Add(1)

	var stdout, stderr bytes.Buffer
	inner := make(chan struct{})
	var wrapped atomic.Bool
	env := hook.Env{
		Executable: d.o.Binary,
		OpenStore: func(ctx context.Context, loc, id string, busy time.Duration) (store.Store, error) {
			if d.o.Registry != nil && peer.pid > 0 {
				_ = person.RegisterHarnessOf(d.o.Registry(loc), peer.pid)
			}
			return d.store(ctx, loc, id, busy)
		},
		NewRuntime: d.runtime,
		Wrap: func(next hook.Handler) hook.Handler {
			wrapped.Store(true)
			return func(ctx context.Context, r *hook.Request) harness.Answer {
				defer close(inner)
				return next(ctx, r)
			}
		},
	}
	args := append(append([]string(nil), req.Args[2:]...), "--deadline", req.Budget.String())
	code := hook.Run(ctx, a, args, bytes.NewReader(req.Input), &stdout, &stderr, env)
	if wrapped.Load() {
		// Work that the deadline abandoned still runs in this process's
		// environment: the next hook waits for it.
		released = true
		go func() { <-inner; <-d.sem }()
	}
	return &hookwire.Answer{Exit: code, Stdout: stdout.Bytes(), Stderr: stderr.String()}
}

// enter makes the process's environment, working directory and umask the
// hook's.
func enter(req *hookwire.Request) error {
	if req.Dir == "" || !filepath.IsAbs(req.Dir) {
		return errors.New("the hook's working directory is unknown")
	}
	if err := os.Chdir(req.Dir); err != nil {
		return err
	}
	// An environment that an earlier request set (so without duplicate
	// names) and that lists exactly the request's variables in its order
	// is the one setting them again would give: kept (most hooks of a
	// session send the same environment).
	if !envSet || !slices.Equal(os.Environ(), req.Env) {
		os.Clearenv()
		for _, kv := range req.Env {
			for i := 1; i < len(kv); i++ {
				if kv[i] == '=' {
					os.Setenv(kv[:i], kv[i+1:])
					break
				}
			}
		}
		envSet = true
	}
	setUmask(int(req.Umask & 0o777))
	return nil
}

// envSet is true once enter has set the process environment from a
// request (enter runs with the decider's semaphore held).
var envSet bool

// sharedStore is a store the decider keeps open: the hook runner's Close
// leaves it open.
type sharedStore struct{ store.Store }

func (sharedStore) Close() error { return nil }

// store returns the open store at loc with id, opening it on first use;
// a store that is no longer the one at its location (removed, recreated)
// is dropped and opened again, which fails for a recreated store (its id
// differs), so the hook denies.
func (d *Decider) store(ctx context.Context, loc, id string, busy time.Duration) (store.Store, error) {
	key := loc + "\x00" + id
	d.mu.Lock()
	st := d.stores[key]
	d.mu.Unlock()
	if st != nil {
		if err := st.CheckIdentity(ctx); err == nil {
			return sharedStore{st}, nil
		}
		d.dropStore(key, st)
	}
	st, err := store.Open(ctx, loc, store.Options{MustExist: true, ExpectID: id, BusyTimeout: busy})
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	if prev := d.stores[key]; prev != nil {
		d.mu.Unlock()
		st.Close()
		return sharedStore{prev}, nil
	}
	d.stores[key] = st
	d.mu.Unlock()
	return sharedStore{st}, nil
}

// dropStore closes a store and forgets the runtimes over it.
func (d *Decider) dropStore(key string, st store.Store) {
	d.mu.Lock()
	if d.stores[key] == st {
		delete(d.stores, key)
	}
	prefix := fmt.Sprintf("%p\x00", st)
	for k := range d.runtimes {
		if len(k) >= len(prefix) && k[:len(prefix)] == prefix {
			delete(d.runtimes, k)
		}
	}
	d.mu.Unlock()
	st.Close()
}

func (d *Decider) closeStores() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for k, st := range d.stores {
		st.Close()
		delete(d.stores, k)
	}
}

// maxRuntimes bounds the runtimes kept; past it they are all dropped.
const maxRuntimes = 256

// runtime returns the runtime for a store and options, kept by (store,
// options, host): the host is discovered for every hook, in the hook's
// environment, as runtime.New would (answered from d.hosts while nothing
// it read changed), so a runtime is reused only where it would decide
// alike.
func (d *Decider) runtime(st store.Store, o runtime.Options) *runtime.Service {
	if o.Workflows != nil || o.Now != nil || o.Resolver != nil || o.Policy.Host != nil || o.Observer != nil {
		return runtime.New(st, o)
	}
	if o.ProjectDir == "" {
		o.ProjectDir, _ = os.Getwd()
	}
	db := ""
	if files := st.Identity().Files; len(files) > 0 {
		db = files[0]
	}
	if !o.NoResolve {
		o.Policy.Host = d.hosts.Discover(runtime.HostOptions{ProjectDir: o.ProjectDir, Store: db})
	}
	inner := st
	if s, ok := st.(sharedStore); ok {
		inner = s.Store
	}
	b, err := json.Marshal(runtimeKey{
		RequireWorkflow: o.Policy.RequireWorkflow, ProtectedPaths: o.Policy.ProtectedPaths, Host: o.Policy.Host,
		AuditOnly: o.AuditOnly, DefaultWorkflow: o.DefaultWorkflow, ApprovalTTL: o.ApprovalTTL, MaxDepth: o.MaxDepth,
		ProjectDir: o.ProjectDir, NoResolve: o.NoResolve,
	})
	if err != nil {
		return runtime.New(st, o)
	}
	key := fmt.Sprintf("%p\x00", inner) + string(b)
	d.mu.Lock()
	defer d.mu.Unlock()
	if svc := d.runtimes[key]; svc != nil {
		return svc
	}
	if len(d.runtimes) >= maxRuntimes {
		clear(d.runtimes)
	}
	svc := runtime.New(inner, o)
	d.runtimes[key] = svc
	return svc
}

// runtimeKey is every runtime.Options field that a hook can set, besides
// the ones runtime() never caches for (a test checks the list against
// runtime.Options).
type runtimeKey struct {
	RequireWorkflow bool
	ProtectedPaths  []string
	Host            *policy.Host
	AuditOnly       bool
	DefaultWorkflow string
	ApprovalTTL     time.Duration
	MaxDepth        int
	ProjectDir      string
	NoResolve       bool
}

// selfIdentity identifies the binary this process runs: on Linux the
// running file itself (/proc/self/exe, even when replaced since), else
// the file at bin.
func selfIdentity(bin string) (hookwire.Identity, error) {
	if goruntime.GOOS == "linux" {
		if id, err := hookwire.StatIdentity("/proc/self/exe"); err == nil {
			return id, nil
		}
	}
	return hookwire.StatIdentity(bin)
}
