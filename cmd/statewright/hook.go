package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/statewright-go/statewright/harness/claudecode"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
)

func init() { register(newHookCmd) }

// Hook timing. The hook answers before its own deadline, which init keeps
// well under the timeout it writes into the harness's settings (after
// which the harness kills the hook and fails open); the store's busy
// timeout stays under the deadline.
const (
	defaultHookDeadline = 5 * time.Second
	// defaultHookTimeout is the harness hook timeout init writes, in seconds.
	defaultHookTimeout = 10
)

// busyTimeoutFor returns the store busy timeout for a hook deadline: at
// most 40% of it, and never more than the store's default.
func busyTimeoutFor(deadline time.Duration) time.Duration {
	b := deadline * 2 / 5
	if b > store.DefaultBusyTimeout {
		b = store.DefaultBusyTimeout
	}
	if b < 10*time.Millisecond {
		b = 10 * time.Millisecond
	}
	return b
}

func newHookCmd() *cobra.Command {
	hook := &cobra.Command{
		Use:   "hook",
		Short: "Answer a coding harness's hook (the harness runs this, not people)",
		Long: "hook is the command a harness's hooks run. It reads the hook's JSON input on stdin, decides against " +
			"the session's run in the store, and answers in the harness's convention. `statewright init` writes the hook commands.",
	}
	hook.AddCommand(&cobra.Command{
		Use:   "claude-code EVENT [flags]",
		Short: "Answer a Claude Code hook: " + strings.Join(eventArgs(), ", "),
		Long: "Answer a Claude Code hook event. Flags:\n" + hookFlagSet(new(hookOptions)).FlagUsages() +
			"\nErrors are answered per event, failing closed: PreToolUse denies (exit 2); UserPromptSubmit and SessionStart " +
			"warn and keep the prompt; Stop lets the agent stop with a warning. See docs/claude-code.md.",
		// Flags are parsed by runHook itself, so that even a bad flag is
		// answered in the event's fail-closed way (a usage error's exit 2
		// would block a Stop forever or erase a prompt).
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
				return cmd.Help()
			}
			if code := runHook(append([]string{"claude-code"}, args...), cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()); code != 0 {
				os.Exit(code)
			}
			return nil
		},
	})
	for _, sub := range hookSubcommands {
		hook.AddCommand(sub())
	}
	return hook
}

// hookSubcommands are the other harnesses' hook commands (`statewright hook
// opencode`, ...), registered by their files with registerHook.
var hookSubcommands []func() *cobra.Command

// registerHook adds a harness's hook subcommand.
func registerHook(fns ...func() *cobra.Command) { hookSubcommands = append(hookSubcommands, fns...) }

func eventArgs() []string {
	out := make([]string, 0, len(claudecode.Events))
	for _, e := range claudecode.Events {
		out = append(out, e.Arg())
	}
	return out
}

// hookOptions are the hook command's flags. They live on the hook command
// line, which Claude Code snapshots at session start, never in a file the
// agent could write.
type hookOptions struct {
	store, storeID, storeIDFile string
	deadline                    time.Duration
	requireWorkflow, auditOnly  bool
	defaultWorkflow             string
}

func hookFlagSet(o *hookOptions) *pflag.FlagSet {
	fs := pflag.NewFlagSet("hook claude-code", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.store, "store", "", "the store file (default $"+store.EnvStore+", else the XDG state directory)")
	fs.StringVar(&o.storeID, "store-id", "", "the store's id; a store with another id (deleted, recreated, foreign) denies")
	fs.StringVar(&o.storeIDFile, "store-id-file", "", "read the store's id from this file instead (plugin installs)")
	fs.DurationVar(&o.deadline, "deadline", defaultHookDeadline, "answer (failing closed) by this deadline; keep it under the harness's hook timeout")
	fs.BoolVar(&o.requireWorkflow, "require-workflow", false, "deny every ordinary tool call while the session has no run")
	fs.StringVar(&o.defaultWorkflow, "default-workflow", "", "start this workflow for a session that has no run, at SessionStart")
	fs.BoolVar(&o.auditOnly, "audit-only", false, "record what would be denied, without denying")
	return fs
}

