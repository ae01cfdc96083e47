// Package claudecode is statewright's Claude Code wire adapter: it decodes
// the JSON Claude Code writes to a hook's stdin, and encodes the answers
// (exit code, stdout JSON, stderr) Claude Code honours for each hook event.
//
// The package is pure: no I/O, no clock, no environment. The `statewright
// hook claude-code <event>` command reads stdin, calls the runtime and
// writes what this package encodes. See docs/claude-code.md for the
// contract, per event, and why each answer has the shape it has.
package claudecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Event is a Claude Code hook event, named as Claude Code names it in
// settings.json and in the input's hook_event_name.
type Event string

// The hook events statewright registers.
const (
	SessionStart       Event = "SessionStart"
	UserPromptSubmit   Event = "UserPromptSubmit"
	PreToolUse         Event = "PreToolUse"
	PostToolUse        Event = "PostToolUse"
	PostToolUseFailure Event = "PostToolUseFailure"
	Stop               Event = "Stop"
	SubagentStop       Event = "SubagentStop"
	SessionEnd         Event = "SessionEnd"
)

// Events lists every event statewright registers, in the order init writes
// them.
var Events = []Event{SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, PostToolUseFailure, Stop, SubagentStop, SessionEnd}

// argNames maps the command-line spelling to the event.
var argNames = map[string]Event{
	"session-start":         SessionStart,
	"user-prompt-submit":    UserPromptSubmit,
	"pre-tool-use":          PreToolUse,
	"post-tool-use":         PostToolUse,
	"post-tool-use-failure": PostToolUseFailure,
	"stop":                  Stop,
	"subagent-stop":         SubagentStop,
	"session-end":           SessionEnd,
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

// ToolEvent reports whether the event concerns one tool call (and so has a
// matcher in settings.json and tool_name in its input).
func (e Event) ToolEvent() bool {
	return e == PreToolUse || e == PostToolUse || e == PostToolUseFailure
}

// ParseEvent accepts an event's command-line spelling ("pre-tool-use") or
// Claude Code's name ("PreToolUse").
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
	return "", fmt.Errorf("claude-code: unknown hook event %q (want one of %s)", s, strings.Join(names, ", "))
}

// MaxInputBytes bounds the hook input the command reads. A tool input
// larger than this (a huge Write) is denied rather than decided on a
// prefix.
const MaxInputBytes = 32 << 20

// maxIDBytes bounds session and tool-use ids.
const maxIDBytes = 256

// Input is the JSON Claude Code writes to a hook's stdin. Fields absent for
// an event are zero. Unknown fields are ignored: Claude Code adds fields
// between versions.
type Input struct {
	// Common to every event.
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	PermissionMode string `json:"permission_mode"`
	HookEventName  string `json:"hook_event_name"`
	// AgentID and AgentType are set inside a subagent; its calls are
	// decided like the main agent's, on the same session.
	AgentID   string `json:"agent_id"`
	AgentType string `json:"agent_type"`

	// Tool events.
	ToolName     string          `json:"tool_name"`
	ToolInput    json.RawMessage `json:"tool_input"`
	ToolUseID    string          `json:"tool_use_id"`
	ToolResponse json.RawMessage `json:"tool_response"`
	// Error is PostToolUseFailure's error text.
	Error string `json:"error"`

	// UserPromptSubmit.
	Prompt string `json:"prompt"`
	// Stop and SubagentStop: true when Claude is already continuing
	// because a stop hook blocked.
	StopHookActive bool `json:"stop_hook_active"`
	// SessionStart: startup, resume, clear or compact.
	Source string `json:"source"`
	// SessionEnd: why the session ended.
	Reason string `json:"reason"`
}

// Errors returned by Decode, errors.Is-able.
var (
	// ErrMalformed: the input is not a JSON object of the documented shape.
	ErrMalformed = errors.New("claude-code: malformed hook input")
	// ErrWrongEvent: hook_event_name names another event than the one the
	// hook was registered for.
	ErrWrongEvent = errors.New("claude-code: hook input is for another event")
)

// Decode decodes and checks the hook input for event. It returns an error
// wrapping ErrMalformed when data is not one JSON object, when a field has
// the wrong type, when a required field is missing (session_id always;
// tool_name, tool_input and tool_use_id for tool events) or when an id is
// not sane; and ErrWrongEvent when hook_event_name is present and differs
// from event. The caller answers any error in the event's fail-closed way.
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

// checkID requires a non-empty, bounded id of printable ASCII without
// spaces: ids end up in session keys, hook commands and log lines.
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

// isObject reports whether raw is a JSON object (after whitespace).
func isObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) >= 2 && t[0] == '{'
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
const SessionStampKey = "statewright_session"

// StampSession returns toolInput with SessionStampKey set to sessionID,
// overwriting whatever the model put there. The other keys keep their
// values; Claude Code's updatedInput replaces the whole input, so the
// result carries every field.
func StampSession(toolInput json.RawMessage, sessionID string) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(toolInput, &m); err != nil || m == nil {
		return nil, fmt.Errorf("%w: tool_input is not a JSON object", ErrMalformed)
	}
	id, err := json.Marshal(sessionID)
	if err != nil {
		return nil, fmt.Errorf("claude-code: stamp session: %w", err)
	}
	m[SessionStampKey] = id
	out, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("claude-code: stamp session: %w", err)
	}
	return out, nil
}

// PromptingModes are the permission modes in which a person answers Claude
// Code's permission prompts. Only there may an "ask" become a grant; in
// plan, acceptEdits, auto, dontAsk and bypassPermissions something other
// than a person answers, so an ask is a deny (DESIGN.md "Approvals").
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
