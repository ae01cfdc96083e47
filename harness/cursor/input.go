// Package cursor is statewright's Cursor adapter: it decodes the JSON
// Cursor writes to a hook's stdin (.cursor/hooks.json, version 1), answers
// as Cursor documents: {"permission":"allow"|"deny"|"ask", "user_message",
// "agent_message"} with exit 2 for a deny, and installs the hooks.
//
// Cursor has no offline command-line client that can be pointed at a fake
// model, so this contract is written from Cursor's hook documentation and
// tested with payloads shaped after it (testdata/contract.txtar): it is not
// verified against the real client. See docs/cursor.md.
package cursor

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/statewright-go/statewright/harness/internal/wire"
)

// Event is a Cursor hook event, named as in hooks.json and in the input's
// hook_event_name.
type Event string

// The hook events statewright registers.
const (
	PreToolUse           Event = "preToolUse"
	BeforeShellExecution Event = "beforeShellExecution"
	BeforeMCPExecution   Event = "beforeMCPExecution"
	BeforeReadFile       Event = "beforeReadFile"
	AfterFileEdit        Event = "afterFileEdit"
	Stop                 Event = "stop"
)

// Events lists every event statewright registers, in the order init writes
// them.
var Events = []Event{PreToolUse, BeforeShellExecution, BeforeMCPExecution, BeforeReadFile, AfterFileEdit, Stop}

var events = wire.Events{
	{Arg: "pre-tool-use", Name: string(PreToolUse)},
	{Arg: "before-shell-execution", Name: string(BeforeShellExecution)},
	{Arg: "before-mcp-execution", Name: string(BeforeMCPExecution)},
	{Arg: "before-read-file", Name: string(BeforeReadFile)},
	{Arg: "after-file-edit", Name: string(AfterFileEdit)},
	{Arg: "stop", Name: string(Stop)},
}

// Arg returns the event's command-line spelling ("pre-tool-use").
func (e Event) Arg() string { return events.Arg(string(e)) }

// Gate reports whether the event is asked before an action and can block
// it (and so fails closed).
func (e Event) Gate() bool {
	return e == PreToolUse || e == BeforeShellExecution || e == BeforeMCPExecution || e == BeforeReadFile
}

// ParseEvent accepts an event's command-line spelling or Cursor's name.
func ParseEvent(s string) (Event, error) {
	name, err := events.Parse("cursor: ", s)
	return Event(name), err
}

// Edit is one replacement afterFileEdit reports.
type Edit struct {
	OldString string `json:"old_string"`
	NewString string `json:"new_string"`
}

// Input is the JSON Cursor writes to a hook's stdin. Fields absent for an
// event are zero; unknown fields are ignored.
type Input struct {
	// Common to every event.
	ConversationID string   `json:"conversation_id"`
	GenerationID   string   `json:"generation_id"`
	HookEventName  string   `json:"hook_event_name"`
	WorkspaceRoots []string `json:"workspace_roots"`
	Model          string   `json:"model"`
	CursorVersion  string   `json:"cursor_version"`
	UserEmail      string   `json:"user_email"`
	TranscriptPath *string  `json:"transcript_path"`

	// preToolUse: tool_name ("Shell", "Read", "Write", "StrReplace",
	// "Delete", "MCP:SERVER:TOOL", ...), tool_input, tool_use_id, cwd.
	// beforeMCPExecution: tool_name, tool_input (an object, or a JSON
	// string), and the server's url or command.
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"`
	ToolUseID string          `json:"tool_use_id"`
	URL       string          `json:"url"`
	// Command is beforeShellExecution's command line, or
	// beforeMCPExecution's server command.
	Command string `json:"command"`
	Cwd     string `json:"cwd"`

	// beforeReadFile and afterFileEdit.
	FilePath string `json:"file_path"`
	Edits    []Edit `json:"edits"`

	// stop: completed, aborted or error; loop_count is how many follow-ups
	// a stop hook already caused.
	Status    string `json:"status"`
	LoopCount int    `json:"loop_count"`
}

// Errors returned by Decode, errors.Is-able.
var (
	ErrMalformed  = errors.New("cursor: malformed hook input")
	ErrWrongEvent = errors.New("cursor: hook input is for another event")
)

var decoding = wire.Decoding{Malformed: ErrMalformed}

// Decode decodes and checks the hook input for event: one JSON object with
// a sane conversation_id, and what the event needs (preToolUse: tool_name
// and a tool_input object; beforeShellExecution: command;
// beforeMCPExecution: tool_name and a tool_input object or JSON-object
// string; beforeReadFile and afterFileEdit: file_path). tool_input given as
// a string is replaced by the object it holds.
func Decode(event Event, data []byte) (*Input, error) {
	var in Input
	if err := decoding.Decode(data, &in); err != nil {
		return nil, err
	}
	if err := decoding.EventName(ErrWrongEvent, in.HookEventName, string(event)); err != nil {
		return nil, err
	}
	if err := decoding.ID("conversation_id", in.ConversationID); err != nil {
		return nil, err
	}
	if in.ToolUseID != "" {
		if err := decoding.ID("tool_use_id", in.ToolUseID); err != nil {
			return nil, err
		}
	}
	switch event {
	case PreToolUse, BeforeMCPExecution:
		if err := decoding.ToolName(in.ToolName); err != nil {
			return nil, err
		}
		obj, err := objectInput(in.ToolInput)
		if err != nil {
			return nil, err
		}
		in.ToolInput = obj
	case BeforeShellExecution:
		if strings.TrimSpace(in.Command) == "" {
			return nil, fmt.Errorf("%w: command is missing", ErrMalformed)
		}
	case BeforeReadFile, AfterFileEdit:
		if in.FilePath == "" {
			return nil, fmt.Errorf("%w: file_path is missing", ErrMalformed)
		}
	}
	return &in, nil
}

// objectInput accepts a JSON object, or a string holding one (Cursor's
// beforeMCPExecution documents both); absent means {}.
func objectInput(raw json.RawMessage) (json.RawMessage, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return json.RawMessage(`{}`), nil
	}
	if t[0] == '"' {
		var s string
		if err := json.Unmarshal(t, &s); err != nil {
			return nil, fmt.Errorf("%w: tool_input: %v", ErrMalformed, err)
		}
		t = bytes.TrimSpace([]byte(s))
	}
	var m map[string]json.RawMessage
	if len(t) == 0 || t[0] != '{' || json.Unmarshal(t, &m) != nil {
		return nil, fmt.Errorf("%w: tool_input is not a JSON object", ErrMalformed)
	}
	return json.RawMessage(t), nil
}

// SessionPrefix prefixes every Cursor session key in the store.
const SessionPrefix = "cursor:"

// SessionKey returns the store's session key for a Cursor conversation.
func SessionKey(conversationID string) string { return SessionPrefix + conversationID }

// CallID returns the id a call is recorded under: Cursor's tool_use_id
// when it gives one, else one derived from the event, the generation and
// the call's content (beforeShellExecution, beforeMCPExecution and
// beforeReadFile carry no tool_use_id), so a retried hook is idempotent and
// two different calls never share an id.
func CallID(event Event, in *Input, tool string, input json.RawMessage) string {
	if in.ToolUseID != "" {
		return in.ToolUseID
	}
	h := sha256.New()
	h.Write([]byte(in.GenerationID))
	h.Write([]byte{0})
	h.Write([]byte(tool))
	h.Write([]byte{0})
	h.Write(input)
	return "cursor-" + event.Arg() + "-" + hex.EncodeToString(h.Sum(nil)[:12])
}
