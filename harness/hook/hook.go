// Package hook runs one harness hook: the process a harness starts for
// each hook event (`statewright hook HARNESS EVENT [flags]`), written once
// for every adapter. What every hook needs around Adapter.Respond (the
// flags, the deadline watchdog, the input limit, opening the store) is a
// Middleware, in the style of mvdan/sh's interp.ExecHandlers; serve's HTTP
// hook endpoint uses the same chain without the store.
//
// Every failure is answered by the adapter's Failure for the event, which
// fails closed: nothing here may exit 0 on a tool call it could not decide.
package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/statewright-go/statewright/control"
	"github.com/statewright-go/statewright/harness"
	"github.com/statewright-go/statewright/harness/install"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
)

// Request is one hook event to answer.
type Request struct {
	// Adapter is the harness; Event the event as the command line or URL
	// spells it.
	Adapter harness.Adapter
	Event   string
	// Stdin is where the input comes from; Input is the input once read.
	Stdin io.Reader
	Input []byte
	// Hook is what the adapter decides with.
	Hook *harness.Hook
}

// fail answers the request's event in its fail-closed way.
func (r *Request) fail(reason string) harness.Answer { return r.Adapter.Failure(r.Event, reason) }

// A Handler answers a hook request.
type Handler func(ctx context.Context, r *Request) harness.Answer

// A Middleware wraps a Handler with one concern.
type Middleware func(next Handler) Handler

// Respond is the innermost handler: the adapter's Respond.
func Respond(ctx context.Context, r *Request) harness.Answer {
	return r.Adapter.Respond(ctx, r.Hook, r.Event, r.Input)
}

// Chain returns h wrapped by mws, the first outermost.
func Chain(h Handler, mws ...Middleware) Handler {
	for i := len(mws) - 1; i >= 0; i-- {
		h = mws[i](h)
	}
	return h
}

// Deadline answers within d: the rest of the chain runs under a context
// that ends at d, and when it has not answered by then (blocked on a
// locked store, a stuck read), the event's failure is answered instead.
// The caller writes that answer and exits; the blocked work dies with the
// process (or, in a server, ends with its context).
func Deadline(d time.Duration) Middleware {
	return func(next Handler) Handler {
		return func(ctx context.Context, r *Request) harness.Answer {
			ctx, cancel := context.WithTimeout(ctx, d)
			defer cancel()
			done := make(chan harness.Answer, 1)
			spawn(func() { done <- next(ctx, r) })
			select {
			case a := <-done:
				return a
			case <-ctx.Done():
				return r.fail(fmt.Sprintf("the hook did not finish within its %v deadline", d))
			}
		}
	}
}

// spawn runs f on a goroutine of its own: the goroutine that answered
// the last request and parked itself, when there is one (in serve, which
// answers many), else a new one. A new goroutine starts on a small stack
// that grows, by copying, on the way down a decision (the input's
// decoding, the policy, the store): in serve that copying was 7 % of its
// CPU. A parked goroutine keeps the stack it grew until the garbage
// collector shrinks it; the last one parked, whose stack is warmest, runs
// next. One that never returns (blocked past its deadline) is simply not
// parked again; at most maxParked wait, the rest end.
func spawn(f func()) {
	parked.Lock()
	if n := len(parked.idle); n > 0 {
		w := parked.idle[n-1]
		parked.idle = parked.idle[:n-1]
		parked.Unlock()
		w <- f
		return
	}
	parked.Unlock()
	go work(f)
}

// maxParked bounds the goroutines kept parked for spawn.
const maxParked = 256

var parked struct {
	sync.Mutex
	idle []chan func()
}

// work runs f, then parks to run what spawn hands it next.
func work(f func()) {
	next := make(chan func(), 1)
	for {
		f()
		f = nil // a parked goroutine holds no request (its input) alive
		parked.Lock()
		if len(parked.idle) >= maxParked {
			parked.Unlock()
			return
		}
		parked.idle = append(parked.idle, next)
		parked.Unlock()
		f = <-next
	}
}

// ReadInput reads the input from r.Stdin, at most limit bytes: a larger
// input is refused by the adapter's decoder rather than decided on a
// prefix.
func ReadInput(limit int64) Middleware {
	return func(next Handler) Handler {
		return func(ctx context.Context, r *Request) harness.Answer {
			if r.Input == nil && r.Stdin != nil {
				data, err := io.ReadAll(io.LimitReader(r.Stdin, limit+1))
				if err != nil {
					return r.fail("read hook input: " + err.Error())
				}
				r.Input = data
			}
			return next(ctx, r)
		}
	}
}

