// Package policy is statewright's decision core: given a compiled workflow
// (a Law), the run's state and one tool call, it decides allow, deny or ask,
// names the stable rule that fired, explains itself, and reports the effects
// the caller must record (iteration counts, files edited, interrupts).
//
// The package is pure: no I/O, no clock, no environment. The runtime resolves
// real paths (working directory, symlinks) and supplies them in the ToolCall;
// it also supplies the paths self-protection must guard (store, workflow
// files, binary) in Options.
//
// Decisions follow the decision pipeline's steps 1–9 (docs/architecture.md) in order: self-protection,
// dormancy, canonical tool names, control tools, final states,
// disallowed/allowed tools, per-tool checks (shell analysis,
// allowed_commands, blocked_env, edit limits, path scopes), max_iterations,
// and implicit-transition suggestions in every deny. See docs/policy.md.
package policy

import (
	"encoding/json"
	"fmt"

	"github.com/statewright-go/statewright/engine"
)

// Verdict is the outcome of a decision.
type Verdict uint8

// Verdicts. The zero value is Deny, so an uninitialised Decision fails closed.
const (
	Deny Verdict = iota
	Allow
	Ask
)

// String returns "allow", "deny" or "ask".
func (v Verdict) String() string {
	switch v {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	default:
		return "deny"
	}
}

// MarshalJSON encodes v as its string form.
func (v Verdict) MarshalJSON() ([]byte, error) {
	return []byte(`"` + v.String() + `"`), nil
}

// UnmarshalJSON decodes "allow", "deny" or "ask".
func (v *Verdict) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	p, err := ParseVerdict(s)
	if err != nil {
		return err
	}
	*v = p
	return nil
}

// ParseVerdict parses "allow", "deny" or "ask".
func ParseVerdict(s string) (Verdict, error) {
	switch s {
	case "allow":
		return Allow, nil
	case "deny":
		return Deny, nil
	case "ask":
		return Ask, nil
	}
	return Deny, fmt.Errorf("unknown decision %q (want allow, deny or ask)", s)
}

// Rule is the stable machine id of the rule that decided a call. Scripts and
// audit logs depend on these strings; they never change meaning.
type Rule string

