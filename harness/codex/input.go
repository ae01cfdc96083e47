// Package codex is statewright's Codex CLI adapter: it decodes the JSON
// Codex writes to a hook's stdin, answers with the exit code, stdout JSON
// and stderr Codex honours for each hook event, and installs the hooks and
// the MCP server into Codex's config.toml.
//
// Codex's hook contract resembles Claude Code's, with differences that
// matter for enforcement: PreToolUse honours only a deny (an allow is
// silence, and Codex has no "ask"), so statewright's ask becomes a deny that
// says how a person can act; the shell tool reaches hooks as "Bash" and the
// patch tool as "apply_patch" with the patch body in tool_input.command.
// See docs/codex.md for the contract and Codex's enforcement gaps.
package codex

import (
	"encoding/json"
	"strings"

	"github.com/statewright-go/statewright/harness/internal/wire"
)

// Event is a hook event of Codex, named as Codex names it in its settings and
// in the input's hook_event_name (Arg gives the command-line spelling).
type Event = wire.HookEvent

// The hook events statewright registers: those of Claude Code's hook
// contract that Codex has.
const (
	SessionStart     Event = wire.SessionStartEvent
	UserPromptSubmit Event = wire.UserPromptSubmitEvent
	PreToolUse       Event = wire.PreToolUseEvent
	PostToolUse      Event = wire.PostToolUseEvent
	Stop             Event = wire.StopEvent
)

// Events lists every event statewright registers, in the order init writes
// them.
var Events = []Event{SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop}

// events are Events with their command-line spelling and how each fails
// closed (wire.HookEvents).
var events = wire.HookEvents.Only(string(SessionStart), string(UserPromptSubmit), string(PreToolUse), string(PostToolUse), string(Stop))

// ParseEvent accepts an event's command-line spelling ("pre-tool-use") or
// Codex's name ("PreToolUse").
func ParseEvent(s string) (Event, error) {
	name, err := events.Parse("codex: ", s)
	return Event(name), err
}

// Input is the JSON Codex writes to a hook's stdin (the *.command.input
// schemas Codex ships): the fields of the hook contract (wire.HookInput)
// and Codex's own. The shell tool is "Bash" with tool_input.command; the
// patch tool is "apply_patch" with the patch in tool_input.command.
type Input struct {
	wire.HookInput
	TurnID         string  `json:"turn_id"`
	TranscriptPath *string `json:"transcript_path"`
	Model          string  `json:"model"`
}

// Decode decodes and checks what a Codex hook reads on stdin for event
// (the *.command.input schemas Codex ships): one JSON object, a sane
// session_id always, and for PreToolUse and PostToolUse a tool_name, a
// tool_use_id and a tool_input object (an apply_patch call carries its
// patch in tool_input.command). Errors wrap ErrMalformed, or ErrWrongEvent
// when hook_event_name names another event; the caller answers them in the
// event's fail-closed way.
func Decode(event Event, data []byte) (*Input, error) {
	return wire.DecodeHook[Input](decoding, data, string(event), event.ToolEvent(), ErrWrongEvent)
}

// Codex's decoding errors, errors.Is-able.
var ErrMalformed, ErrWrongEvent = wire.HookErrors("codex")

var decoding = wire.Decoding{Malformed: ErrMalformed}

// SessionPrefix prefixes every Codex session key in the store.
const SessionPrefix = "codex:"

// SessionKey returns the store's session key for a Codex session id.
func SessionKey(sessionID string) string { return SessionPrefix + sessionID }

// ControlPrefix is the tool-name prefix of statewright's MCP control tools
// as Codex names them (server "statewright" in config.toml's
// [mcp_servers]).
const ControlPrefix = "mcp__statewright__"

// TransitionTool is the transition control tool as Codex names it.
const TransitionTool = ControlPrefix + "statewright_transition"

// IsControlTool reports whether tool is one of statewright's MCP control
// tools, matched by the exact server prefix.
func IsControlTool(tool string) bool { return strings.HasPrefix(tool, ControlPrefix) }

// StampSession returns toolInput with the session stamp key
// ("statewright_session") set to sessionID, overwriting whatever the model
// put there. Codex replaces an MCP call's arguments with a PreToolUse
// hook's updatedInput when the hook answers permissionDecision "allow".
func StampSession(toolInput json.RawMessage, sessionID string) (json.RawMessage, error) {
	return wire.Stamp(toolInput, sessionID, ErrMalformed, "tool_input")
}
