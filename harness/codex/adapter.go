package codex

import (
	"context"
	"errors"

	"github.com/statewright-go/statewright/harness"
	"github.com/statewright-go/statewright/harness/internal/wire"
	"github.com/statewright-go/statewright/runtime"
)

// Adapter is Codex's harness.Adapter.
var Adapter harness.Adapter = adapter{}

type adapter struct{}

// Info implements harness.Adapter.
func (adapter) Info() harness.Info {
	return harness.Info{
		Name:   "codex",
		Title:  "Codex",
		Events: events.Args(),
		Doc:    "docs/codex.md",
		HookHelp: "Codex honours only deny from PreToolUse: an allow is silence, and an ask becomes a deny that says how a person " +
			"can act with the statewright CLI. Errors are answered per event, failing closed: PreToolUse denies (exit 2); " +
			"UserPromptSubmit and SessionStart warn and keep the prompt; Stop lets the agent stop with a warning.",
		InstallShort: "Write statewright's hooks and MCP server into Codex's config.toml",
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

// Respond implements harness.Adapter. Codex tells hooks no project
// directory but the session's cwd.
func (adapter) Respond(ctx context.Context, h *harness.Hook, event string, input []byte) harness.Answer {
	ev, in, failed := wire.Decoded(event, input, ParseEvent, Decode, Failure)
	if failed != nil {
		return *failed
	}
	project := h.Project(in.Cwd)
	svc, err := h.Runtime(ctx, project)
	if err != nil {
		return Failure(ev, err.Error())
	}
	switch ev {
	case PreToolUse:
		tc := ToolCall(in, project)
		tc.Call.Hints = h.MCPHints(project, in.ToolName)
		route, deny := h.RouteShell(&tc, in.ToolName == "Bash")
		if deny != "" {
			return Failure(ev, deny)
		}
		res, err := svc.Decide(ctx, tc)
		if err != nil {
			return Failure(ev, "decide "+in.ToolName+": "+err.Error())
		}
		// Codex applies updatedInput with an allow to the shell too
		// (docs/codex.md, docs/sandbox.md): the command runs under the
		// launcher, or a test command through `statewright testrun`.
		in2, why, err := route.Rewrite(res, in.ToolInput)
		if err != nil {
			return Failure(ev, err.Error())
		}
		if in2 != nil {
			return wire.Allow(in2, why)
		}
		return PreToolAnswer(in, res)
	case PostToolUse:
		tr := ToolResult(in, project)
		lesson := h.AfterShell(ctx, svc, &tr, in.ToolName == "Bash", in.Cwd)
		v, err := h.Record(ctx, svc, tr, IsControlTool(in.ToolName))
		if err != nil {
			return Failure(ev, "record the result of "+in.ToolName+": "+err.Error())
		}
		if lesson != "" {
			return wire.Context(string(ev), lesson)
		}
		return wire.Context(string(ev), PhaseContext(v))
	case SessionStart, UserPromptSubmit:
		return sessionContext(ctx, h, svc, ev, in)
	case Stop:
		return stop(ctx, h, svc, in)
	}
	return Failure(ev, "unhandled event "+string(ev))
}

// sessionContext tells the agent where its run is at a session start or a
// prompt, starting the operator's default workflow at a session start.
func sessionContext(ctx context.Context, h *harness.Hook, svc *runtime.Service, ev Event, in *Input) harness.Answer {
	v, err := h.Session(ctx, svc, "codex", SessionKey(in.SessionID), ev == SessionStart)
	switch {
	case errors.Is(err, runtime.ErrNoRun):
		return wire.Context(string(ev), h.NoRunNotice(in.SessionID,
			"a person runs `statewright start WORKFLOW --session "+in.SessionID+" --harness codex`"))
	case err != nil:
		return Failure(ev, "read the run: "+err.Error())
	}
	return wire.Context(string(ev), PhaseContext(v))
}

// stop keeps the agent working once while its run is in a non-final phase.
func stop(ctx context.Context, h *harness.Hook, svc *runtime.Service, in *Input) harness.Answer {
	if in.StopHookActive {
		return wire.Pass()
	}
	v, err := h.Stopping(ctx, svc, SessionKey(in.SessionID))
	if err != nil {
		return Failure(Stop, "read the run: "+err.Error())
	}
	if reason := StopReason(in, v); reason != "" {
		return wire.BlockStop(reason)
	}
	return wire.Pass()
}