// Rule ids. docs/policy.md lists them with their meanings.
const (
	// RuleSelfProtect: the call would touch statewright's own law or state
	// (store, workflow files, binary, harness settings and hooks, shell rc
	// files, .git/config, .git/hooks), run a mutating statewright
	// subcommand, or read an operator token. Applies in every state and when
	// no run is active.
	RuleSelfProtect Rule = "self-protect"
	// RuleDormant: no run is active and the hook does not require one; allowed.
	RuleDormant Rule = "dormant"
	// RuleNoWorkflow: no run is active and the hook requires one; denied.
	RuleNoWorkflow Rule = "no-workflow"
	// RuleUnknownState: the run names a state the workflow does not have; denied.
	RuleUnknownState Rule = "unknown-state"
	// RuleControlRead: a read-only statewright control tool; always allowed.
	RuleControlRead Rule = "control-read"
	// RuleControlTransition: statewright's transition tool; allowed, the engine resolves it.
	RuleControlTransition Rule = "control-transition"
	// RuleControlStart: starting a run when none is active (or the last is final); allowed.
	RuleControlStart Rule = "control-start"
	// RuleControlActive: starting or loading a workflow while a run is active; denied.
	RuleControlActive Rule = "control-active"
	// RuleControlHumanOnly: a control tool that weakens enforcement
	// (deactivate, pause, force_state, ...); only a person may grant it: ask.
	RuleControlHumanOnly Rule = "control-human-only"
	// RuleControlUnknown: an unknown tool under statewright's server prefix; denied.
	RuleControlUnknown Rule = "control-unknown"
	// RuleApprovalPending: a transition while the run awaits a human approval; denied.
	RuleApprovalPending Rule = "approval-pending"
	// RuleFinalState: the run is in a final state; everything but read-only control tools is denied.
	RuleFinalState Rule = "final-state"
	// RuleDisallowedTool: the tool is in the phase's disallowed_tools; denied.
	RuleDisallowedTool Rule = "disallowed-tool"
	// RuleToolNotAllowed: the tool is not in the phase's allowed_tools; denied.
	RuleToolNotAllowed Rule = "tool-not-allowed"
	// RuleBadInput: the tool input lacks what the decision needs (no command, no path); denied.
	RuleBadInput Rule = "bad-input"
	// RuleShellParseError: the shell command does not parse; denied.
	RuleShellParseError Rule = "shell-parse-error"
	// RuleShellCapability: the shell command needs a capability the phase does not grant; denied.
	RuleShellCapability Rule = "shell-capability"
	// RuleAllowedCommands: a simple command matches no allowed_commands entry; denied.
	RuleAllowedCommands Rule = "allowed-commands"
	// RuleBlockedEnv: the command reads a blocked_env variable or dumps the environment; denied.
	RuleBlockedEnv Rule = "blocked-env"
	// RuleMaxEditLines: the edit changes more lines than max_edit_lines (or a shell write whose size cannot be known); denied.
	RuleMaxEditLines Rule = "max-edit-lines"
	// RuleMaxFiles: the edit would exceed max_files_per_state distinct files; denied.
	RuleMaxFiles Rule = "max-files"
	// RulePathScope: the target is outside allowed_paths or inside denied_paths; denied.
	RulePathScope Rule = "path-scope"
	// RuleUnknownTarget: a shell write target that cannot be known statically, where writes are limited; denied.
	RuleUnknownTarget Rule = "unknown-target"
	// RuleMaxIterations: the phase's max_iterations is reached; denied until a transition.
	RuleMaxIterations Rule = "max-iterations"
	// RuleAllow: allowed by the phase's tools and every per-tool check.
	RuleAllow Rule = "allow"
	// RuleImplicitTransition: allowed in the next phase, which one
	// unguarded, approval-free event reaches; the workflow opted in
	// (meta.implicit_transitions: auto) and the runtime takes the transition
	// first (Effects.Transition).
	RuleImplicitTransition Rule = "implicit-transition"
	// RuleAllowMeta: a harness meta-tool (TodoWrite, AskUserQuestion, Task, ...); allowed in every non-final phase.
	RuleAllowMeta Rule = "allow-meta"
	// RuleSandboxEscape: a shell call asks its harness to run outside the
	// sandbox (dangerouslyDisableSandbox, Codex escalation fields) and the
	// static law would allow it; only a person may agree: ask.
	RuleSandboxEscape Rule = "sandbox-escape"
	// RulePermissionDeny: a deny rule of the phase's permissions (or the
	// workflow's) names the call; denied.
	RulePermissionDeny Rule = "permission-deny"
	// RulePermissionAsk: an ask rule names the call, which the phase would
	// otherwise allow with that rule's grant: a person must agree.
	RulePermissionAsk Rule = "permission-ask"
	// RulePermissionAllow: allowed because allow rules name the call (the
	// phase's tool list and capabilities do not cover it on their own).
	RulePermissionAllow Rule = "permission-allow"
	// RulePermissionGranted: an ask rule names the call and a person
	// granted this very call (ToolCall.Granted); allowed once.
	RulePermissionGranted Rule = "permission-granted"
	// RuleDomain: network access to a host outside the phase's
	// allowed_domains (or one a domain deny rule names), or to a host that
	// cannot be known before the command runs where no OS sandbox's proxy
	// enforces the list; denied.
	RuleDomain Rule = "domain"
	// RuleToolCapability: an MCP tool's trusted annotations say it is
	// destructive or reaches the open world, and the phase does not grant
	// Destructive or Network; denied.
	RuleToolCapability Rule = "tool-capability"
	// RuleInternal: the decision core failed (for example the shell analysis panicked); denied.
	RuleInternal Rule = "internal-error"
)

