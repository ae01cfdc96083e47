package claudecode

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/statewright-go/statewright/engine"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
)

// ToolCall converts a tool event's input into the runtime's view of the
// call. projectDir is $CLAUDE_PROJECT_DIR ("" means the input's cwd).
func ToolCall(in *Input, projectDir string) runtime.ToolCall {
	if projectDir == "" {
		projectDir = in.Cwd
	}
	return runtime.ToolCall{
		Session: SessionKey(in.SessionID),
		Call: policy.ToolCall{
			Harness:    policy.ClaudeCode,
			Tool:       in.ToolName,
			Input:      in.ToolInput,
			Cwd:        in.Cwd,
			ProjectDir: projectDir,
			ToolUseID:  in.ToolUseID,
		},
		Actor:          HookActor(in),
		PermissionMode: in.PermissionMode,
		HumanPrompt:    AskGrants(in.PermissionMode),
	}
}

// HookActor is the actor of every hook call: the governed agent, through
// the Claude Code hook; Name is the subagent's id when a subagent called.
func HookActor(in *Input) runtime.Actor {
	return runtime.Actor{Kind: runtime.ActorAgent, Channel: "hook:claude-code", Name: in.AgentID}
}

// ToolResult converts a PostToolUse or PostToolUseFailure input into the
// runtime's record of the call's outcome.
func ToolResult(in *Input, event Event, projectDir string) runtime.ToolResult {
	tc := ToolCall(in, projectDir)
	res := runtime.ToolResult{
		Session:   tc.Session,
		ToolUseID: in.ToolUseID,
		Call:      tc.Call,
		Failed:    event == PostToolUseFailure,
		Output:    in.ToolResponse,
		Actor:     tc.Actor,
	}
	if code, ok := exitCode(in.ToolResponse); ok {
		res.ExitCode = &code
	}
	return res
}

// exitCode digs a shell exit status out of a Bash tool_response, when
// Claude Code reports one ("exit_code", "exitCode" or "returnCode").
func exitCode(resp json.RawMessage) (int, bool) {
	if !isObject(resp) {
		return 0, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(resp, &m) != nil {
		return 0, false
	}
	for _, k := range []string{"exit_code", "exitCode", "returnCode"} {
		var n int
		if raw, ok := m[k]; ok && json.Unmarshal(raw, &n) == nil {
			return n, true
		}
	}
	return 0, false
}

// PreToolAnswer turns the runtime's decision on a PreToolUse call into
// Claude Code's answer:
//
//   - allow: pass (Claude Code's own rules and mode still apply); a
//     statewright control call is allowed with the session stamped into its
//     input (updatedInput).
//   - deny: exit 2 with the reason.
//   - ask: Claude Code asks its user, only in a prompting permission mode
//     (AskGrants); in any other mode the call is denied and the reason says
//     how a person can act instead.
//   - not enforced (audit-only): pass, whatever the decision.
func PreToolAnswer(in *Input, res runtime.DecideResult) Answer {
	var stamped json.RawMessage
	if IsControlTool(in.ToolName) {
		s, err := StampSession(in.ToolInput, in.SessionID)
		if err != nil {
			return Deny("statewright: " + err.Error())
		}
		stamped = s
	}
	if !res.Enforced && res.Verdict != policy.Allow {
		if stamped != nil {
			return AllowWithInput(stamped, "statewright audit-only: would "+res.Verdict.String())
		}
		return Pass()
	}
	switch res.Verdict {
	case policy.Allow:
		if stamped != nil {
			return AllowWithInput(stamped, "statewright: "+res.Reason)
		}
		return Pass()
	case policy.Ask:
		if AskGrants(in.PermissionMode) {
			return Ask("statewright: "+res.Reason, stamped)
		}
		// The runtime asks only where AskGrants holds; this is the
		// adapter's own guard should an ask arrive anyway.
		return Deny(fmt.Sprintf("statewright: %s Claude Code runs in permission mode %q, where no person answers prompts, so this is denied. A person can act with the statewright CLI instead.",
			res.Reason, in.PermissionMode))
	default:
		reason := res.Reason
		if reason == "" {
			reason = "denied (rule " + string(res.Rule) + ")"
		}
		return Deny("statewright: " + reason)
	}
}

// PhaseContext renders what the agent must know about its run at session
// start and on every prompt: workflow, phase, iterations, allowed tools,
// instructions and the events that lead on. Nil (no run) renders "".
func PhaseContext(v *runtime.RunView) string {
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
		b.WriteString("To move on, call " + TransitionTool + " with the event once its work is done.\n")
	}
	return b.String()
}

// StopReason returns why the agent may not stop yet, or "" when it may:
// a live, enforced run in a non-final phase blocks stopping once; when
// stop_hook_active is set (Claude already continued once because of a stop
// hook), the agent may stop, so Stop never loops. A run awaiting a
// person's approval or paused by one lets the agent stop: it has nothing
// to do until the person acts.
func StopReason(in *Input, v *runtime.RunView) string {
	if in.StopHookActive || v == nil || v.Run == nil || v.IsFinal || v.Run.AuditOnly {
		return ""
	}
	if v.Run.Status != store.StatusActive {
		return ""
	}
	reason := fmt.Sprintf("statewright: the workflow %q is in phase %s, which is not final. Finish this phase's work", v.Run.WorkflowID, v.Run.State)
	if ev := eventList(v.NextEvents); ev != "" {
		reason += " and move on with " + TransitionTool + " (next events: " + ev + ")"
	}
	return reason + "; or tell the user why you cannot."
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
