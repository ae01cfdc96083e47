package cursor

import (
	"context"

	"github.com/statewright-go/statewright/harness"
	"github.com/statewright-go/statewright/harness/internal/wire"
)

// Adapter is Cursor's harness.Adapter.
var Adapter harness.Adapter = adapter{}

type adapter struct{}

// Info implements harness.Adapter.
func (adapter) Info() harness.Info {
	return harness.Info{
		Name:   "cursor",
		Title:  "Cursor",
		Events: events.Args(),
		Doc:    "docs/cursor.md",
		HookHelp: "The gates (pre-tool-use, before-shell-execution, before-mcp-execution, before-read-file) answer " +
			`{"permission":"allow"|"deny"|"ask"} and exit 2 on a deny or any error (fail closed); after-file-edit records ` +
			"the edit; stop may ask the agent to go on. Written from Cursor's documentation, not verified against the real client.",
		InstallShort: "Write statewright's hooks into Cursor's hooks.json (unverified against the real client)",
		InstallLong:  installLong,
		InstallFlags: installFlags,
	}
}

// Failure implements harness.Adapter: an unknown event is answered as a
// gate.
func (adapter) Failure(event, reason string) harness.Answer {
	ev, _ := ParseEvent(event)
	return Failure(ev, reason)
}

// Respond implements harness.Adapter, failing closed on the gates.
func (adapter) Respond(ctx context.Context, h *harness.Hook, event string, input []byte) harness.Answer {
	ev, in, failed := wire.Decoded(event, input, ParseEvent, Decode, Failure)
	if failed != nil {
		return *failed
	}
	project := h.Project(ProjectDir(in))
	svc, err := h.Runtime(ctx, project)
	if err != nil {
		return Failure(ev, err.Error())
	}
	session := SessionKey(in.ConversationID)
	switch ev {
	case PreToolUse, BeforeShellExecution, BeforeMCPExecution, BeforeReadFile:
		// Cursor's conversation id is known only to the hooks: the first
		// gate of a conversation that never had a run starts the
		// operator's default workflow (named on the hook command line).
		if err := h.StartDefault(ctx, svc, "cursor", session); err != nil {
			return Failure(ev, "start the default workflow: "+err.Error())
		}
		call, ok := ToolCall(ev, in)
		if !ok {
			// "MCP:TOOL" without a server: beforeMCPExecution decides it.
			return Allow()
		}
		call.Call.ProjectDir = project
		if h.RequireSandbox && call.Call.Tool == "Shell" {
			// Cursor's recorded hook contract has no input rewrite, so
			// its shell cannot run under the launcher: with
			// --require-sandbox every shell call is denied (docs/sandbox.md).
			return Deny(ev, "statewright: this install requires the OS sandbox for shell calls (--require-sandbox), "+
				"and Cursor's hooks cannot route a command through it, so shell calls are denied; a person can run the command instead")
		}
		res, err := svc.Decide(ctx, call)
		if err != nil {
			return Failure(ev, "decide "+call.Call.Tool+": "+err.Error())
		}
		return GateAnswer(ev, res)

	case AfterFileEdit:
		res := EditResult(in)
		res.Call.ProjectDir = project
		if _, err := h.Record(ctx, svc, res, false); err != nil {
			return Failure(ev, "record the edit of "+in.FilePath+": "+err.Error())
		}
		return Empty()

	case Stop:
		v, err := h.Stopping(ctx, svc, session)
		if err != nil {
			return Failure(ev, "read the run: "+err.Error())
		}
		if r := StopReason(in, v); r != "" {
			return Followup(r)
		}
		return Empty()
	}
	return Failure(ev, "unhandled event "+string(ev))
}
