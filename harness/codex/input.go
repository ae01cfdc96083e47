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
	"errors"
	"fmt"
	"strings"

	"github.com/statewright-go/statewright/harness/internal/wire"
)

// Event is a Codex hook event, named as Codex names it in config.toml and
// in the input's hook_event_name.
type Event string

// The hook events statewright registers.
const (
	SessionStart     Event = "SessionStart"
	UserPromptSubmit Event = "UserPromptSubmit"
	PreToolUse       Event = "PreToolUse"
	PostToolUse      Event = "PostToolUse"
	Stop             Event = "Stop"
)

var events = wire.Events{
	{Arg: "session-start", Name: string(SessionStart)},
	{Arg: "user-prompt-submit", Name: string(UserPromptSubmit)},
	{Arg: "pre-tool-use", Name: string(PreToolUse)},
	{Arg: "post-tool-use", Name: string(PostToolUse)},
	{Arg: "stop", Name: string(Stop)},
}

// Events lists every event statewright registers, in the order init writes
// them.
var Events = []Event{SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop}

// Arg returns the event's command-line spelling ("pre-tool-use").
func (e Event) Arg() string { return events.Arg(string(e)) }

// ToolEvent reports whether the event concerns one tool call.
func (e Event) ToolEvent() bool { return e == PreToolUse || e == PostToolUse }

// ParseEvent accepts an event's command-line spelling ("pre-tool-use") or
// Codex's name ("PreToolUse").
func ParseEvent(s string) (Event, error) {
	name, err := events.Parse("codex: ", s)
	return Event(name), err
}

// Input is the JSON Codex writes to a hook's stdin (the *.command.input
// schemas Codex ships). Fields absent for an event are zero; unknown
// fields are ignored.
type Input struct {
	// Common to every event.
	SessionID      string  `json:"session_id"`
	TurnID         string  `json:"turn_id"`
	TranscriptPath *string `json:"transcript_path"`
	Cwd            string  `json:"cwd"`
	HookEventName  string  `json:"hook_event_name"`
	Model          string  `json:"model"`
	PermissionMode string  `json:"permission_mode"`
	// AgentID and AgentType are set inside a subagent.
	AgentID   string `json:"agent_id"`
	AgentType string `json:"agent_type"`

	// Tool events. The shell tool is "Bash" with tool_input.command; the
	// patch tool is "apply_patch" with the patch in tool_input.command; MCP
	// tools are "mcp__SERVER__TOOL".
	ToolName     string          `json:"tool_name"`
	ToolInput    json.RawMessage `json:"tool_input"`
	ToolUseID    string          `json:"tool_use_id"`
	ToolResponse json.RawMessage `json:"tool_response"`

	// UserPromptSubmit.
	Prompt string `json:"prompt"`
	// Stop: true when Codex is already continuing because a stop hook
	// blocked.
	StopHookActive bool `json:"stop_hook_active"`
	// SessionStart: startup, resume, clear, compact or fork.
	Source string `json:"source"`
}

// Errors returned by Decode, errors.Is-able.
var (
	// ErrMalformed: the input is not a JSON object of the documented shape.
	ErrMalformed = errors.New("codex: malformed hook input")
	// ErrWrongEvent: hook_event_name names another event than the one the
	// hook was registered for.
	ErrWrongEvent = errors.New("codex: hook input is for another event")
)

var decoding = wire.Decoding{Malformed: ErrMalformed}

// Decode decodes and checks the hook input for event: one JSON object, a
// sane session_id always, and for tool events a tool_name, a tool_use_id
// and a tool_input object. The caller answers any error in the event's
// fail-closed way.
func Decode(event Event, data []byte) (*Input, error) {
	var in Input
	if err := decoding.Decode(data, &in); err != nil {
		return nil, err
	}
	if err := decoding.EventName(ErrWrongEvent, in.HookEventName, string(event)); err != nil {
		return nil, err
	}
	if err := decoding.ID("session_id", in.SessionID); err != nil {
		return nil, err
	}
	if event.ToolEvent() {
		if err := decoding.ToolName(in.ToolName); err != nil {
			return nil, err
		}
		if err := decoding.ID("tool_use_id", in.ToolUseID); err != nil {
			return nil, err
		}
		if !wire.IsObject(in.ToolInput) {
			return nil, fmt.Errorf("%w: tool_input is not a JSON object", ErrMalformed)
		}
	}
	return &in, nil
}

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
