package jsplugin

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/statewright-go/statewright/engine"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
)

// Adapter describes one harness whose plugin speaks this wire.
type Adapter struct {
	// Harness is the policy's harness (its tool alias table).
	Harness policy.Harness
	// ControlPrefixes are the tool-name prefixes of statewright's control
	// tools as the harness names them (opencode: the MCP server's
	// "statewright_statewright_"; Pi: the extension's own "statewright_").
	ControlPrefixes []string
	// TransitionTool is the name the model calls to move the run on.
	TransitionTool string
	// NoAsk explains, in a deny, why the harness cannot ask a person.
	NoAsk string
}

// SessionKey returns the store's session key for a harness session id.
func (a *Adapter) SessionKey(id string) string { return string(a.Harness) + ":" + id }

// Channel names the adapter in the audit trail.
func (a *Adapter) Channel() string { return "hook:" + string(a.Harness) }

// Actor is the governed agent, through the plugin.
func (a *Adapter) Actor() runtime.Actor {
	return runtime.Actor{Kind: runtime.ActorAgent, Channel: a.Channel()}
}

// IsControlTool reports whether tool is one of statewright's control tools,
// matched by exact prefix.
func (a *Adapter) IsControlTool(tool string) bool {
	for _, p := range a.ControlPrefixes {
		if strings.HasPrefix(tool, p) {
			return true
		}
	}
	return false
}

// ControlOp returns the MCP tool name ("statewright_transition") of a
// control tool as the harness names it.
func (a *Adapter) ControlOp(tool string) string {
	for _, p := range a.ControlPrefixes {
		if strings.HasPrefix(tool, p) {
			return "statewright_" + strings.TrimPrefix(tool, p)
		}
	}
	return tool
}

// ToolCall converts a ToolBefore input into the runtime's view of the call.
func (a *Adapter) ToolCall(in *Input) runtime.ToolCall {
	return runtime.ToolCall{
		Session: a.SessionKey(in.Session),
		Call: policy.ToolCall{
			Harness:    a.Harness,
			Tool:       in.Tool,
			Input:      in.Args,
			Cwd:        in.Cwd,
			ProjectDir: in.Cwd,
			ToolUseID:  in.CallID,
		},
		Actor: a.Actor(),
	}
}

// ToolResult converts a ToolAfter input into the runtime's record of the
// call's outcome.
func (a *Adapter) ToolResult(in *Input) runtime.ToolResult {
	tc := a.ToolCall(in)
	var out json.RawMessage
	if in.Output != "" {
		out, _ = json.Marshal(in.Output)
	}
	return runtime.ToolResult{
		Session:   tc.Session,
		ToolUseID: in.CallID,
		Call:      tc.Call,
		Failed:    in.Failed,
		ExitCode:  in.ExitCode,
		Output:    out,
		Actor:     tc.Actor,
	}
}

// StampKey is the argument through which the plugin tells statewright's
// MCP server which session calls (see mcpserver.StampKey).
const StampKey = "statewright_session"

// Stamp returns args with the session stamp set (replacing any value the
// model put there).
func Stamp(args json.RawMessage, session string) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(args, &m); err != nil || m == nil {
		return nil, fmt.Errorf("%w: args is not a JSON object", ErrMalformed)
	}
	id, _ := json.Marshal(session)
	m[StampKey] = id
	return json.Marshal(m)
}

// PreToolAnswer turns the runtime's decision into the plugin's answer:
// allow (a control tool's arguments stamped with the session), or deny
// with the reason. The plugins have no way to ask a person from inside a
// tool hook, so ask is rendered as a deny that says how a person can act.
// Audit-only runs allow whatever the decision.
func (a *Adapter) PreToolAnswer(in *Input, res runtime.DecideResult) Answer {
	var stamped json.RawMessage
	if a.IsControlTool(in.Tool) {
		s, err := Stamp(in.Args, in.Session)
		if err != nil {
			return DenyCall("statewright: " + err.Error())
		}
		stamped = s
	}
	if !res.Enforced && res.Verdict != policy.Allow {
		return AllowCall(stamped)
	}
	switch res.Verdict {
	case policy.Allow:
		return AllowCall(stamped)
	case policy.Ask:
		return DenyCall("statewright: " + res.Reason + " " + a.NoAsk)
	default:
		reason := res.Reason
		if reason == "" {
			reason = "denied (rule " + string(res.Rule) + ")"
		}
		return DenyCall("statewright: " + reason)
	}
}

// PhaseContext renders what the agent must know about its run: workflow,
// phase, iterations, allowed tools, instructions and the events that lead
// on. Nil (no run) renders "".
func (a *Adapter) PhaseContext(v *runtime.RunView) string {
	if v == nil || v.Run == nil {
		return ""
	}
	r := v.Run
	var b strings.Builder
	fmt.Fprintf(&b, "[statewright] Workflow %q is active; phase: %s", r.WorkflowID, r.State)
	if v.MaxIterations != nil {
		fmt.Fprintf(&b, " (tool call %d of %d)", r.Iterations, *v.MaxIterations)
	}
	b.WriteString(".\n")
	switch {
	case v.IsFinal:
		b.WriteString("The run is in a final phase: no tools are available.\n")
		return b.String()
	case r.Status == store.StatusAwaitingApproval && r.PendingApproval != nil:
		fmt.Fprintf(&b, "Waiting for a person to approve %s (to %s); keep working with this phase's tools.\n",
			r.PendingApproval.ID, r.PendingApproval.To)
	case r.Status == store.StatusPaused:
		b.WriteString("The run is paused by a person.\n")
	}
	b.WriteString("Allowed tools: " + toolList(v.AllowedTools) + ".\n")
	if s := strings.TrimSpace(v.Instructions); s != "" {
		b.WriteString("Instructions: " + s + "\n")
	}
	if ev := eventList(v.NextEvents); ev != "" {
		b.WriteString("Next events: " + ev + ".\n")
		b.WriteString("To move on, call " + a.TransitionTool + " with the event once its work is done.\n")
	}
	return b.String()
}

func toolList(tools []string) string {
	switch {
	case tools == nil:
		return "any tool"
	case len(tools) == 0:
		return "none"
	case len(tools) == 1 && tools[0] == "*":
		return "any tool"
	}
	return strings.Join(tools, ", ")
}

func eventList(evs []engine.EventInfo) string {
	parts := make([]string, 0, len(evs))
	for _, e := range evs {
		parts = append(parts, e.String())
	}
	return strings.Join(parts, "; ")
}