// AllRules lists every rule id, for documentation and tests.
var AllRules = []Rule{
	RuleSelfProtect, RuleDormant, RuleNoWorkflow, RuleUnknownState,
	RuleControlRead, RuleControlTransition, RuleControlStart, RuleControlActive,
	RuleControlHumanOnly, RuleControlUnknown, RuleApprovalPending, RuleFinalState,
	RuleDisallowedTool, RuleToolNotAllowed, RuleBadInput, RuleShellParseError,
	RuleShellCapability, RuleAllowedCommands, RuleBlockedEnv, RuleMaxEditLines,
	RuleMaxFiles, RulePathScope, RuleUnknownTarget, RuleMaxIterations,
	RuleAllow, RuleAllowMeta, RuleImplicitTransition, RuleSandboxEscape,
	RulePermissionDeny, RulePermissionAsk, RulePermissionAllow, RulePermissionGranted, RuleDomain, RuleToolCapability,
	RuleInternal,
}

// Decision is the answer for one tool call.
//
// AllowedTools and NextEvents may share memory with the Law: callers must not
// mutate them.
type Decision struct {
	// Verdict is allow, deny or ask.
	Verdict Verdict `json:"decision"`
	// Rule is the stable id of the rule that decided.
	Rule Rule `json:"rule"`
	// Reason is human text: for a deny it names the phase, the rule, the
	// tools that are allowed and the events that lead to a phase where the
	// call would be allowed.
	Reason string `json:"reason"`
	// AllowedTools is the phase's allowed_tools as written (["*"] when the
	// phase allows any tool, empty when there is no phase).
	AllowedTools []string `json:"allowed_tools"`
	// NextEvents lists the events of the current phase that lead, in one
	// step, to a phase where this call would be allowed (including guarded
	// and approval-gated ones; Reason says which are which). Empty on allow.
	NextEvents []string `json:"next_events"`
	// Tool is the canonical tool name the call was decided as ("Read",
	// "Bash", ...) or the raw name for tools without a canonical form.
	Tool string `json:"-"`
	// Effects are what the caller must record for this call.
	Effects Effects `json:"-"`
}

// Effects are the state changes a decision implies. The runtime applies them
// in the same transaction that records the decision.
type Effects struct {
	// CountIteration is true when the call counts toward max_iterations
	// (every allowed or denied ordinary tool call in an active run; not
	// control or meta tools).
	CountIteration bool
	// FilesEdited lists the files this call edits or writes (normalised as
	// described in docs/policy.md), for files_edited and max_files_per_state.
	FilesEdited []string
	// EditedLines is the number of lines the call changes, when known.
	EditedLines int
	// Transition is the event the runtime must apply (through the engine)
	// before the call runs, for an implicit transition.
	Transition string
	// TransitionTarget is the phase Transition leads to.
	TransitionTarget string
	// FireInterrupt names the interrupt an edited file triggers ("" for none).
	FireInterrupt string
	// InterruptTarget is the fired interrupt's target state.
	InterruptTarget string
	// InterruptFile is the edited file (project-relative) that fired it.
	InterruptFile string
}

// Approval is a pending human approval of a transition.
type Approval struct {
	// ID identifies the approval request.
	ID string `json:"id"`
	// Event is the event that requested the transition.
	Event string `json:"event,omitempty"`
	// To is the state the run moves to once approved.
	To string `json:"to,omitempty"`
	// Message is the approval message shown to the approver.
	Message string `json:"message,omitempty"`
}

// RunState is the part of a run the policy reads.
type RunState struct {
	// Active is false when no run is active for the session (dormant).
	Active bool `json:"active"`
	// State is the current state name.
	State string `json:"state"`
	// Iterations counts the tool calls made in the current state.
	Iterations uint32 `json:"iterations,omitempty"`
	// FilesEdited lists the distinct files edited in the current state, in
	// the normalised form Effects.FilesEdited reports.
	FilesEdited []string `json:"files_edited,omitempty"`
	// PendingApproval is set while the run awaits a human approval.
	PendingApproval *Approval `json:"pending_approval,omitempty"`
	// History is the interrupt stack, innermost last (the engine's frames).
	History []engine.Frame `json:"history,omitempty"`
}

