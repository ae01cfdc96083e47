// Package jsplugin is the wire between statewright's in-process harness
// plugins (the opencode plugin and the Pi extension, both TypeScript) and
// the statewright binary. The plugin runs `statewright hook <harness>
// <event>` with one JSON object on stdin and reads one JSON answer on
// stdout; the law stays in Go.
//
// The package is pure: it decodes inputs, renders answers and converts
// them to and from the runtime's types. The command in cmd/statewright does
// the I/O. See docs/opencode.md and docs/pi.md.
//
// Fail closed, on both sides: the binary answers every failure to decide a
// tool call with a deny (exit code [ExitDeny]); the plugin allows a call
// only on exit code 0 with a well-formed answer whose decision is "allow",
// and blocks on anything else (the binary missing, a crash, a timeout,
// garbage on stdout).
package jsplugin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Event is what the plugin asks the binary.
type Event string

// The events.
const (
	// ToolBefore decides a tool call before it runs (opencode
	// tool.execute.before, Pi tool_call): allow, or deny with the reason.
	ToolBefore Event = "tool-before"
	// ToolAfter records a tool call's outcome (opencode tool.execute.after,
	// Pi tool_result); after a control tool it returns the phase context.
	ToolAfter Event = "tool-after"
	// SessionStart reports a new session (opencode session.created, Pi
	// session_start); it may start the operator's default workflow and
	// returns the phase context.
	SessionStart Event = "session-start"
	// Context returns the phase context for the model's system prompt
	// (Pi before_agent_start, opencode's system transform).
	Context Event = "context"
	// Control runs one of statewright's control tools (statewright_get_state,
	// statewright_transition, ...) for the session, for harnesses whose
	// plugin registers them itself (Pi).
	Control Event = "control"
)

// Events lists every event, in documentation order.
var Events = []Event{SessionStart, Context, ToolBefore, ToolAfter, Control}

// ParseEvent accepts an event name.
func ParseEvent(s string) (Event, error) {
	for _, e := range Events {
		if string(e) == s {
			return e, nil
		}
	}
	names := make([]string, len(Events))
	for i, e := range Events {
		names[i] = string(e)
	}
	return "", fmt.Errorf("unknown event %q (want one of %s)", s, strings.Join(names, ", "))
}

// MaxInputBytes bounds the input the command reads (tool arguments can be
// whole files; plugins truncate tool output before sending it).
const MaxInputBytes = 32 << 20

// ErrMalformed is wrapped by every decoding error.
var ErrMalformed = errors.New("statewright plugin: malformed hook input")

// Input is what the plugin sends on stdin: one JSON object.
type Input struct {
	// Session is the harness's session id (opencode "ses_…", Pi's UUID).
	Session string `json:"session"`
	// Cwd is the project directory the harness runs in.
	Cwd string `json:"cwd"`
	// Tool is the tool's name as the harness reports it ("write", "bash",
	// "statewright_transition"). Required for tool events and Control.
	Tool string `json:"tool,omitempty"`
	// CallID is the harness's id of the tool call; decisions and results
	// are idempotent on it.
	CallID string `json:"call_id,omitempty"`
	// Args is the tool's input, a JSON object.
	Args json.RawMessage `json:"args,omitempty"`
	// Output is the tool's result text (ToolAfter), possibly truncated.
	Output string `json:"output,omitempty"`
	// Failed reports that the tool failed (ToolAfter).
	Failed bool `json:"failed,omitempty"`
	// ExitCode is a shell tool's exit status, when the harness reports it.
	ExitCode *int `json:"exit_code,omitempty"`
}

