// Package codex is statewright's Codex CLI wire adapter: it decodes the JSON
// Codex writes to a hook's stdin and encodes the answers (exit code, stdout
// JSON, stderr) Codex honours for each hook event.
//
// Codex's hook contract resembles Claude Code's, with differences that
// matter for enforcement: PreToolUse honours only a deny (an allow is
// silence, and Codex has no "ask"), so statewright's ask becomes a deny that
// says how a person can act; the shell tool reaches hooks as "Bash" and the
// patch tool as "apply_patch" with the patch body in tool_input.command.
//
// The package is pure: no I/O, no clock, no environment. `statewright hook
// codex <event>` reads stdin, calls the runtime and writes what this package
// encodes. See docs/codex.md for the contract and Codex's enforcement gaps.
package codex

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/statewright-go/statewright/harness/claudecode"
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

// Events lists every event statewright registers, in the order init writes
// them.
var Events = []Event{SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop}

var argNames = map[string]Event{
	"session-start":      SessionStart,
	"user-prompt-submit": UserPromptSubmit,
	"pre-tool-use":       PreToolUse,
	"post-tool-use":      PostToolUse,
	"stop":               Stop,
}

// Arg returns the event's command-line spelling ("pre-tool-use").
func (e Event) Arg() string {
	for k, v := range argNames {
		if v == e {
			return k
		}
	}
	return ""
}

// ToolEvent reports whether the event concerns one tool call.
func (e Event) ToolEvent() bool { return e == PreToolUse || e == PostToolUse }

// ParseEvent accepts an event's command-line spelling ("pre-tool-use") or
// Codex's name ("PreToolUse").
func ParseEvent(s string) (Event, error) {
	if e, ok := argNames[s]; ok {
		return e, nil
	}
	for _, e := range Events {
		if string(e) == s {
			return e, nil
		}
	}
	names := make([]string, 0, len(Events))
	for _, e := range Events {
		names = append(names, e.Arg())
	}
	return "", fmt.Errorf("codex: unknown hook event %q (want one of %s)", s, strings.Join(names, ", "))
}

// MaxInputBytes bounds the hook input the command reads; a larger input (a
// huge patch) is denied rather than decided on a prefix.
const MaxInputBytes = 32 << 20

const maxIDBytes = 256

// Input is the JSON Codex writes to a hook's stdin (the
// *.command.input schemas Codex ships). Fields absent for an event are
// zero; unknown fields are ignored.
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

// Decode decodes and checks the hook input for event: one JSON object, a
// sane session_id always, and for tool events a tool_name, a tool_use_id
// and a tool_input object. The caller answers any error in the event's
// fail-closed way.
func Decode(event Event, data []byte) (*Input, error) {
	if len(data) > MaxInputBytes {
		return nil, fmt.Errorf("%w: %d bytes is more than the %d-byte limit", ErrMalformed, len(data), MaxInputBytes)
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, fmt.Errorf("%w: not a JSON object", ErrMalformed)
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	var in Input
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: trailing data after the JSON object", ErrMalformed)
	}
	if in.HookEventName != "" && in.HookEventName != string(event) {
		return nil, fmt.Errorf("%w: hook_event_name is %q, the hook was registered for %s", ErrWrongEvent, in.HookEventName, event)
	}
	if err := checkID("session_id", in.SessionID); err != nil {
		return nil, err
	}
	if event.ToolEvent() {
		if in.ToolName == "" {
			return nil, fmt.Errorf("%w: tool_name is missing", ErrMalformed)
		}
		if !utf8.ValidString(in.ToolName) || len(in.ToolName) > maxIDBytes {
			return nil, fmt.Errorf("%w: tool_name is not a sane name", ErrMalformed)
		}
		if err := checkID("tool_use_id", in.ToolUseID); err != nil {
			return nil, err
		}
		if !isObject(in.ToolInput) {
			return nil, fmt.Errorf("%w: tool_input is not a JSON object", ErrMalformed)
		}
	}
	return &in, nil
}

func checkID(field, id string) error {
	if id == "" {
		return fmt.Errorf("%w: %s is missing", ErrMalformed, field)
	}
	if len(id) > maxIDBytes {
		return fmt.Errorf("%w: %s is longer than %d bytes", ErrMalformed, field, maxIDBytes)
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c <= ' ' || c >= 0x7f {
			return fmt.Errorf("%w: %s holds a control, space or non-ASCII byte", ErrMalformed, field)
		}
	}
	return nil
}

func isObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) >= 2 && t[0] == '{'
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
	out, err := claudecode.StampSession(toolInput, sessionID)
	if err != nil {
		return nil, fmt.Errorf("%w: tool_input is not a JSON object", ErrMalformed)
	}
	return out, nil
}
