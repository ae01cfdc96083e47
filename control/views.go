package control

import (
	"time"

	"github.com/statewright-go/statewright/engine"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
)

// StateView is what statewright_get_state returns (and what start and
// transition embed as state_snapshot). Field names follow statewright's
// get_state where they exist.
type StateView struct {
	// Session is the store session key the call resolved to.
	Session string `json:"session"`
	// Workflow and RunID name the run.
	Workflow string `json:"workflow"`
	RunID    string `json:"run_id"`
	// Status is the run's lifecycle status (active, awaiting_approval, paused, ...).
	Status store.Status `json:"status"`
	// State is the current state; IsFinal reports whether it is final.
	State   string `json:"state"`
	IsFinal bool   `json:"is_final"`
	// AllowedTools is the state's allowed_tools: null when any tool is
	// allowed, [] when none is (statewright showed [] for both).
	AllowedTools []string `json:"allowed_tools"`
	// Transitions are the events that leave the state.
	Transitions []TransitionInfo `json:"transitions"`
	// Iteration counts the tool calls made in this state; MaxIterations is
	// the state's limit (null: none).
	Iteration     int64   `json:"iteration"`
	MaxIterations *uint32 `json:"max_iterations"`
	// Instructions is the state's guidance.
	Instructions string `json:"instructions,omitempty"`
	// Rules are the state's further limits (omitted when it sets none).
	Rules *Rules `json:"rules,omitempty"`
	// PendingApproval is set while a transition awaits a human.
	PendingApproval *ApprovalView `json:"pending_approval,omitempty"`
	// InterruptHandler is set while the run is inside an interrupt handler.
	InterruptHandler *InterruptView `json:"interrupt_handler,omitempty"`
	// Revision is the run's revision (it changes on every write).
	Revision int64 `json:"revision"`
	// SubWorkflow is the id of the invoked sub-workflow whose phase this
	// is, while one runs (Workflow stays the run's own); Stack lists the
	// levels waiting for it, outermost first. Both are empty at the run's
	// own level.
	SubWorkflow string               `json:"sub_workflow,omitempty"`
	Stack       []runtime.StackEntry `json:"stack,omitempty"`
	// Model and ThinkingLevel are the phase's (model falls back to the
	// workflow's default_model); opencode and Pi switch to them at the
	// next prompt, the other harnesses name them only.
	Model         string `json:"model,omitempty"`
	ThinkingLevel string `json:"thinking_level,omitempty"`
	// EnvOverrides are the environment values the phase's commands expect.
	EnvOverrides map[string]string `json:"env_overrides,omitempty"`
	// ContextBudgetBytes is the phase's read budget; ContextBytes the tool
	// output read in the phase so far.
	ContextBudgetBytes *uint64 `json:"context_budget_bytes,omitempty"`
	ContextBytes       int64   `json:"context_bytes,omitempty"`
}

// Rules are the limits a state sets beyond allowed_tools, as its
// definition states them (the policy enforces them on every tool call).
type Rules struct {
	DisallowedTools  []string `json:"disallowed_tools,omitempty"`
	AllowedCommands  []string `json:"allowed_commands,omitempty"`
	MaxEditLines     *uint32  `json:"max_edit_lines,omitempty"`
	MaxFilesPerState *uint32  `json:"max_files_per_state,omitempty"`
	AllowedPaths     []string `json:"allowed_paths,omitempty"`
	DeniedPaths      []string `json:"denied_paths,omitempty"`
	BlockedEnv       []string `json:"blocked_env,omitempty"`
}

