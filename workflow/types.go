// Package workflow defines statewright workflow definitions: the data model,
// strict JSON/YAML parsing with source positions, structural and safety
// validation, the JSON Schema, and the bundled templates.
//
// The package is pure: it does no I/O beyond reading the embedded templates.
package workflow

import (
	"encoding/json"
	"fmt"
)

// Pos is a 1-based line:column position in a workflow source file.
// The zero Pos means "unknown".
type Pos struct {
	Line int `json:"line"`
	Col  int `json:"col"`
}

// IsValid reports whether p names a real position.
func (p Pos) IsValid() bool { return p.Line > 0 }

// String renders p as "line:col".
func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Col) }

// Definition is one workflow: a state machine whose states are phases of an
// agent's work. It is a superset of the statewright (Rust) format.
type Definition struct {
	// ID identifies the workflow.
	ID string `json:"id"`
	// Initial names the state a new run starts in.
	Initial string `json:"initial"`
	// Context is the initial guard context. Never nil after parsing.
	Context map[string]any `json:"context,omitempty"`
	// States maps a state name to its definition.
	States map[string]*State `json:"states"`
	// Guards maps a guard name to its predicate.
	Guards map[string]*Guard `json:"guards,omitempty"`
	// Meta carries metadata for the agent layer and unknown keys.
	Meta *Meta `json:"meta,omitempty"`
	// Interrupts maps an interrupt name to its file-pattern trigger.
	Interrupts map[string]*Interrupt `json:"interrupts,omitempty"`
	// Secrets changes the default secret set the agent may never read
	// ("secrets"; nil keeps the defaults). See docs/policy.md.
	Secrets *Secrets `json:"secrets,omitempty"`
	// TrustEventData restores statewright's behaviour of merging event data
	// into the context before guards are evaluated ("trust_event_data").
	TrustEventData bool `json:"trust_event_data,omitempty"`
	// TrustEventDataSet reports that the file sets "trust_event_data"
	// explicitly (to either value). Such a file declares that it is written
	// for statewright-go's semantics, and Validate emits no compatibility
	// notes about semantic changes for it.
	TrustEventDataSet bool `json:"-"`
	// Compat is "statewright" for a file written for the original that
	// opts into its reading: unknown keys are warnings, and the privilege
	// ladder uses the Rust project's numbering. "" otherwise.
	Compat string `json:"compat,omitempty"`
	// ToolPrivileges rates tools no alias table knows on the privilege
	// ladder: tool name → "read", "write", "execute", "git" or "external".
	ToolPrivileges map[string]string `json:"tool_privileges,omitempty"`
	// Permissions are Claude Code-style permission rules every phase
	// inherits ("permissions"; docs/permissions.md).
	Permissions *Permissions `json:"permissions,omitempty"`
	// AllowedDomains is the network allow-list of every phase that does not
	// set its own ("allowed_domains"; nil: no list).
	AllowedDomains []string `json:"allowed_domains,omitzero"`
	// MCPReadOnlyHints lets a trusted MCP server's readOnlyHint admit its
	// tool into phases that allow reading ("mcp_read_only_hints"); a phase
	// may say otherwise.
	MCPReadOnlyHints *bool `json:"mcp_read_only_hints,omitempty"`
	// Examples are tool calls with the answer every non-final phase (or the
	// phase an example names) must give; checked whenever the workflow loads.
	Examples *Examples `json:"examples,omitempty"`

	// Source is the file name the definition was parsed from, if any.
	Source string `json:"-"`
	// Pos is where the definition's top-level object starts.
	Pos Pos      `json:"-"`
	fp  fieldPos // positions of individual fields, filled by Parse
}

// FieldPos returns where one of the top-level fields was written
// ("permissions", "allowed_domains[1]", ...), or the definition's position.
func (def *Definition) FieldPos(key string) Pos { return def.fp.at(key, def.Pos) }

// Secrets extends or switches off the default secret set (.env*, *.pem,
// ~/.ssh, ~/.aws, ...). statewright's own credentials stay secret whatever
// it says.
type Secrets struct {
	// Defaults, when false, drops the default secret set ("defaults").
	Defaults *bool `json:"defaults,omitempty"`
	// Paths are further secrets: absolute or "~/" paths, project-relative
	// doublestar patterns, or base-name patterns without "/" that match at
	// any depth ("paths").
	Paths []string `json:"paths,omitzero"`

	// Pos is where the object starts.
	Pos Pos `json:"-"`
}

