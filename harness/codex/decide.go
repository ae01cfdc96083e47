package codex

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/statewright-go/statewright/harness"
	"github.com/statewright-go/statewright/harness/internal/wire"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
)

// ToolCall converts a tool event's input into the runtime's view of the
// call. projectDir "" means the input's cwd. Codex's hooks cannot ask a
// person (Codex honours only deny), so HumanPrompt stays false: the
// runtime turns an ask into a deny that names the statewright command a
// person runs instead.
func ToolCall(in *Input, projectDir string) runtime.ToolCall {
	return in.HookInput.ToolCall(policy.Codex, projectDir)
}

// ToolResult converts a PostToolUse input into the runtime's record of the
// call's outcome. Codex has no PostToolUseFailure: a shell command's exit
// status is read from the response.
func ToolResult(in *Input, projectDir string) runtime.ToolResult {
	res := in.HookInput.ToolResult(policy.Codex, projectDir)
	if code, ok := exitCode(in.ToolResponse); ok {
		res.ExitCode = &code
		res.Failed = code != 0
	}
	return res
}

// exitCode digs a shell exit status out of a tool_response: an object with
// "exit_code" or "exitCode", or text carrying Codex's exit line.
func exitCode(resp json.RawMessage) (int, bool) {
	if n, ok := wire.ExitCode(resp, "exit_code", "exitCode"); ok {
		return n, true
	}
	var m map[string]json.RawMessage
	if wire.IsObject(resp) && json.Unmarshal(resp, &m) == nil {
		for _, k := range []string{"output", "stdout", "aggregated_output"} {
			var s string
			if raw, ok := m[k]; ok && json.Unmarshal(raw, &s) == nil {
				if n, ok := exitFromText(s); ok {
					return n, true
				}
			}
		}
		return 0, false
	}
	var s string
	if json.Unmarshal(resp, &s) == nil {
		return exitFromText(s)
	}
	return 0, false
}

// exitFromText finds the exit status Codex writes into a shell call's
// output: a line "Process exited with code N" or "Exit code: N".
func exitFromText(s string) (int, bool) {
	for _, l := range strings.Split(s, "\n") {
		for _, p := range []string{"Process exited with code ", "Exit code: "} {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(l), p); ok {
				if n, err := strconv.Atoi(rest); err == nil {
					return n, true
				}
			}
		}
	}
	return 0, false
}

// PreToolAnswer turns the runtime's decision on a PreToolUse call into
// Codex's answer. Codex honours only deny from PreToolUse, so:
//
//   - allow: silence (exit 0, no output); a statewright control call is
//     allowed with the session stamped into its arguments (updatedInput,
//     which Codex accepts only with an allow).
//   - deny: exit 2 with the reason.
//   - ask: Codex cannot ask a person from a hook, so the call is denied and
//     the reason says how a person can act with the statewright CLI.
//   - not enforced (audit-only): silence, whatever the decision.
func PreToolAnswer(in *Input, res runtime.DecideResult) harness.Answer {
	stamped, err := in.StampControl(IsControlTool(in.ToolName), ErrMalformed)
	if err != nil {
		return deny(wire.Prefixed(err.Error()))
	}
	switch outcome, reason := wire.Verdict(res); outcome {
	case wire.Allowed:
		if stamped != nil {
			return wire.Allow(stamped, "") // Codex refuses an allow without updatedInput
		}
		return wire.Pass()
	case wire.Asked:
		return deny(AskDenied(in.SessionID, res.Reason))
	default:
		return deny(reason)
	}
}

// deny blocks a call: exit 2 with the reason. Codex shows it to the model
// as "Command blocked by PreToolUse hook: <reason>. Command: …", adding a
// period of its own, so the reason loses its final one.
func deny(reason string) harness.Answer { return wire.Deny(strings.TrimSuffix(reason, ".")) }

// AskDenied renders the deny an "ask" becomes in Codex: the reason, why it
// is a deny, and what a person can do.
func AskDenied(sessionID, reason string) string {
	return fmt.Sprintf("statewright: %s Codex hooks cannot ask a person (Codex honours only deny), so this is denied. "+
		"A person can act outside the agent with the statewright CLI: `statewright approve %s --harness codex` grants a pending transition; "+
		"`statewright pause|resume|deactivate %s --harness codex` act on the run.", reason, sessionID, sessionID)
}

// PhaseContext renders what the agent must know about its run at session
// start and on every prompt (the control tools have the same names as in
// Claude Code). Nil renders "".
func PhaseContext(v *runtime.RunView) string {
	return wire.PhaseContext(v, policy.Codex, TransitionTool)
}

// StopReason returns why the agent may not stop yet, or "" when it may:
// once per stop, never in a loop (stop_hook_active lets it stop).
func StopReason(in *Input, v *runtime.RunView) string {
	if in.StopHookActive {
		return ""
	}
	return wire.StopReason(v, wire.MoveOnWith(TransitionTool))
}

// Failure is the answer when the hook cannot do its job for event (bad
// input, an unreadable or foreign store, a deadline), failing closed as
// the events table says; an unknown event denies.
func Failure(event Event, msg string) harness.Answer {
	a := events.Failure(string(event), msg)
	if a.Exit == wire.ExitBlock {
		return deny(strings.TrimSuffix(a.Stderr, "\n"))
	}
	return a
}
