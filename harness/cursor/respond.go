package cursor

import (
	"context"
	"errors"

	"github.com/statewright-go/statewright/runtime"
)

// Service is the part of the runtime a Cursor hook uses.
type Service interface {
	Decide(ctx context.Context, call runtime.ToolCall) (runtime.DecideResult, error)
	RecordResult(ctx context.Context, res runtime.ToolResult) error
	Status(ctx context.Context, session string) (*runtime.RunView, error)
}

var _ Service = (*runtime.Service)(nil)

// Respond answers one decoded hook event against svc, failing closed on
// the gates. auditOnly lets the agent stop whatever the run says (the
// decisions themselves are already unenforced by the runtime).
func Respond(ctx context.Context, svc Service, event Event, in *Input, auditOnly bool) Answer {
	switch event {
	case PreToolUse, BeforeShellExecution, BeforeMCPExecution, BeforeReadFile:
		call, ok := ToolCall(event, in)
		if !ok {
			// "MCP:TOOL" without a server: beforeMCPExecution decides it.
			return Allow()
		}
		res, err := svc.Decide(ctx, call)
		if err != nil {
			return Failure(event, "decide "+call.Call.Tool+": "+err.Error())
		}
		return GateAnswer(event, res)

	case AfterFileEdit:
		if err := svc.RecordResult(ctx, EditResult(in)); err != nil && !errors.Is(err, runtime.ErrNoRun) {
			return Failure(event, "record the edit of "+in.FilePath+": "+err.Error())
		}
		return Empty()

	case Stop:
		v, err := svc.Status(ctx, SessionKey(in.ConversationID))
		switch {
		case errors.Is(err, runtime.ErrNoRun):
			return Empty()
		case err != nil:
			return Failure(event, "read the run: "+err.Error())
		}
		if auditOnly {
			return Empty()
		}
		if r := StopReason(in, v); r != "" {
			return Followup(r)
		}
		return Empty()
	}
	return Failure(event, "unhandled event "+string(event))
}