// ToolCall is one tool call as the harness reported it.
type ToolCall struct {
	// Harness names the harness's alias table; "" means claude-code.
	Harness Harness `json:"harness,omitempty"`
	// Tool is the raw tool name the harness reported ("Bash", "exec_command", ...).
	Tool string `json:"tool"`
	// Input is the tool input as JSON (an object).
	Input json.RawMessage `json:"input,omitempty"`
	// Cwd is the working directory relative paths are resolved against
	// (lexically). Empty leaves relative paths relative.
	Cwd string `json:"cwd,omitempty"`
	// ProjectDir is the project root that relative allowed_paths,
	// denied_paths and interrupt patterns are matched against. Empty means Cwd.
	ProjectDir string `json:"project_dir,omitempty"`
	// ResolvedPaths maps a target path as written in the input or command
	// to its real path (symlinks resolved by the runtime). Missing entries
	// are resolved lexically against Cwd.
	ResolvedPaths map[string]string `json:"resolved_paths,omitempty"`
	// ToolUseID is the harness's id for the call (not used by the decision;
	// carried for the caller's idempotency).
	ToolUseID string `json:"tool_use_id,omitempty"`
	// Sandboxed says the call's shell command will run under the phase's OS
	// sandbox (docs/sandbox.md: the profile in force is an input of the
	// decision). With it, a phase whose sandbox block sets exec lets
	// Exec-class commands run; without it they are decided by the static
	// law alone.
	//
	// Outside the sandbox, shell writes whose targets cannot be known
	// statically and reads whose reach cannot are denied; under it they are
	// left to the OS (protected trees read-only, secrets and store hidden).
	Sandboxed bool `json:"sandboxed,omitempty"`
	// Granted says a person granted this very call (tool and input) after
	// a permission ask rule asked for it: the runtime sets it when it
	// consumes the one-shot grant, and the ask rule then allows (rule
	// permission-granted). Nothing else changes: every other check applies.
	Granted bool `json:"granted,omitempty"`
	// Hints are an MCP tool's annotations as snapshotted when its server
	// was trusted (`statewright trust`); nil for every other tool, and for
	// servers nobody trusted (docs/permissions.md, "MCP annotations").
	Hints *ToolHints `json:"hints,omitempty"`
	// Resolver answers what the policy needs to know about the disk
	// (real paths, links, glob expansions, what a recursive read reaches).
	// The runtime sets it on the agent's host; nil decides on the paths as
	// written (ResolvedPaths, else lexically).
	Resolver Resolver `json:"-"`
	// Decoded, when set, keeps the tool input as the first decision of
	// this call that needed it decoded it, for the call's later decisions
	// (the runtime decides each call twice: once outside its store
	// transaction, once inside). A decision takes it only while Input is
	// byte for byte the input it was decoded from, and only reads it.
	Decoded *DecodedInput `json:"-"`

	// win marks a Windows-shaped call whose directories are in slash form
	// (winpath.go).
	win bool
}

// ToolHints are the MCP annotations the law reads (the MCP spec's
// ToolAnnotations). Each is true only where the server said so.
type ToolHints struct {
	// ReadOnly: the tool does not modify its environment. Where the
	// workflow opts in (mcp_read_only_hints), it admits the tool into a
	// phase that allows reading, unnamed.
	ReadOnly bool `json:"read_only,omitempty" yaml:"read_only"`
	// Destructive: the tool may destroy or overwrite (needs Destructive).
	Destructive bool `json:"destructive,omitempty" yaml:"destructive"`
	// OpenWorld: the tool reaches outside systems (needs Network).
	OpenWorld bool `json:"open_world,omitempty" yaml:"open_world"`
}

// caps returns the capabilities a tool with these hints needs: none for a
// read-only tool, else Destructive and Network as the hints say.
func (h *ToolHints) caps() capSet {
	var c capSet
	if h == nil || h.ReadOnly {
		return 0
	}
	if h.Destructive {
		c |= capDestructive
	}
	if h.OpenWorld {
		c |= capNetwork
	}
	return c
}

// Options configure a Law.
type Options struct {
	// RequireWorkflow denies every ordinary tool call while no run is active
	// (the hook was installed with --require-workflow).
	RequireWorkflow bool
	// ProtectedPaths are further paths self-protection guards against writes
	// (the store file, workflow files, the statewright binary,
	// CLAUDE_ENV_FILE), as absolute or project-relative paths. A path also
	// protects everything below it.
	ProtectedPaths []string
	// Host says where the law and the secrets live on this host (home,
	// configuration directory, project, git directories, store, binary).
	// nil leaves only the name patterns that apply anywhere.
	Host *Host
}