// stateRules reads the current state's limits from the run's prepared
// workflow (the definition in force). It is informational: a workflow that
// cannot be prepared yields nil, and the runtime decides as always.
func (c *Control) stateRules(r *store.Run) *Rules {
	if r == nil {
		return nil
	}
	p, err := c.rt.Prepared(r)
	if err != nil {
		return nil
	}
	st := p.Def.States[r.State]
	if st == nil {
		return nil
	}
	out := &Rules{DisallowedTools: st.DisallowedTools, AllowedCommands: st.AllowedCommands, MaxEditLines: st.MaxEditLines,
		MaxFilesPerState: st.MaxFilesPerState, AllowedPaths: st.AllowedPaths, DeniedPaths: st.DeniedPaths, BlockedEnv: st.BlockedEnv}
	if len(out.DisallowedTools)+len(out.AllowedCommands)+len(out.AllowedPaths)+len(out.DeniedPaths)+len(out.BlockedEnv) == 0 &&
		out.MaxEditLines == nil && out.MaxFilesPerState == nil {
		return nil
	}
	return out
}

// TransitionInfo describes one event of the current state.
type TransitionInfo struct {
	Event            string   `json:"event"`
	Target           string   `json:"target"`
	Targets          []string `json:"targets,omitempty"`
	RequiresApproval bool     `json:"requires_approval"`
	Guarded          bool     `json:"guarded"`
	Guards           []string `json:"guards,omitempty"`
}

// ApprovalView is a pending approval as the agent sees it.
type ApprovalView struct {
	ApprovalID string    `json:"approval_id"`
	Event      string    `json:"event,omitempty"`
	FromState  string    `json:"from_state,omitempty"`
	ToState    string    `json:"to_state,omitempty"`
	Message    string    `json:"message,omitempty"`
	ExpiresAt  time.Time `json:"expires_at,omitzero"`
	// Command is what a human runs to grant it.
	Command string `json:"command"`
}

// InterruptView describes the interrupt handler the run is in.
type InterruptView struct {
	Interrupt   string `json:"interrupt"`
	ReturnState string `json:"return_state"`
	Message     string `json:"message"`
}

// approveCommand is the command a human runs to grant an approval.
func approveCommand(session, id string) string {
	return "statewright approve " + session + " --id " + id
}

// stateView renders a run view.
func (c *Control) stateView(session string, v *runtime.RunView) *StateView {
	out := &StateView{Session: session, Transitions: []TransitionInfo{}}
	if v == nil {
		return out
	}
	out.IsFinal = v.IsFinal
	out.AllowedTools = v.AllowedTools
	out.Instructions = v.Instructions
	out.MaxIterations = v.MaxIterations
	for _, e := range v.NextEvents {
		out.Transitions = append(out.Transitions, transitionInfo(e))
	}
	r := v.Run
	if r == nil {
		return out
	}
	out.Workflow, out.RunID, out.Status, out.State = r.WorkflowID, r.ID, r.Status, r.State
	out.Iteration, out.Revision = r.Iterations, r.Revision
	out.Rules = c.stateRules(r)
	if a := r.PendingApproval; a != nil {
		out.PendingApproval = &ApprovalView{ApprovalID: a.ID, Event: a.Event, FromState: a.From, ToState: a.To,
			Message: a.Message, ExpiresAt: a.ExpiresAt, Command: approveCommand(session, a.ID)}
	}
	out.Model, out.ThinkingLevel, out.EnvOverrides = v.Model, v.ThinkingLevel, v.EnvOverrides
	out.ContextBudgetBytes, out.ContextBytes = v.ContextBudget, v.ContextBytes
	if len(v.Stack) > 0 {
		out.Stack = v.Stack
		if v.Workflow != r.WorkflowID || v.Stack[len(v.Stack)-1].Kind == runtime.KindInvoke {
			out.SubWorkflow = v.Workflow
		}
	}
	if frames := v.Interrupts; len(frames) > 0 {
		f := frames[len(frames)-1]
		out.InterruptHandler = &InterruptView{Interrupt: f.Interrupt, ReturnState: f.Return,
			Message: "You are in an interrupt handler. Complete its work and transition back to '" + f.Return + "'."}
	}
	return out
}

func transitionInfo(e engine.EventInfo) TransitionInfo {
	return TransitionInfo{Event: e.Event, Target: e.Target, Targets: e.Targets,
		RequiresApproval: e.RequiresApproval, Guarded: e.Guarded, Guards: e.Guards}
}