// StateType is the kind of a state.
type StateType string

// State types.
const (
	StateNormal   StateType = ""
	StateFinal    StateType = "final"
	StateParallel StateType = "parallel" // accepted for compatibility; no behaviour
)

// State is one phase of a workflow.
//
// Slices distinguish absent from empty: a nil AllowedTools means any tool is
// allowed, a non-nil empty one means none is.
type State struct {
	// Name is the state's key in Definition.States.
	Name string `json:"-"`
	// On maps an event name to its transition.
	On map[string]*Transition `json:"on,omitempty"`
	// Type marks final (terminal) states.
	Type StateType `json:"type,omitempty"`
	// AllowedTools lists tool names and capabilities permitted in the state.
	AllowedTools []string `json:"allowed_tools,omitzero"`
	// DisallowedTools lists tool names that are denied; it wins over AllowedTools.
	DisallowedTools []string `json:"disallowed_tools,omitzero"`
	// Instructions is guidance shown to the agent.
	Instructions string `json:"instructions,omitempty"`
	// MaxIterations bounds the tool calls made in the state.
	MaxIterations *uint32 `json:"max_iterations,omitempty"`
	// SafeNext is the fallback target for an event that resolves to nothing.
	SafeNext string `json:"safe_next,omitempty"`
	// MaxEditLines bounds the lines one edit may change.
	MaxEditLines *uint32 `json:"max_edit_lines,omitempty"`
	// AllowedCommands restricts shell commands by parsed argv prefix.
	AllowedCommands []string `json:"allowed_commands,omitzero"`
	// AllowedCommandsTool names the shell tool AllowedCommands applies to (default Bash).
	AllowedCommandsTool string `json:"allowed_commands_tool,omitempty"`
	// MaxFilesPerState bounds the distinct files edited in the state.
	MaxFilesPerState *uint32 `json:"max_files_per_state,omitempty"`
	// ContextBudgetBytes is a warning budget for accumulated tool output.
	ContextBudgetBytes *uint64 `json:"context_budget_bytes,omitempty"`
	// BlockedEnv lists environment variables shell commands must not read
	// (alias "deny_env").
	BlockedEnv []string `json:"blocked_env,omitzero"`
	// EnvOverrides are advisory environment values (alias "env").
	EnvOverrides map[string]string `json:"env_overrides,omitzero"`
	// Model is the per-state model id.
	Model string `json:"model,omitempty"`
	// ThinkingLevel is the per-state reasoning level.
	ThinkingLevel string `json:"thinking_level,omitempty"`
	// DirectExecution asks an orchestrator to delegate the state to the agent runner.
	DirectExecution bool `json:"direct_execution,omitempty"`
	// ModelLadder is an opaque escalation ladder.
	ModelLadder []any `json:"model_ladder,omitempty"`
	// AllowedPaths, when set, limits edits to paths matching one of these globs (extension).
	AllowedPaths []string `json:"allowed_paths,omitzero"`
	// DeniedPaths forbids edits to paths matching one of these globs (extension).
	DeniedPaths []string `json:"denied_paths,omitzero"`
	// Sandbox tunes the OS sandbox that shell commands run under in this
	// state (extension; docs/sandbox.md).
	Sandbox *SandboxPolicy `json:"sandbox,omitempty"`
	// Permissions are Claude Code-style permission rules for this phase,
	// added to the workflow's (extension; docs/permissions.md).
	Permissions *Permissions `json:"permissions,omitempty"`
	// AllowedDomains, when set, is the only network this phase may reach:
	// hosts (and "*.example.com" for subdomains) for the fetch tools and the
	// shell's network programs (extension; nil inherits the workflow's).
	AllowedDomains []string `json:"allowed_domains,omitzero"`
	// MCPReadOnlyHints overrides the workflow's mcp_read_only_hints.
	MCPReadOnlyHints *bool `json:"mcp_read_only_hints,omitempty"`
	// Examples are tool calls with the answer this phase must give.
	Examples *Examples `json:"examples,omitempty"`

	// Pos is where the state's object starts.
	Pos Pos      `json:"-"`
	fp  fieldPos // positions of individual fields, filled by Parse
}