// runHook answers one hook: args are "claude-code EVENT [flags]". It
// returns the process exit code. Every failure is answered in the event's
// fail-closed way; nothing here may exit 0 or 1 on a PreToolUse it could
// not decide. main may call it directly, before building the cobra tree,
// to keep the hook path lean.
func runHook(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) < 2 || args[0] != "claude-code" {
		fmt.Fprintln(stderr, "statewright: usage: statewright hook claude-code EVENT [flags]; events:", strings.Join(eventArgs(), ", "))
		return claudecode.ExitBlock
	}
	event, err := claudecode.ParseEvent(args[1])
	if err != nil {
		// Unknown event: the safest answer is PreToolUse's (deny).
		return claudecode.Failure(claudecode.PreToolUse, err.Error()).Write(stdout, stderr)
	}
	h := &hookRun{event: event, stdout: stdout, stderr: stderr}
	return answerWithin[claudecode.Answer](h, "claude-code", args[2:],
		func(msg string) claudecode.Answer { return claudecode.Failure(event, msg) },
		func(ctx context.Context, o *hookOptions) claudecode.Answer { return h.handle(ctx, o, stdin) })
}

// answerer writes a hook's one answer: the work's, or the watchdog's when
// the deadline passes first.
type answerer[A any] interface {
	tryAnswer(A) (int, bool)
	answer(A) int
}

// answerWithin parses a hook's flags and answers with work's result under
// the hook's deadline. Every failure is answered by fail, the event's
// fail-closed answer: a flag error, or the deadline passing, in which case
// the watchdog answers and exits whatever the hook is blocked on.
func answerWithin[A any](h answerer[A], harness string, flags []string, fail func(msg string) A, work func(context.Context, *hookOptions) A) int {
	var o hookOptions
	if err := hookFlagSet(&o).Parse(flags); err != nil {
		return h.answer(fail("hook " + harness + ": " + err.Error()))
	}
	if o.deadline <= 0 {
		o.deadline = defaultHookDeadline
	}
	timer := time.AfterFunc(o.deadline, func() {
		if code, ok := h.tryAnswer(fail(fmt.Sprintf("the hook did not finish within its %v deadline", o.deadline))); ok {
			os.Exit(code)
		}
	})
	defer timer.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), o.deadline)
	defer cancel()
	return h.answer(work(ctx, &o))
}

// hookRun is one hook invocation; it answers exactly once.
type hookRun struct {
	event          claudecode.Event
	stdout, stderr io.Writer
	mu             sync.Mutex
	done           bool
}

// tryAnswer writes a unless an answer was written already.
func (h *hookRun) tryAnswer(a claudecode.Answer) (int, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done {
		return 0, false
	}
	h.done = true
	return a.Write(h.stdout, h.stderr), true
}

// answer writes a, or, when the watchdog answered first, waits for it to
// exit the process.
func (h *hookRun) answer(a claudecode.Answer) int {
	if code, ok := h.tryAnswer(a); ok {
		return code
	}
	select {}
}

// handle does the hook's work and returns its answer.
func (h *hookRun) handle(ctx context.Context, o *hookOptions, stdin io.Reader) claudecode.Answer {
	ev := h.event
	data, err := io.ReadAll(io.LimitReader(stdin, claudecode.MaxInputBytes+1))
	if err != nil {
		return claudecode.Failure(ev, "read hook input: "+err.Error())
	}
	in, err := claudecode.Decode(ev, data)
	if err != nil {
		return claudecode.Failure(ev, err.Error())
	}
	if ev == claudecode.SessionEnd {
		return claudecode.Pass() // nothing to decide or block
	}
	svc, closeStore, err := openHookRuntime(ctx, o, in)
	if err != nil {
		return claudecode.Failure(ev, err.Error())
	}
	defer closeStore()
	return hookAnswer(ctx, ev, svc, in, o, os.Getenv("CLAUDE_PROJECT_DIR"))
}