// Decode parses and checks the plugin's input for event. Every error wraps
// [ErrMalformed] and says what is wrong.
func Decode(event Event, data []byte) (*Input, error) {
	if len(data) > MaxInputBytes {
		return nil, fmt.Errorf("%w: %d bytes is more than the %d-byte limit", ErrMalformed, len(data), MaxInputBytes)
	}
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%w: not UTF-8", ErrMalformed)
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, fmt.Errorf("%w: want one JSON object on stdin", ErrMalformed)
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	var in Input
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: trailing data after the JSON object", ErrMalformed)
	}
	if !ValidSessionID(in.Session) {
		return nil, fmt.Errorf("%w: session %q is missing or not a plausible session id", ErrMalformed, in.Session)
	}
	if in.Cwd == "" || in.Cwd[0] != '/' {
		return nil, fmt.Errorf("%w: cwd %q is not an absolute path", ErrMalformed, in.Cwd)
	}
	switch event {
	case ToolBefore, ToolAfter, Control:
		if strings.TrimSpace(in.Tool) == "" || len(in.Tool) > 256 {
			return nil, fmt.Errorf("%w: %s needs a tool name", ErrMalformed, event)
		}
		if len(in.Args) == 0 || string(in.Args) == "null" {
			in.Args = json.RawMessage(`{}`)
		}
		if !isObject(in.Args) {
			return nil, fmt.Errorf("%w: args of %s is not a JSON object", ErrMalformed, in.Tool)
		}
	}
	return &in, nil
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return false
	}
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}

// ValidSessionID accepts harness session ids (UUIDs, opencode's "ses_…"):
// an ASCII letter or digit, then at most 127 letters, digits, '.', '_' or
// '-'. It matches what the MCP server accepts as a session stamp.
func ValidSessionID(id string) bool {
	if len(id) == 0 || len(id) > 128 || !isAlnum(id[0]) {
		return false
	}
	for i := 1; i < len(id); i++ {
		if c := id[i]; !isAlnum(c) && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// Exit codes of the hook command.
const (
	// ExitOK: the answer on stdout holds the decision.
	ExitOK = 0
	// ExitDeny: the call is denied (the answer on stdout says why, when
	// there is one). The plugins treat every code but 0 as a deny.
	ExitDeny = 2
)

// Decisions an answer carries.
const (
	Allow = "allow"
	Deny  = "deny"
	// OK answers events that decide nothing (results, context, control).
	OK = "ok"
)

// Answer is what the command prints on stdout: one JSON object.
type Answer struct {
	// Decision is "allow" or "deny" for ToolBefore, "ok" otherwise.
	Decision string `json:"decision"`
	// Reason says why a call was denied; the plugin hands it to the model
	// as the tool's error.
	Reason string `json:"reason,omitempty"`
	// Args, when set, replaces the tool's arguments (the session stamp on
	// statewright's MCP control tools).
	Args json.RawMessage `json:"args,omitempty"`
	// Context is text for the model: the phase, its tools and next events.
	Context string `json:"context,omitempty"`
	// Text is a control tool's result (Control).
	Text string `json:"text,omitempty"`
	// IsError marks a control tool's result as an error (Control).
	IsError bool `json:"is_error,omitempty"`
	// Notice is a warning for the user (a failure on a non-blocking event).
	Notice string `json:"notice,omitempty"`
	// Exit is the process exit code (not encoded).
	Exit int `json:"-"`
}

// Encode renders the answer as one line of JSON.
func (a Answer) Encode() []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(a); err != nil {
		// Only invalid Args can fail; fall back to a deny that says so.
		b.Reset()
		enc.Encode(Answer{Decision: Deny, Reason: "statewright: could not encode the answer: " + err.Error()})
	}
	return b.Bytes()
}

// AllowCall allows a tool call; args, when non-nil, replace its arguments.
func AllowCall(args json.RawMessage) Answer { return Answer{Decision: Allow, Args: args, Exit: ExitOK} }

// DenyCall denies a tool call with reason.
func DenyCall(reason string) Answer { return Answer{Decision: Deny, Reason: reason, Exit: ExitDeny} }

// Done answers an event that decides nothing, with optional context.
func Done(context string) Answer { return Answer{Decision: OK, Context: context, Exit: ExitOK} }

// Failure is the answer when the command cannot do its job for event:
// ToolBefore and Control deny (fail closed); the other events carry a
// notice and a context line saying that every tool call is denied until a
// person fixes it.
func Failure(event Event, msg string) Answer {
	msg = "statewright: " + strings.TrimPrefix(msg, "statewright: ")
	switch event {
	case ToolBefore:
		return DenyCall(msg + "; the call is denied (statewright fails closed). A person must fix this; run `statewright doctor`.")
	case Control:
		return Answer{Decision: Deny, Reason: msg, Text: msg, IsError: true, Exit: ExitDeny}
	default:
		return Answer{Decision: OK, Notice: msg + " (run `statewright doctor`)",
			Context: msg + ". Until a person fixes this, statewright denies every tool call.", Exit: ExitOK}
	}
}