// SandboxPolicy is a state's "sandbox" block: what the phase's OS sandbox
// adds to the profile derived from its tools (docs/sandbox.md).
type SandboxPolicy struct {
	// Writable are further paths (project-relative or absolute, "~/" for
	// the home directory; no globs) that commands may write in this state.
	// A protected tree stays read-only whatever this says.
	Writable []string `json:"writable,omitzero"`
	// Hidden are further paths commands must not see in this state.
	Hidden []string `json:"hidden,omitzero"`
	// Exec lets Exec-class commands (interpreters, scripts, make, go run,
	// unknown programs) run in this state when the sandbox is in force,
	// because the sandbox keeps them inside the state's write scope. Without
	// a sandbox they stay denied. Validation rejects it together with
	// max_edit_lines or max_files_per_state, which a sandbox cannot count.
	Exec bool `json:"exec,omitempty"`

	// Pos is where the block starts.
	Pos Pos      `json:"-"`
	fp  fieldPos // positions of individual fields
}

// Permissions are permission rules in Claude Code's syntax: "Tool" or
// "Tool(specifier)" — Bash(git push:*), Read(./secrets/**),
// Edit(src/**), WebFetch(domain:example.com), mcp__server__tool,
// mcp__server__*. Deny wins, then ask, then allow (docs/permissions.md).
type Permissions struct {
	Allow []string `json:"allow,omitzero"`
	Ask   []string `json:"ask,omitzero"`
	Deny  []string `json:"deny,omitzero"`

	// Pos is where the object starts.
	Pos Pos      `json:"-"`
	fp  fieldPos // "allow[0]", ...
}

// FieldPos returns where a list or one of its entries ("deny[2]") was
// written, or the object's position.
func (p *Permissions) FieldPos(key string) Pos { return p.fp.at(key, p.Pos) }

// Examples are inline rule tests: tool calls and the verdict the law must
// give them.
type Examples struct {
	Allow []*Example `json:"allow,omitzero"`
	Ask   []*Example `json:"ask,omitzero"`
	Deny  []*Example `json:"deny,omitzero"`

	// Pos is where the object starts.
	Pos Pos `json:"-"`
}

// Example is one tool call of an inline test, written either in rule
// syntax ("Bash(git push origin main)", "Read(.env)") or as an object
// {tool, input, state, harness}.
type Example struct {
	// Text is the example as written in rule syntax ("" for the object form).
	Text string `json:"-"`
	// Tool is the raw tool name (object form).
	Tool string `json:"tool,omitempty"`
	// Input is the tool input (object form).
	Input map[string]any `json:"input,omitempty"`
	// State names the phase the example is decided in (object form; a
	// workflow-level example without one is decided in every non-final phase).
	State string `json:"state,omitempty"`
	// Harness names the harness whose tool names Tool uses (default claude-code).
	Harness string `json:"harness,omitempty"`

	// Pos is where the example was written.
	Pos Pos `json:"-"`
}

// MarshalJSON writes an example in the form it was written.
func (e *Example) MarshalJSON() ([]byte, error) {
	if e.Text != "" {
		return json.Marshal(e.Text)
	}
	type plain Example
	return json.Marshal((*plain)(e))
}

// FieldPos returns where one of the state's fields was written
// ("allowed_tools", "allowed_tools[2]", ...), or the state's own position
// when unknown.
func (s *State) FieldPos(key string) Pos { return s.fp.at(key, s.Pos) }

// IsFinal reports whether s is a terminal state.
func (s *State) IsFinal() bool { return s != nil && s.Type == StateFinal }

// TransitionKind names the five shapes a transition can take.
type TransitionKind int

// Transition shapes, in statewright's order of recognition.
const (
	TransitionSimple  TransitionKind = iota // "on": {"GO": "target"}
	TransitionFull                          // {"target": ..., "guard": ..., "requires_approval": ...}
	TransitionGuarded                       // [{"target": ..., "guard": ...}, ...]
	TransitionFork                          // {"fork": {...}}
	TransitionInvoke                        // {"invoke": ..., "on_complete": ...}
)

// ReturnTarget is the pseudo-target that pops the interrupt history stack.
const ReturnTarget = "$return"