// StatusView is what statewright_get_status returns. With no live run the
// run fields are null.
type StatusView struct {
	Session            string        `json:"session"`
	ActiveWorkflow     *string       `json:"active_workflow"`
	RunID              *string       `json:"run_id"`
	Status             *store.Status `json:"status"`
	CurrentState       *string       `json:"current_state"`
	Iteration          *int64        `json:"iteration"`
	IsFinal            *bool         `json:"is_final"`
	PendingApproval    *ApprovalView `json:"pending_approval,omitempty"`
	AvailableWorkflows []string      `json:"available_workflows"`
	// LastRun is the session's newest ended run, when it has no live one.
	LastRun *EndedRun `json:"last_run,omitempty"`
	// Upstreams is each upstream MCP server's state, when the status is
	// asked through the gateway (`statewright mcp` with upstreams).
	Upstreams []UpstreamStatus `json:"upstreams,omitempty"`
}

// UpstreamStatus is one upstream MCP server's state, as the gateway sees it.
type UpstreamStatus struct {
	Name     string `json:"name"`
	Up       bool   `json:"up"`
	Tools    int    `json:"tools"`
	Restarts int    `json:"restarts"`
	Error    string `json:"error,omitempty"`
	// Sandbox says how a stdio upstream's processes run: "off", the
	// sandbox in force, or "none: <why>"; "" for an HTTP upstream, which
	// is not a process of the gateway's.
	Sandbox string `json:"sandbox,omitempty"`
}

// EndedRun summarises a run that is no longer live.
type EndedRun struct {
	RunID    string       `json:"run_id"`
	Workflow string       `json:"workflow"`
	State    string       `json:"state"`
	Status   store.Status `json:"status"`
}

// TransitionView is what statewright_transition returns.
type TransitionView struct {
	// Transitioned is true when the run moved; false when it parked.
	Transitioned bool   `json:"transitioned"`
	From         string `json:"from"`
	To           string `json:"to"`
	// RequiresApproval is true when the transition waits for a human;
	// ApprovalID names the request.
	RequiresApproval bool   `json:"requires_approval"`
	ApprovalID       string `json:"approval_id,omitempty"`
	// IsFinal reports whether the run reached a final state.
	IsFinal bool `json:"is_final"`
	// Message says what happened and what to do next.
	Message string `json:"message"`
	// StateSnapshot is the run after the call (null if it could not be read).
	StateSnapshot *StateView `json:"state_snapshot"`
}

// StartView is what statewright_start returns.
type StartView struct {
	Loaded        bool       `json:"loaded"`
	Workflow      string     `json:"workflow"`
	RunID         string     `json:"run_id"`
	InitialState  string     `json:"initial_state"`
	Message       string     `json:"message"`
	StateSnapshot *StateView `json:"state_snapshot"`
	// Warnings are the workflow's warnings (a tool name no harness knows,
	// with a did-you-mean), also named in Message.
	Warnings []string `json:"warnings,omitempty"`
}

// RequestView is what pause, deactivate and force_state return: the
// request is recorded, nothing else happened.
type RequestView struct {
	Requested bool   `json:"requested"`
	Performed bool   `json:"performed"`
	Action    string `json:"action"`
	Session   string `json:"session"`
	// State is the run's state when the request was filed ("" without a run).
	State string `json:"state,omitempty"`
	// EventSeq is the request's position in the event log.
	EventSeq int64 `json:"event_seq"`
	// Command is what a human runs to grant the request.
	Command string `json:"command"`
	Message string `json:"message"`
}

// ListView is what statewright_list_workflows returns.
type ListView struct {
	// Workflows lists the names statewright_start accepts.
	Workflows []string `json:"workflows"`
	// Details describes each workflow.
	Details []WorkflowEntry `json:"details"`
	// Active is the workflow of the session's live run (null: none).
	Active *string `json:"active"`
}