// ScopeTo passes (exit 0, no output: no opinion, the harness's own rules
// decide) every event whose input's working directory ("cwd") is not
// project or below it, before the store is opened; "" scopes nothing. An
// input without a cwd, or one that is not JSON, goes on to be decided (and
// fails closed there), never passes.
func ScopeTo(project string) Middleware {
	return func(next Handler) Handler {
		if project == "" {
			return next
		}
		return func(ctx context.Context, r *Request) harness.Answer {
			var in struct {
				Cwd string `json:"cwd"`
			}
			if json.Unmarshal(r.Input, &in) == nil && in.Cwd != "" && !install.Within(in.Cwd, project) {
				return harness.Answer{}
			}
			return next(ctx, r)
		}
	}
}

// Flags are the hook command's flags. They live on the hook command line,
// which the harness snapshots at session start, never in a file the agent
// could write.
type Flags struct {
	harness.Options
	// Store is the store's location; StoreID its id, or StoreIDFile the
	// file that holds it (plugin installs).
	Store, StoreID, StoreIDFile string
	// Deadline is when the hook answers, failing closed, at the latest.
	Deadline time.Duration
	// Project, when set, scopes the hook to sessions whose working
	// directory is this directory or below it (a user-level install of one
	// project); elsewhere the hook passes without opening the store.
	Project string
}

// FlagSet returns the hook command's flags, parsed into f.
func FlagSet(f *Flags) *pflag.FlagSet {
	fs := pflag.NewFlagSet("hook", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.Store, "store", "", "the store file (default $"+store.EnvStore+", else the XDG state directory)")
	fs.StringVar(&f.StoreID, "store-id", "", "the store's id; a store with another id (deleted, recreated, foreign) denies")
	fs.StringVar(&f.StoreIDFile, "store-id-file", "", "read the store's id from this file instead (plugin installs)")
	fs.DurationVar(&f.Deadline, "deadline", install.DefaultDeadline, "answer (failing closed) by this deadline; keep it under the harness's hook timeout")
	fs.BoolVar(&f.RequireWorkflow, "require-workflow", false, "deny every ordinary tool call while the session has no run")
	fs.StringVar(&f.DefaultWorkflow, "default-workflow", "", "start this workflow for a session that has no run, at SessionStart")
	fs.BoolVar(&f.AuditOnly, "audit-only", false, "record what would be denied, without denying")
	fs.BoolVar(&f.Sandbox, "sandbox", false, "run shell calls under the phase's OS sandbox where one is available")
	fs.BoolVar(&f.RequireSandbox, "require-sandbox", false, "run shell calls under the phase's OS sandbox, and deny them where none is available")
	fs.StringVar(&f.Project, "project", "", "decide only sessions working in this directory (or below); pass elsewhere")
	return fs
}

// Env is what a hook process needs from the rest of statewright.
type Env struct {
	// OpenStore opens an existing store at loc that carries the id
	// expectID, waiting at most busy for its locks.
	OpenStore func(ctx context.Context, loc, expectID string, busy time.Duration) (store.Store, error)
	// Getenv reads the environment (os.Getenv when nil).
	Getenv func(string) string
	// Executable is this binary, which the law protects ("" when unknown).
	Executable string
	// NewRuntime returns the runtime over an open store (runtime.New when
	// nil): a long-lived decider returns one it keeps, so that a workflow
	// is compiled once, not on every hook.
	NewRuntime func(st store.Store, o runtime.Options) *runtime.Service
	// Wrap, when set, wraps the work the deadline bounds (reading the
	// input, opening the store, the adapter): a long-lived decider learns
	// when work that a deadline abandoned has ended.
	Wrap Middleware
}