// Transition is the value under one event of a state's "on" map.
type Transition struct {
	// Kind is the transition's shape.
	Kind TransitionKind `json:"-"`
	// Target is the destination state (Simple and Full).
	Target string `json:"target,omitempty"`
	// Guard names one guard that must pass (Full).
	Guard string `json:"guard,omitempty"`
	// Guards names further guards that must all pass (Full).
	Guards []string `json:"guards,omitempty"`
	// RequiresApproval parks the run until a human approves (Full).
	RequiresApproval bool `json:"requires_approval,omitempty"`
	// ApprovalMessage is shown to the approver (Full).
	ApprovalMessage string `json:"approval_message,omitempty"`
	// Branches are the guarded alternatives, first passing wins (Guarded).
	Branches []*Branch `json:"-"`
	// Fork describes parallel branches and their join (Fork).
	Fork *Fork `json:"fork,omitempty"`
	// Invoke describes a sub-machine call (Invoke).
	Invoke *Invoke `json:"-"`

	// Pos is where the transition's value starts.
	Pos Pos      `json:"-"`
	fp  fieldPos // positions of individual fields, filled by Parse
}

// PrimaryTarget returns the state a transition leads to for matching and
// reachability: the target, the first branch's target, or on_complete.
func (t *Transition) PrimaryTarget() string {
	switch t.Kind {
	case TransitionGuarded:
		if len(t.Branches) == 0 {
			return ""
		}
		return t.Branches[0].Target
	case TransitionFork:
		return t.Fork.OnComplete
	case TransitionInvoke:
		return t.Invoke.OnComplete
	default:
		return t.Target
	}
}

// Targets returns every state the transition may lead to, in order.
func (t *Transition) Targets() []string {
	switch t.Kind {
	case TransitionGuarded:
		out := make([]string, 0, len(t.Branches))
		for _, b := range t.Branches {
			out = append(out, b.Target)
		}
		return out
	case TransitionFork:
		out := []string{t.Fork.OnComplete}
		if t.Fork.OnFail != "" {
			out = append(out, t.Fork.OnFail)
		}
		return out
	case TransitionInvoke:
		out := []string{t.Invoke.OnComplete}
		if t.Invoke.OnFail != "" {
			out = append(out, t.Invoke.OnFail)
		}
		return out
	default:
		return []string{t.Target}
	}
}

// GuardNames returns the guards of a Full transition: Guard first, then Guards.
func (t *Transition) GuardNames() []string {
	if t.Kind != TransitionFull {
		return nil
	}
	var out []string
	if t.Guard != "" {
		out = append(out, t.Guard)
	}
	return append(out, t.Guards...)
}

// Branch is one alternative of a guarded transition.
type Branch struct {
	Target string   `json:"target"`
	Guard  string   `json:"guard,omitempty"`
	Guards []string `json:"guards,omitempty"`
	Pos    Pos      `json:"-"`
	fp     fieldPos
}

// GuardNames returns Guard first, then Guards.
func (b *Branch) GuardNames() []string {
	var out []string
	if b.Guard != "" {
		out = append(out, b.Guard)
	}
	return append(out, b.Guards...)
}

// JoinStrategy says when a fork's branches are joined.
type JoinStrategy string

// Join strategies.
const (
	JoinAll JoinStrategy = "all"
	JoinAny JoinStrategy = "any"
)

// Fork runs branches of the same machine and joins them.
type Fork struct {
	Branches   map[string]*ForkBranch `json:"branches"`
	Join       JoinStrategy           `json:"join"`
	OnComplete string                 `json:"on_complete"`
	OnFail     string                 `json:"on_fail,omitempty"`
	Pos        Pos                    `json:"-"`
	fp         fieldPos
}

// ForkBranch is one branch of a fork: it runs from Initial until Terminal.
type ForkBranch struct {
	Initial  string `json:"initial"`
	Terminal string `json:"terminal"`
	Pos      Pos    `json:"-"`
	fp       fieldPos
}

// Invoke calls another workflow as a sub-machine.
type Invoke struct {
	Machine    string `json:"invoke"`
	OnComplete string `json:"on_complete"`
	OnFail     string `json:"on_fail,omitempty"`
	Input      any    `json:"input,omitempty"`
	Pos        Pos    `json:"-"`
	fp         fieldPos
}

// GuardOp is a guard comparison operator.
type GuardOp string

