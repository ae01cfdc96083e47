package cursor

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/statewright-go/statewright/harness"
	"github.com/statewright-go/statewright/harness/internal/wire"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
)

// ProjectDir is the first workspace root, else the input's cwd.
func ProjectDir(in *Input) string {
	if len(in.WorkspaceRoots) > 0 && in.WorkspaceRoots[0] != "" {
		return in.WorkspaceRoots[0]
	}
	return in.Cwd
}

// HookActor is the actor of every hook call: the governed agent, through
// the Cursor hook.
func HookActor() runtime.Actor {
	return runtime.Actor{Kind: runtime.ActorAgent, Channel: "hook:cursor"}
}

// mcpTool names an MCP tool as the policy knows MCP tools:
// mcp__SERVER__TOOL.
func mcpTool(server, tool string) string { return "mcp__" + server + "__" + tool }

// statewrightServer reports whether an MCP server command runs
// statewright's MCP server (`/abs/statewright mcp ...`).
func statewrightServer(command string) bool {
	f := strings.Fields(command)
	if len(f) < 2 {
		return false
	}
	return strings.HasPrefix(filepath.Base(strings.Trim(f[0], `'"`)), "statewright") && strings.Trim(f[1], `'"`) == "mcp"
}

// ToolCall converts a gate event's input into the runtime's view of the
// call. ok is false for a preToolUse MCP call that names no server
// ("MCP:TOOL"): beforeMCPExecution, which sees the server, decides it.
//
//   - preToolUse: Cursor's tool name (Shell, Read, Write, StrReplace,
//     Delete, ...) through the policy's Cursor alias table;
//     "MCP:SERVER:TOOL" becomes mcp__SERVER__TOOL.
//   - beforeShellExecution: Shell with {"command"}.
//   - beforeMCPExecution: mcp__SERVER__TOOL, the server taken from a
//     "SERVER:TOOL" name, else "statewright" when the server command runs
//     `statewright mcp`, else "unknown" (so only an allowed_tools entry
//     naming it exactly lets it through).
//   - beforeReadFile: Read with {"file_path"}.
func ToolCall(event Event, in *Input) (tc runtime.ToolCall, ok bool) {
	tool, input := in.ToolName, in.ToolInput
	switch event {
	case PreToolUse:
		if rest, isMCP := strings.CutPrefix(tool, "MCP:"); isMCP {
			server, name, named := strings.Cut(rest, ":")
			if !named {
				return runtime.ToolCall{}, false
			}
			tool = mcpTool(server, name)
		}
	case BeforeShellExecution:
		tool = "Shell"
		input, _ = json.Marshal(map[string]string{"command": in.Command})
	case BeforeMCPExecution:
		server, name, named := strings.Cut(strings.TrimPrefix(tool, "MCP:"), ":")
		if !named {
			name, server = server, "unknown"
			if statewrightServer(in.Command) {
				server = "statewright"
			}
		}
		tool = mcpTool(server, name)
	case BeforeReadFile:
		tool = "Read"
		input, _ = json.Marshal(map[string]string{"file_path": in.FilePath})
	default:
		return runtime.ToolCall{}, false
	}
	return runtime.ToolCall{
		Session: SessionKey(in.ConversationID),
		Call: policy.ToolCall{
			Harness:    policy.Cursor,
			Tool:       tool,
			Input:      input,
			Cwd:        in.Cwd,
			ProjectDir: ProjectDir(in),
			ToolUseID:  CallID(event, in, tool, input),
		},
		Actor: HookActor(),
		// HumanPrompt stays false: whether Cursor's own "ask" reached a
		// person, and the call went ahead, is not verified against the
		// real client, so the runtime turns an ask into a deny naming the
		// command a person runs.
	}, true
}

// EditResult converts afterFileEdit into a tool result for the audit log:
// the edit already happened (Cursor cannot undo it), so it is recorded,
// not decided.
func EditResult(in *Input) runtime.ToolResult {
	input, _ := json.Marshal(map[string]any{"file_path": in.FilePath, "edits": in.Edits})
	id := CallID(AfterFileEdit, in, "Edit", input)
	return runtime.ToolResult{
		Session:   SessionKey(in.ConversationID),
		ToolUseID: id,
		Call: policy.ToolCall{Harness: policy.Cursor, Tool: "Edit", Input: input, Cwd: in.Cwd,
			ProjectDir: ProjectDir(in), ToolUseID: id},
		Actor: HookActor(),
	}
}

// GateAnswer turns the runtime's decision on a gated action into Cursor's
// answer: allow → {"permission":"allow"}; deny → exit 2 with
// {"permission":"deny"} and the reason; ask → {"permission":"ask"} (the
// runtime answers ask only where the adapter says a person answers, which
// this adapter does not claim); not enforced (audit-only) → allow.
func GateAnswer(event Event, res runtime.DecideResult) harness.Answer {
	switch outcome, reason := wire.Verdict(res); {
	case outcome == wire.Allowed:
		return Allow()
	case outcome == wire.Asked && event != BeforeReadFile:
		return Ask(reason)
	default:
		return Deny(event, reason)
	}
}

// StopReason returns the follow-up that keeps the agent working, or ""
// to let it stop: only after a completed loop (not aborted or failed),
// only once (loop_count 0), and only for a live, enforced run in a
// non-final phase. Cursor's MCP calls cannot be tied to a session, so the
// follow-up names the command a person runs to move the run on.
func StopReason(in *Input, v *runtime.RunView) string {
	if in.LoopCount > 0 || in.Status != "" && in.Status != "completed" {
		return ""
	}
	return wire.StopReason(v, func(events string) string {
		return fmt.Sprintf("; a person moves the run on with `statewright transition %s EVENT --harness cursor` (next events: %s)",
			in.ConversationID, events)
	})
}
