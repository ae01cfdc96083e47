package claudecode

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/statewright-go/statewright/harness"
	"github.com/statewright-go/statewright/harness/internal/wire"
	"github.com/statewright-go/statewright/policy"
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
		HookHelp: "Errors are answered per event, failing closed: PreToolUse denies (exit 2); UserPromptSubmit and SessionStart " +
			"warn and keep the prompt; Stop lets the agent stop with a warning.",
		InstallShort: "Write statewright's hooks into .claude/settings.json and its MCP server into .mcp.json",
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
		return wire.Pass() // nothing to decide or block
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
		sh, deny := h.ShellFor(in.ToolName == "Bash", project, true)
		if deny != "" {
			return wire.Deny("statewright: " + deny)
		}
		if sh != nil {
			tc.Sandbox, tc.Call.Sandboxed = sh.Request(session, in.ToolUseID), true
		}
		res, err := svc.Decide(ctx, tc)
		if err != nil {
			return Failure(ev, "decide "+in.ToolName+": "+err.Error())
		}
		if sh != nil && res.Enforced && res.Verdict == policy.Allow {
			// Claude Code runs the updated command, the launcher under the
			// profile in force now (and checks its own permission rules
			// against it: docs/sandbox.md).
			in2, err := sh.Rewrite(session, in.ToolUseID, res.Sandbox, in.ToolInput, "command")
			if err != nil {
				return Failure(ev, err.Error())
			}
			return wire.Allow(in2, "statewright: runs in the OS sandbox of "+harness.PhaseName(res.State))
		}
		if sh == nil && in.ToolName == "Bash" && res.Enforced && res.Verdict == policy.Allow {
			// A test command runs through `statewright testrun`, so that
			// its evidence comes from the runner's structured report.
			if in2 := harness.TestRunRewrite(session, in.ToolUseID, project, in.ToolInput, "command"); in2 != nil {
				return wire.Allow(in2, "statewright: "+res.Reason+" (the test run records a structured report)")
			}
		}
		return PreToolAnswer(in, res)

	case PostToolUse, PostToolUseFailure:
		tr := ToolResult(in, ev, project)
		var lesson string
		if sh, _ := h.ShellFor(in.ToolName == "Bash", project, false); sh != nil {
			lesson = sh.After(ctx, svc, &tr, in.Cwd)
		} else if in.ToolName == "Bash" {
			harness.TestRunAfter(&tr, "command")
		}
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