// Guard operators.
const (
	OpEq        GuardOp = "eq"
	OpNeq       GuardOp = "neq"
	OpGt        GuardOp = "gt"
	OpGte       GuardOp = "gte"
	OpLt        GuardOp = "lt"
	OpLte       GuardOp = "lte"
	OpExists    GuardOp = "exists"
	OpNotExists GuardOp = "not_exists"
	OpIn        GuardOp = "in"
	OpContains  GuardOp = "contains"
	OpMatches   GuardOp = "matches"
)

// Guard is a predicate over the run's context. Exactly one form is set:
// a comparison (Field, Op, Value), a combinator (All, Any, Not), or a
// reference to a named guard (Ref, only inside combinators).
//
// Field is a dotted path ("runtime.last_command.exit_code"). Values decoded
// from workflow files are nil, bool, string, int64, float64, []any or
// map[string]any; numeric comparison treats 1 and 1.0 as equal.
type Guard struct {
	Field string  `json:"field,omitempty"`
	Op    GuardOp `json:"op,omitempty"`
	Value any     `json:"value,omitempty"`

	All []*Guard `json:"all,omitempty"`
	Any []*Guard `json:"any,omitempty"`
	Not *Guard   `json:"not,omitempty"`
	Ref string   `json:"-"`

	Pos Pos `json:"-"`
	fp  fieldPos
}

// Interrupt is a detour fired when an edited file matches a pattern.
type Interrupt struct {
	Trigger InterruptTrigger `json:"trigger"`
	Target  string           `json:"target"`
	// Priority orders interrupts that match the same file: lower first, then
	// by name (extension; statewright uses name order only).
	Priority int `json:"priority,omitempty"`
	Pos      Pos `json:"-"`
	fp       fieldPos
}

// InterruptTrigger says which edits fire an interrupt.
type InterruptTrigger struct {
	// FilePattern is a doublestar glob matched against the edited path.
	FilePattern string `json:"file_pattern"`
}

// DangerLevel is a workflow's declared risk.
type DangerLevel string

// Danger levels.
const (
	DangerSafe      DangerLevel = "safe"
	DangerModerate  DangerLevel = "moderate"
	DangerDangerous DangerLevel = "dangerous"
)

// Meta is workflow metadata. Unknown keys are kept in Extra.
type Meta struct {
	TaskType              string           `json:"task_type,omitempty"`
	EstimatedSteps        *uint32          `json:"estimated_steps,omitempty"`
	DangerLevel           DangerLevel      `json:"danger_level,omitempty"`
	RequiresHumanApproval *bool            `json:"requires_human_approval,omitempty"`
	CaptureOutput         bool             `json:"capture_output,omitempty"`
	DefaultModel          string           `json:"default_model,omitempty"`
	Workspace             *WorkspacePolicy `json:"workspace,omitempty"`
	Preview               *PreviewPolicy   `json:"preview,omitempty"`
	Promotion             *PromotionPolicy `json:"promotion,omitempty"`
	// Extra holds every other key verbatim (approval_mode, failure_states, ...).
	Extra map[string]any `json:"-"`
	// Pos is where the meta object starts.
	Pos Pos `json:"-"`
	fp  fieldPos
}

// WorkspacePolicy is a delivery policy: where the work happens.
type WorkspacePolicy struct {
	Version  uint32 `json:"version"`
	Mode     string `json:"mode"` // "git_worktree"
	Required bool   `json:"required"`
	Cleanup  string `json:"cleanup"` // "never" | "after_promoted"
	Pos      Pos    `json:"-"`
	fp       fieldPos
}

// PreviewPolicy is a delivery policy: how a preview is deployed.
type PreviewPolicy struct {
	Version       uint32 `json:"version"`
	Mode          string `json:"mode"` // "taskfile"
	Required      bool   `json:"required"`
	PrepareState  string `json:"prepare_state"`
	DeployState   string `json:"deploy_state"`
	ValidateState string `json:"validate_state"`
	Pos           Pos    `json:"-"`
	fp            fieldPos
}

// PromotionPolicy is a delivery policy: how work is promoted.
type PromotionPolicy struct {
	Version         uint32 `json:"version"`
	Mode            string `json:"mode"` // "manual" | "squash"
	Required        bool   `json:"required"`
	PromoteState    string `json:"promote_state"`
	TeardownOnFinal bool   `json:"teardown_on_final"`
	Pos             Pos    `json:"-"`
	fp              fieldPos
}
