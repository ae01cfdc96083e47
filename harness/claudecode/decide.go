package claudecode

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/statewright-go/statewright/harness"
	"github.com/statewright-go/statewright/harness/internal/wire"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
)

// ToolCall converts a tool event's input into the runtime's view of the
// call. projectDir is $CLAUDE_PROJECT_DIR ("" means the input's cwd). An
// ask may become a person's grant only in a prompting permission mode.
func ToolCall(in *Input, projectDir string) runtime.ToolCall {
	tc := in.HookInput.ToolCall(policy.ClaudeCode, projectDir)
	tc.HumanPrompt = AskGrants(in.PermissionMode)
	return tc
}

// ToolResult converts a PostToolUse or PostToolUseFailure input into the
// runtime's record of the call's outcome.
func ToolResult(in *Input, event Event, projectDir string) runtime.ToolResult {
	res := in.HookInput.ToolResult(policy.ClaudeCode, projectDir)
	res.Failed = event == PostToolUseFailure
	if len(res.Output) == 0 && in.Error != "" {
		// PostToolUseFailure carries the failed call's report (a Bash
		// call's exit status and output) in error, not tool_response.
		res.Output, _ = json.Marshal(in.Error)
	}
	// Claude Code reports a Bash call's exit status as "exit_code",
	// "exitCode" or "returnCode".
	if code, ok := wire.ExitCode(in.ToolResponse, "exit_code", "exitCode", "returnCode"); ok {
		res.ExitCode = &code
	}
	return res
}

// PreToolAnswer turns the runtime's decision on a PreToolUse call into
// Claude Code's answer:
//
//   - allow: pass (Claude Code's own rules and mode still apply); a
//     statewright control call is allowed with the session stamped into its
//     input (updatedInput).
//   - deny: Claude Code's JSON deny (permissionDecision "deny" and the
//     reason, exit 0), which the model reads as the call's result, word
//     for word; exit 2 is left to the command's fail-closed wrapper.
//   - ask: Claude Code asks its user, only in a prompting permission mode
//     (AskGrants); in any other mode the call is denied and the reason says
//     how a person can act instead.
//   - not enforced (audit-only): pass, whatever the decision.
func PreToolAnswer(in *Input, res runtime.DecideResult) harness.Answer {
	stamped, err := in.StampControl(IsControlTool(in.ToolName), ErrMalformed)
	if err != nil {
		return wire.DenyJSON(wire.Prefixed(err.Error()))
	}
	outcome, reason := wire.Verdict(res)
	switch {
	case outcome == wire.Allowed && stamped == nil:
		return wire.Pass()
	case outcome == wire.Allowed && !res.Enforced && res.Verdict != policy.Allow:
		return wire.Allow(stamped, "statewright audit-only: would "+res.Verdict.String())
	case outcome == wire.Allowed:
		return wire.Allow(stamped, reason)
	case outcome == wire.Asked && AskGrants(in.PermissionMode):
		return wire.Ask(reason, stamped)
	case outcome == wire.Asked:
		// The runtime asks only where AskGrants holds; this is the
		// adapter's own guard should an ask arrive anyway.
		return wire.DenyJSON(fmt.Sprintf("%s Claude Code runs in permission mode %q, where no person answers prompts, so this is denied. A person can act with the statewright CLI instead.",
			reason, in.PermissionMode))
	}
	return wire.DenyJSON(reason)
}

// PhaseContext renders what the agent must know about its run at session
// start and on every prompt. Nil (no run) renders "".
func PhaseContext(v *runtime.RunView) string {
	return wire.PhaseContext(v, policy.ClaudeCode, TransitionTool)
}

// StopReason returns why the agent may not stop yet, or "" when it may: a
// live, enforced run in a non-final phase blocks stopping once; when
// stop_hook_active is set (Claude already continued once because of a stop
// hook), the agent may stop, so Stop never loops.
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
	if a.Exit == wire.ExitBlock && len(a.Stdout) == 0 {
		// A gate's failure: the same words, as Claude Code's JSON deny.
		return wire.DenyJSON(strings.TrimSpace(a.Stderr))
	}
	return a
}
