// Package runtime is statewright's service layer: it starts runs, decides
// tool calls, records their results, transitions, and handles approvals —
// each operation one transaction over the store. Harness adapters (Claude
// Code hooks, the MCP server, ...) translate wire formats and call it; they
// hold no state of their own.
//
// Every decision re-reads the run from the store, calls the pure policy and
// engine, and writes the new run and its events atomically, so separate hook
// processes and long-lived servers agree.
package runtime

import (
	"encoding/json"
	"errors"
	"os"
	"slices"
	"time"

	"github.com/statewright-go/statewright/engine"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/sandbox"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/testreport"
)

// Errors returned by the Service, errors.Is-able. Store errors
// (store.ErrBusy, store.ErrStoreMismatch, ...) pass through wrapped.
var (
	// ErrNoRun: the session has no live run.
	ErrNoRun = errors.New("no active run for this session")
	// ErrRunActive: a run is already live for the session.
	ErrRunActive = errors.New("a run is already active for this session")
	// ErrNotAllowed: the actor may not do this (an agent asking for a
	// human-only operation, a workflow the project does not allow).
	ErrNotAllowed = errors.New("not allowed")
	// ErrNoApproval: no approval is pending, or the id does not match, or it expired.
	ErrNoApproval = errors.New("no such pending approval")
	// ErrApprovalPending: a transition was requested while an approval is pending.
	ErrApprovalPending = errors.New("a transition is awaiting approval")
	// ErrPaused: the run is paused by a person; only Resume or Deactivate move it.
	ErrPaused = errors.New("the run is paused")
	// ErrTransition: the engine refused the event (no such event, guard
	// failed, ambiguous, final state); the wrapped engine error says why.
	ErrTransition = errors.New("transition refused")
	// ErrWorkflow: the workflow cannot be loaded, does not validate, or a
	// run's snapshot no longer compiles.
	ErrWorkflow = errors.New("workflow")
)

// ActorKind says who asks for an operation.
type ActorKind string

// Actor kinds.
const (
	// ActorAgent is the governed agent (through a hook, the MCP server, a plugin).
	ActorAgent ActorKind = "agent"
	// ActorHuman is a person, authenticated by the channel (a terminal
	// confirmation, an operator token, the TUI, the web page with CSRF checks).
	ActorHuman ActorKind = "human"
)

// Actor identifies who asked for an operation and through which channel
// ("cli", "tui", "web", "mcp", "hook:claude-code", ...). It is recorded with
// every event. Adapters must only claim ActorHuman when their channel proves it.
type Actor struct {
	Kind    ActorKind `json:"kind"`
	Channel string    `json:"channel"`
	Name    string    `json:"name,omitempty"`
}

// WorkflowSource resolves workflow names to definitions and says which ones
// an agent may start. The default resolves bundled templates and files.
type WorkflowSource interface {
	// Load returns the workflow's source bytes and a canonical source name
	// ("template:bugfix", an absolute path).
	Load(name string) (src []byte, source string, err error)
	// AgentMayStart reports whether an agent may start this workflow
	// (docs/architecture.md, decision pipeline step 4: only a workflow the project allows).
	AgentMayStart(name string) bool
}

// Options configure a Service.
type Options struct {
	// Policy options: RequireWorkflow, ProtectedPaths (store file, workflow
	// files, the binary) are passed to every compiled law.
	Policy policy.Options
	// AuditOnly records what would be denied without denying (rollout mode).
	AuditOnly bool
	// DefaultWorkflow, when set, is started for a session at SessionStart.
	DefaultWorkflow string
	// Workflows resolves workflow names; nil means templates and files.
	Workflows WorkflowSource
	// ApprovalTTL is how long an approval request stays valid (default 24h).
	ApprovalTTL time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// MaxDepth bounds how deep sub-workflows (invoke) and forks nest in a
	// run started by this service (default DefaultMaxDepth). It is recorded
	// in the run's snapshot, so every process decides the run alike.
	MaxDepth int
	// ProjectDir is the project root: the default WorkflowSource lets agents
	// start files under ProjectDir/.statewright/workflows/ (default: the
	// working directory when New is called).
	ProjectDir string
	// Resolver answers the policy's questions about the disk (real paths,
	// links, globs, recursive reads). nil means this host's (NewResolver,
	// one per decision); a Service deciding for another host must be
	// handed calls whose Resolver is set or whose paths are resolved.
	Resolver policy.Resolver
	// NoResolve decides on the paths as written, never touching the disk
	// (a remote decider: docs/hooks.md).
	NoResolve bool
	// Observer is told about every decision (telemetry: metrics, traces);
	// nil: nothing is.
	Observer Observer
}

// DefaultApprovalTTL is how long an approval request stays valid when
// Options.ApprovalTTL is zero.
const DefaultApprovalTTL = 24 * time.Hour

// Service is the runtime. It is safe for concurrent use.
type Service struct {
	st   store.Store
	opts Options
	laws lawCache
}

