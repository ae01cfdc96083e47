package claudecode

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/statewright-go/statewright/harness"
	"github.com/statewright-go/statewright/harness/internal/wire"
	"github.com/statewright-go/statewright/runtime"
)

// Adapter is Claude Code's harness.Adapter.
var Adapter harness.Adapter = adapter{}

type adapter struct{}

// Info implements harness.Adapter.
func (adapter) Info() harness.Info {
	return harness.Info{
		Name:   "claude-code",
		Title:  "Claude Code",
		Events: events.Args(),
		Doc:    "docs/claude-code.md",
		HookHelp: "A deny is Claude Code's JSON answer (permissionDecision \"deny\" and the lesson, exit 0). Errors are answered " +
			"per event, failing closed: PreToolUse denies; UserPromptSubmit and SessionStart warn and keep the prompt; Stop lets " +
			"the agent stop with a warning.",
		InstallShort: "Write statewright's hooks into .claude/settings.local.json and its MCP server into the project's local scope of ~/.claude.json",
		InstallLong:  installLong,
		InstallFlags: installFlags,
	}
}

// Failure implements harness.Adapter: an unknown event is answered as
// PreToolUse.
func (adapter) Failure(event, reason string) harness.Answer {
	ev, _ := ParseEvent(event)
	return Failure(ev, reason)
}

// Respond implements harness.Adapter.
func (adapter) Respond(ctx context.Context, h *harness.Hook, event string, input []byte) harness.Answer {
	ev, in, failed := wire.Decoded(event, input, ParseEvent, Decode, Failure)
	if failed != nil {
		return *failed
	}
	if ev == SessionEnd {
		// Nothing to decide or block; the session's sandbox server and
		// what it runs stop.
		h.EndSandbox(SessionKey(in.SessionID))
		return wire.Pass()
	}
	project := h.Project(h.Env("CLAUDE_PROJECT_DIR"), in.Cwd)
	var protect []string
	if f := h.Env("CLAUDE_ENV_FILE"); f != "" && filepath.IsAbs(f) {
		protect = append(protect, f)
	}
	svc, err := h.Runtime(ctx, project, protect...)
	if err != nil {
		return Failure(ev, err.Error())
	}
	session := SessionKey(in.SessionID)

	switch ev {
	case PreToolUse:
		tc := ToolCall(in, project)
		tc.Call.Hints = h.MCPHints(project, in.ToolName)
		route, deny := h.RouteShell(&tc, in.ToolName == "Bash")
		if deny != "" {
			return wire.Deny("statewright: " + deny)
		}
		res, err := svc.Decide(ctx, tc)
		if err != nil {
			return Failure(ev, "decide "+in.ToolName+": "+err.Error())
		}
		// An allowed Bash call runs under the launcher, or through
		// `statewright testrun` for a test command (Claude Code runs the
		// updated command, and checks its own permission rules against it:
		// docs/sandbox.md).
		in2, why, err := route.Rewrite(res, in.ToolInput)
		if err != nil {
			return Failure(ev, err.Error())
		}
		if in2 != nil {
			return wire.Allow(in2, why)
		}
		return PreToolAnswer(in, res)

	case PostToolUse, PostToolUseFailure:
		tr := ToolResult(in, ev, project)
		lesson := h.AfterShell(ctx, svc, &tr, in.ToolName == "Bash", in.Cwd)
		// After a control call (a transition, a start) tell the agent where it is now.
		v, err := h.Record(ctx, svc, tr, IsControlTool(in.ToolName))
		if err != nil {
			return Failure(ev, "record the result of "+in.ToolName+": "+err.Error())
		}
		if lesson != "" {
			return wire.Context(string(ev), lesson)
		}
		return wire.Context(string(ev), PhaseContext(v))

	case SessionStart, UserPromptSubmit:
		v, err := h.Session(ctx, svc, "claude-code", session, ev == SessionStart)
		switch {
		case errors.Is(err, runtime.ErrNoRun):
			return wire.Context(string(ev), h.NoRunNotice(in.SessionID,
				"a person runs `statewright start WORKFLOW --session "+in.SessionID+"`, or you call "+StartTool))
		case err != nil:
			return Failure(ev, "read the run: "+err.Error())
		}
		ctxText := PhaseContext(v)
		if n := h.NoSandboxNotice(); n != "" && ev == SessionStart {
			ctxText = n + "\n" + ctxText
		}
		return wire.Context(string(ev), ctxText)

	case Stop, SubagentStop:
		if in.StopHookActive {
			return wire.Pass()
		}
		v, err := h.Stopping(ctx, svc, session)
		if err != nil {
			return Failure(ev, "read the run: "+err.Error())
		}
		if reason := StopReason(in, v); reason != "" {
			return wire.BlockStop(reason)
		}
		return wire.Pass()
	}
	return Failure(ev, "unhandled event "+string(ev))
}