// hookAnswer decides a decoded hook event against svc: the part of the hook
// the command (a process per event) and `statewright serve`'s HTTP hook
// endpoint share. o supplies the default workflow and the
// require-workflow and audit-only switches.
func hookAnswer(ctx context.Context, ev claudecode.Event, svc *runtime.Service, in *claudecode.Input, o *hookOptions, projectDir string) claudecode.Answer {
	if ev == claudecode.SessionEnd {
		return claudecode.Pass()
	}
	session := claudecode.SessionKey(in.SessionID)

	switch ev {
	case claudecode.PreToolUse:
		res, err := svc.Decide(ctx, claudecode.ToolCall(in, projectDir))
		if err != nil {
			return claudecode.Failure(ev, "decide "+in.ToolName+": "+err.Error())
		}
		return claudecode.PreToolAnswer(in, res)

	case claudecode.PostToolUse, claudecode.PostToolUseFailure:
		err := svc.RecordResult(ctx, claudecode.ToolResult(in, ev, projectDir))
		if err != nil && !errors.Is(err, runtime.ErrNoRun) {
			return claudecode.Failure(ev, "record the result of "+in.ToolName+": "+err.Error())
		}
		if !claudecode.IsControlTool(in.ToolName) {
			return claudecode.Pass()
		}
		// After a control call (a transition, a start) tell the agent where it is now.
		v, err := svc.Status(ctx, session)
		if err != nil {
			return claudecode.Pass()
		}
		return claudecode.Context(ev, claudecode.PhaseContext(v))

	case claudecode.SessionStart, claudecode.UserPromptSubmit:
		v, err := svc.Status(ctx, session)
		if errors.Is(err, runtime.ErrNoRun) && ev == claudecode.SessionStart && o.defaultWorkflow != "" {
			// The operator named the default workflow on the hook command line.
			v, err = svc.Start(ctx, session, o.defaultWorkflow,
				runtime.Actor{Kind: runtime.ActorHuman, Channel: "hook-config:claude-code", Name: "--default-workflow"})
			if errors.Is(err, runtime.ErrRunActive) {
				v, err = svc.Status(ctx, session)
			}
		}
		switch {
		case errors.Is(err, runtime.ErrNoRun):
			if o.requireWorkflow {
				return claudecode.Context(ev, fmt.Sprintf("[statewright] No workflow run is active for this session (%s) and this project requires one: "+
					"every tool call is denied until a run starts (a person runs `statewright start WORKFLOW --session %s`, or you call %s).",
					in.SessionID, in.SessionID, claudecode.StartTool))
			}
			return claudecode.Pass()
		case err != nil:
			return claudecode.Failure(ev, "read the run: "+err.Error())
		}
		return claudecode.Context(ev, claudecode.PhaseContext(v))

	case claudecode.Stop, claudecode.SubagentStop:
		if in.StopHookActive {
			return claudecode.Pass()
		}
		v, err := svc.Status(ctx, session)
		switch {
		case errors.Is(err, runtime.ErrNoRun):
			return claudecode.Pass()
		case err != nil:
			return claudecode.Failure(ev, "read the run: "+err.Error())
		}
		if o.auditOnly {
			return claudecode.Pass()
		}
		if reason := claudecode.StopReason(in, v); reason != "" {
			return claudecode.BlockStop(reason)
		}
		return claudecode.Pass()
	}
	return claudecode.Failure(ev, "unhandled event "+string(ev))
}

// openHookRuntime opens the store the hook command names (it must exist and
// carry the named id) and the runtime over it.
func openHookRuntime(ctx context.Context, o *hookOptions, in *claudecode.Input) (*runtime.Service, func(), error) {
	projectDir := os.Getenv("CLAUDE_PROJECT_DIR")
	if projectDir == "" {
		projectDir = in.Cwd
	}
	svc, st, err := openHookStore(ctx, o, projectDir, nil)
	if err != nil {
		return nil, nil, err
	}
	return svc, func() { st.Close() }, nil
}

// openHookStore opens the store a hook command names (it must exist and
// carry the named id) and the runtime over it, for a project directory.
// workflows, when set, is the runtime's workflow source.
func openHookStore(ctx context.Context, o *hookOptions, projectDir string, workflows runtime.WorkflowSource) (*runtime.Service, store.Store, error) {
	path, err := store.ResolvePath(o.store, nil)
	if err != nil {
		return nil, nil, err
	}
	id := o.storeID
	var protected []string
	if o.storeIDFile != "" {
		b, err := os.ReadFile(o.storeIDFile)
		if err != nil {
			return nil, nil, fmt.Errorf("read the store id: %w", err)
		}
		id = strings.TrimSpace(string(b))
		protected = append(protected, o.storeIDFile)
	}
	if id == "" {
		return nil, nil, errors.New("the hook command names no store id (--store-id); run `statewright init` for the harness to install the hooks")
	}
	st, err := openStoreAt(ctx, path, storeOptions{MustExist: true, ExpectID: id, BusyTimeout: busyTimeoutFor(o.deadline)})
	if err != nil {
		return nil, nil, fmt.Errorf("open store: %w", err)
	}
	// The runtime protects the store's own files (SQLite: the file, its WAL,
	// shared memory, journal and lock file).
	if exe, err := os.Executable(); err == nil {
		protected = append(protected, exe)
	}
	if f := os.Getenv("CLAUDE_ENV_FILE"); f != "" && filepath.IsAbs(f) {
		protected = append(protected, f)
	}
	svc := runtime.New(st, runtime.Options{
		Policy:          policy.Options{RequireWorkflow: o.requireWorkflow, ProtectedPaths: protected},
		AuditOnly:       o.auditOnly,
		DefaultWorkflow: o.defaultWorkflow,
		ProjectDir:      projectDir,
		Workflows:       workflows,
	})
	return svc, st, nil
}