// OpenStore makes the runtime available to the rest of the chain: the
// store named by f, opened on first use (an event that decides nothing
// never opens it) and closed when the request is answered. The store must
// exist and carry the named id: a deleted, recreated or foreign store
// denies. The law protects the store id file and this binary besides what
// the adapter names.
func OpenStore(env Env, f *Flags) Middleware {
	return func(next Handler) Handler {
		return func(ctx context.Context, r *Request) harness.Answer {
			var st store.Store
			defer func() {
				if st != nil {
					st.Close()
				}
			}()
			if loc, err := store.ResolvePath(f.Store, nil); err == nil {
				r.Hook.StorePath = loc
			}
			r.Hook.Open = func(ctx context.Context, project string, protect ...string) (*runtime.Service, error) {
				if st != nil {
					return nil, errors.New("the store is open already")
				}
				var err error
				if st, err = openStore(ctx, env, f); err != nil {
					return nil, err
				}
				if f.StoreIDFile != "" {
					protect = append(protect, f.StoreIDFile)
				}
				if env.Executable != "" {
					protect = append(protect, env.Executable)
				}
				newRuntime := env.NewRuntime
				if newRuntime == nil {
					newRuntime = runtime.New
				}
				return newRuntime(st, runtime.Options{
					Policy:          policy.Options{RequireWorkflow: f.RequireWorkflow, ProtectedPaths: protect},
					AuditOnly:       f.AuditOnly,
					DefaultWorkflow: f.DefaultWorkflow,
					ProjectDir:      project,
				}), nil
			}
			r.Hook.Control = func(ctx context.Context, svc *runtime.Service, c harness.ControlRequest) (string, bool, error) {
				return Control(st)(ctx, svc, c)
			}
			return next(ctx, r)
		}
	}
}

// openStore opens the store the flags name.
func openStore(ctx context.Context, env Env, f *Flags) (store.Store, error) {
	loc, err := store.ResolvePath(f.Store, nil)
	if err != nil {
		return nil, err
	}
	id := f.StoreID
	if f.StoreIDFile != "" {
		b, err := os.ReadFile(f.StoreIDFile)
		if err != nil {
			return nil, fmt.Errorf("read the store id: %w", err)
		}
		id = strings.TrimSpace(string(b))
	}
	if id == "" {
		return nil, errors.New("the hook command names no store id (--store-id); run `statewright init` for the harness to install the hooks")
	}
	st, err := env.OpenStore(ctx, loc, id, BusyTimeout(f.Deadline))
	if errors.Is(err, store.ErrCorrupt) && !store.IsPostgresURL(loc) {
		return nil, fmt.Errorf("%w. A person %s", err, install.RecoverHint(loc))
	}
	if err != nil {
		return nil, err // the store's errors name the operation and the store
	}
	return st, nil
}

// BusyTimeout returns the store busy timeout for a hook deadline: at most
// 40% of it, never more than the store's default, never under 10ms.
func BusyTimeout(deadline time.Duration) time.Duration {
	return min(max(deadline*2/5, 10*time.Millisecond), store.DefaultBusyTimeout)
}

// Control returns how a plugin's control tool runs over st: through
// package control, as statewright's MCP server would serve it. The text is
// the result's JSON, or the error that explains a refusal (isError).
func Control(st store.Store) func(ctx context.Context, svc *runtime.Service, r harness.ControlRequest) (string, bool, error) {
	return func(ctx context.Context, svc *runtime.Service, r harness.ControlRequest) (string, bool, error) {
		if st == nil {
			return "", false, errors.New("no store is open")
		}
		ctl, err := control.New(svc, st, control.Options{ProjectDir: r.Project, Workflows: runtime.DefaultWorkflows(r.Project)})
		if err != nil {
			return "", false, err
		}
		res, err := ctl.Call(ctx, r.Session, r.Tool, r.Args, r.CallID, r.Actor)
		if err != nil {
			return err.Error(), true, nil
		}
		text, err := control.Render(res)
		return text, false, err
	}
}

// Run answers one hook process for adapter a: args are "EVENT [flags]".
// It returns the process exit code, after writing the answer.
func Run(ctx context.Context, a harness.Adapter, args []string, stdin io.Reader, stdout, stderr io.Writer, env Env) int {
	if len(args) < 1 {
		return a.Failure("", "usage: statewright hook "+a.Info().Name+" EVENT [flags]; events: "+
			strings.Join(a.Info().Events, ", ")).Write(stdout, stderr)
	}
	r := &Request{Adapter: a, Event: args[0], Stdin: stdin, Hook: &harness.Hook{Getenv: env.Getenv}}
	if r.Hook.Getenv == nil {
		r.Hook.Getenv = os.Getenv
	}
	var f Flags
	if err := FlagSet(&f).Parse(args[1:]); err != nil {
		return r.fail("hook "+a.Info().Name+": "+err.Error()).Write(stdout, stderr)
	}
	if f.Deadline <= 0 {
		f.Deadline = install.DefaultDeadline
	}
	r.Hook.Options = f.Options
	mws := []Middleware{Deadline(f.Deadline)}
	if env.Wrap != nil {
		mws = append(mws, env.Wrap)
	}
	h := Chain(Respond, append(mws, ReadInput(harness.MaxInputBytes), ScopeTo(f.Project), OpenStore(env, &f))...)
	return h(ctx, r).Write(stdout, stderr)
}
