// Package claudecode is statewright's Claude Code adapter: it decodes the
// JSON Claude Code writes to a hook's stdin, answers with the exit code,
// stdout JSON and stderr Claude Code honours for each hook event, and
// installs the hooks and the MCP server into the project's settings.
//
// See docs/claude-code.md for the contract, per event, and why each answer
// has the shape it has.
package claudecode

import (
	"encoding/json"
	"strings"

	"github.com/statewright-go/statewright/harness/internal/wire"
)

// Event is a hook event of Claude Code, named as Claude Code names it in its settings and
// in the input's hook_event_name (Arg gives the command-line spelling).
type Event = wire.HookEvent

// The hook events statewright registers.
const (
	SessionStart       Event = wire.SessionStartEvent
	UserPromptSubmit   Event = wire.UserPromptSubmitEvent
	PreToolUse         Event = wire.PreToolUseEvent
	PostToolUse        Event = wire.PostToolUseEvent
	PostToolUseFailure Event = wire.PostToolUseFailureEvent
	Stop               Event = wire.StopEvent
	SubagentStop       Event = wire.SubagentStopEvent
	SessionEnd         Event = wire.SessionEndEvent
)

// events are every event statewright registers, in the order init writes
// them: every event of the hook-output contract (see wire.HookEvents for
// how each fails closed).
var events = wire.HookEvents

// Events lists every event statewright registers, in the order init writes
// them.
var Events = []Event{SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, PostToolUseFailure, Stop, SubagentStop, SessionEnd}

// ParseEvent accepts an event's command-line spelling ("pre-tool-use") or
// Claude Code's name ("PreToolUse").
func ParseEvent(s string) (Event, error) {
	name, err := events.Parse("claude-code: ", s)
	return Event(name), err
}

// Input is the JSON Claude Code writes to a hook's stdin: the fields of
// the hook contract (wire.HookInput) and Claude Code's own.
type Input struct {
	wire.HookInput
	TranscriptPath string `json:"transcript_path"`
	// Error is PostToolUseFailure's error text.
	Error string `json:"error"`
	// Reason is why a session ended (SessionEnd).
	Reason string `json:"reason"`
}

// ErrMalformed is wrapped by Decode's errors for input that is not a JSON
// object of the documented shape; ErrWrongEvent by its error for input
// whose hook_event_name names another event than the hook's.
var ErrMalformed, ErrWrongEvent = wire.HookErrors("claude-code")

var decoding = wire.Decoding{Malformed: ErrMalformed}

// Decode decodes and checks the hook input for event. It returns an error
// wrapping ErrMalformed when data is not one JSON object, when a field has
// the wrong type, when a required field is missing (session_id always;
// tool_name, tool_input and tool_use_id for tool events) or when an id is
// not sane; and ErrWrongEvent when hook_event_name is present and differs
// from event. The caller answers any error in the event's fail-closed way.
func Decode(event Event, data []byte) (*Input, error) {
	return wire.DecodeHook[Input](decoding, data, string(event), event.ToolEvent(), ErrWrongEvent)
}

// SessionPrefix prefixes every Claude Code session key in the store.
const SessionPrefix = "claude-code:"

// SessionKey returns the store's session key for a Claude Code session id.
func SessionKey(sessionID string) string { return SessionPrefix + sessionID }

// ControlPrefix is the tool-name prefix of statewright's MCP control tools
// as Claude Code names them (server "statewright" in .mcp.json). The plugin
// install names them mcp__plugin_statewright_statewright__.
const (
	ControlPrefix       = "mcp__statewright__"
	PluginControlPrefix = "mcp__plugin_statewright_statewright__"
)

// The control tools the hook's messages point the agent to, as Claude Code
// names them (the MCP server's tool names under ControlPrefix).
const (
	TransitionTool = ControlPrefix + "statewright_transition"
	StartTool      = ControlPrefix + "statewright_start"
)

// IsControlTool reports whether tool is one of statewright's MCP control
// tools, matched by the exact server prefix (never a substring).
func IsControlTool(tool string) bool {
	return strings.HasPrefix(tool, ControlPrefix) || strings.HasPrefix(tool, PluginControlPrefix)
}

// SessionStampKey is the tool-input key the PreToolUse hook sets on every
// statewright control call to the hook's session id. The MCP server trusts
// it over its own environment (which goes stale after /clear).
const SessionStampKey = wire.SessionStampKey

// StampSession returns toolInput with SessionStampKey set to sessionID,
// overwriting whatever the model put there; Claude Code's updatedInput
// replaces the whole input, so the result carries every field.
func StampSession(toolInput json.RawMessage, sessionID string) (json.RawMessage, error) {
	return wire.Stamp(toolInput, sessionID, ErrMalformed, "tool_input")
}

// PromptingModes are the permission modes in which a person answers Claude
// Code's permission prompts. Only there may an "ask" become a grant; in
// plan, acceptEdits, auto, dontAsk and bypassPermissions something other
// than a person answers, so an ask is a deny (docs/runtime.md, approvals).
var PromptingModes = []string{"default"}

// AskGrants reports whether Claude Code's own prompt may grant an "ask" in
// permissionMode.
func AskGrants(permissionMode string) bool {
	for _, m := range PromptingModes {
		if m == permissionMode {
			return true
		}
	}
	return false
}