// New returns a Service over st. It never fails: problems with the options
// (an unreadable working directory, a dormant law that does not compile)
// surface as errors from the operations that need them, so the adapter
// denies.
func New(st store.Store, opts Options) *Service {
	if opts.ApprovalTTL <= 0 {
		opts.ApprovalTTL = DefaultApprovalTTL
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.ProjectDir == "" {
		if wd, err := os.Getwd(); err == nil {
			opts.ProjectDir = wd
		}
	}
	if opts.Workflows == nil {
		opts.Workflows = DefaultWorkflows(opts.ProjectDir)
	}
	// The files that make up the store (an SQLite file and its side
	// files) are always protected from the agent's tools.
	db := ""
	if files := st.Identity().Files; len(files) > 0 {
		opts.Policy.ProtectedPaths = append(slices.Clone(opts.Policy.ProtectedPaths), files...)
		db = files[0]
	}
	if opts.Policy.Host == nil && !opts.NoResolve {
		opts.Policy.Host = DiscoverHost(HostOptions{ProjectDir: opts.ProjectDir, Store: db})
	}
	return &Service{st: st, opts: opts}
}

// RunView is a read-only view of a run for status displays and control tools.
type RunView struct {
	Run *store.Run `json:"run"`
	// IsFinal reports whether the run's state is final.
	IsFinal bool `json:"is_final"`
	// AllowedTools is the state's allowed_tools (nil = any).
	AllowedTools []string `json:"allowed_tools"`
	// Instructions is the state's guidance for the agent.
	Instructions string `json:"instructions,omitempty"`
	// NextEvents are the events available from the state.
	NextEvents []engine.EventInfo `json:"next_events"`
	// MaxIterations is the state's limit, when set.
	MaxIterations *uint32 `json:"max_iterations,omitempty"`
	// MaxEditLines and MaxFilesPerState are the state's edit limits, when set.
	MaxEditLines     *uint32 `json:"max_edit_lines,omitempty"`
	MaxFilesPerState *uint32 `json:"max_files_per_state,omitempty"`
	// Runtime is the evidence guards see under "runtime" (last command,
	// last test, files_edited, iterations).
	Runtime map[string]any `json:"runtime,omitempty"`
	// Workflow is the id of the workflow in force: the run's own, or the
	// invoked sub-workflow's while one runs.
	Workflow string `json:"workflow"`
	// Stack lists the levels suspended while sub-workflows and fork
	// branches run, outermost first (empty at the root workflow).
	Stack []StackEntry `json:"stack,omitempty"`
	// Interrupts is the current level's interrupt stack, innermost last
	// (non-empty inside an interrupt handler).
	Interrupts []engine.Frame `json:"interrupts,omitempty"`
	// Model and ThinkingLevel are the phase's (model falls back to
	// meta.default_model); opencode, Pi and the agent runner switch to
	// them, the other harnesses name them in the phase context.
	Model         string `json:"model,omitempty"`
	ThinkingLevel string `json:"thinking_level,omitempty"`
	// EnvOverrides are the environment values the phase expects.
	EnvOverrides map[string]string `json:"env_overrides,omitempty"`
	// ContextBudget is the phase's context_budget_bytes; ContextBytes the
	// bytes of tool output the agent received in the phase so far.
	ContextBudget *uint64 `json:"context_budget_bytes,omitempty"`
	ContextBytes  int64   `json:"context_bytes,omitempty"`
	// CaptureOutput reports meta.capture_output: tool outputs are recorded
	// with their results in the event log.
	CaptureOutput bool `json:"capture_output,omitempty"`
	// Warnings are the workflow's warnings ("file:line:col: warning:
	// message"), set only on the view Start returns: a tool name no
	// harness knows (with a did-you-mean) and the like. The CLI prints
	// them, statewright_start returns them, the phase context of the
	// session start names them and the run's "started" event records them.
	Warnings []string `json:"warnings,omitempty"`
}

// ToolCall is a tool call to decide, as the adapter decoded it.
type ToolCall struct {
	// Session is the harness session key (e.g. "claude-code:<session_id>").
	Session string
	// Call is the policy's view of the call (harness, tool, input, cwd, tool_use_id).
	Call policy.ToolCall
	// Actor is who makes the call (normally the agent through a hook).
	Actor Actor
	// PermissionMode is the harness's permission mode as its hook reported
	// it (Claude Code: default, acceptEdits, plan, auto, dontAsk,
	// bypassPermissions); it is recorded with an Ask's grant.
	PermissionMode string
	// HumanPrompt is set by the adapter when, in PermissionMode, the
	// harness puts an Ask to a person and reports through RecordResult,
	// with the same tool_use_id, whether the call went ahead (Claude Code:
	// only in the default mode). Only then does Decide answer Ask, and only
	// that confirmation grants it; otherwise an Ask becomes a deny naming
	// the statewright command a person can run instead.
	HumanPrompt bool
	// Sandbox, when set, says the adapter runs the call's shell command
	// under the OS sandbox (it also sets Call.Sandboxed, an input of the
	// decision) and where the profile's paths are; an allowed call's
	// DecideResult then carries the profile in force at the decision.
	Sandbox *policy.SandboxEnv
	// Settle are results of earlier calls of the same session that are
	// recorded in the decision's own transaction, before it (as
	// RecordResult would record them, in order): a gateway that answers a
	// call before recording its result writes once per call
	// (docs/gateway.md), and the run once: the results' counters are
	// written with the decision's iteration. A result that fails to record
	// fails the decision.
	Settle []ToolResult
	// OneShot says the caller made Call.ToolUseID up for this decision
	// alone (the MCP gateway: an MCP call carries no id), decides it once
	// and settles it itself, once, with the answer (ToolResult.Decided).
	// A decision that reserves nothing for its settlement (no edited
	// files, no interrupt, no grant) then writes no call record and reads
	// none: nothing can replay it, and its decision event is its record
	// in the log. Its result writes no record either. A decision that
	// reserves is recorded as any other.
	OneShot bool
	// digest is the input's digest, computed once per Decide, before the
	// store's transaction.
	digest string
}

// DecideResult is a decision plus what the adapter needs to answer the harness.
type DecideResult struct {
	policy.Decision
	// Enforced is false in audit-only mode (the call is allowed, the would-be
	// decision is recorded).
	Enforced bool `json:"enforced"`
	// Replayed is true when the decision was recorded before for the same
	// tool_use_id and is answered again without counting twice.
	Replayed bool `json:"replayed"`
	// State is the run's state at the decision ("" when dormant).
	State string `json:"state"`
	// Sandbox is the OS profile the call's command runs under: set for an
	// allowed call when ToolCall.Sandbox asked for it, derived from the
	// phase the call was decided in (after an implicit transition).
	Sandbox *sandbox.Profile `json:"sandbox,omitempty"`
	// unrecorded: a OneShot decision that wrote no call record; runID is
	// the run it was decided in ("" when dormant or ended). ToolResult.
	// Decided hands both back to settle it.
	unrecorded bool
	runID      string
}

// ToolResult is what PostToolUse / PostToolUseFailure report about a call.
type ToolResult struct {
	// Session is the harness session key, as for ToolCall.
	Session string
	// ToolUseID names the call (default Call.ToolUseID); the result is
	// idempotent on it (but see Decided).
	ToolUseID string
	// Call is the call as decided (tool and input: a shell command's
	// evidence is read from it).
	Call policy.ToolCall
	// Decided is the answer Decide gave a OneShot call (nil otherwise).
	// When that decision kept no call record, the result is settled from
	// it and records none: the caller settles each such call once.
	Decided *DecideResult
	// Failed is true for PostToolUseFailure.
	Failed bool
	// ExitCode is the shell command's exit status when known.
	ExitCode *int
	// Output is the tool's response (counted toward the phase's
	// context_budget_bytes, recorded under meta.capture_output); may be
	// empty.
	Output json.RawMessage
	// OutputBytes is the size of the whole output when the harness sends
	// a truncated copy in Output (0: Output is whole).
	OutputBytes int64
	// Actor is who reports (normally the agent through a hook).
	Actor Actor
	// TestReport is the structured test evidence the runner wrapper (the
	// sandbox launcher or `statewright testrun`) recorded for this call;
	// nil when the command did not run through one. Only it can make
	// runtime.last_test.passed true.
	TestReport *testreport.Evidence
}

// TransitionResult reports a transition request.
type TransitionResult struct {
	// From is the state the run was in; To the state it moved (or, when
	// parked, will move) to.
	From string `json:"from"`
	To   string `json:"to"`
	// Parked is true when the transition awaits human approval; ApprovalID names it.
	Parked     bool   `json:"parked"`
	ApprovalID string `json:"approval_id,omitempty"`
	// Message is the approval message shown to the approver.
	Message string `json:"message,omitempty"`
	// Outcome is the engine's outcome.
	Outcome engine.Outcome `json:"outcome"`
	// Final reports whether the run reached a final state (it is completed).
	Final bool `json:"final"`
	// Subflows lists what the transition did to the run's stack of
	// sub-workflows and forks, in order (an invoked workflow entered, a
	// fork branch started, child work returned); To is then the state the
	// run is in at the end. Empty for a plain move.
	Subflows []SubflowStep `json:"subflows,omitempty"`
	// Depth is the run's stack depth afterwards (0: its root workflow).
	Depth int `json:"depth,omitempty"`
}

// settled completes res after a move: where the run is now.
func (res *TransitionResult) settled(run *store.Run, steps []SubflowStep) {
	res.To = run.State
	res.Final = run.Status == store.StatusCompleted
	res.Subflows = steps
	if _, stack, err := readHistory(run); err == nil {
		res.Depth = len(stack)
	}
}
