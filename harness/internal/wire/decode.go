// Package wire is the wire code the harness adapters share: decoding a
// hook's JSON input, event names, the hook-output JSON that Claude Code
// and Codex read, the plugin wire of the opencode plugin and the Pi
// extension, and the texts that tell the agent where its run is. It is
// pure: no I/O, no clock, no environment.
package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/statewright-go/statewright/harness"
)

// Decoding options.
type Decoding struct {
	// Malformed is the harness's error that every decoding error wraps.
	Malformed error
	// Strict refuses unknown fields and input that is not UTF-8 (a wire
	// statewright owns on both ends, such as the plugins').
	Strict bool
	// NotObject is the message for input that is not a JSON object.
	NotObject string
}

// Decode decodes data, one JSON object and nothing after it, into v.
func (d Decoding) Decode(data []byte, v any) error {
	if len(data) > harness.MaxInputBytes {
		return fmt.Errorf("%w: %d bytes is more than the %d-byte limit", d.Malformed, len(data), harness.MaxInputBytes)
	}
	if d.Strict && !utf8.Valid(data) {
		return fmt.Errorf("%w: not UTF-8", d.Malformed)
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		msg := d.NotObject
		if msg == "" {
			msg = "not a JSON object"
		}
		return fmt.Errorf("%w: %s", d.Malformed, msg)
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if d.Strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", d.Malformed, err)
	}
	if dec.More() {
		return fmt.Errorf("%w: trailing data after the JSON object", d.Malformed)
	}
	return nil
}

// maxIDBytes bounds ids and tool names.
const maxIDBytes = 256

// ID requires a non-empty, bounded id of printable ASCII without spaces:
// ids end up in session keys, hook commands and log lines.
func (d Decoding) ID(field, id string) error {
	if id == "" {
		return fmt.Errorf("%w: %s is missing", d.Malformed, field)
	}
	if len(id) > maxIDBytes {
		return fmt.Errorf("%w: %s is longer than %d bytes", d.Malformed, field, maxIDBytes)
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c <= ' ' || c >= 0x7f {
			return fmt.Errorf("%w: %s holds a control, space or non-ASCII byte", d.Malformed, field)
		}
	}
	return nil
}

// ToolName requires a present, sane tool name.
func (d Decoding) ToolName(name string) error {
	if strings.TrimSpace(name) == "" {
		return fmt.Errorf("%w: tool_name is missing", d.Malformed)
	}
	if !utf8.ValidString(name) || len(name) > maxIDBytes {
		return fmt.Errorf("%w: tool_name is not a sane name", d.Malformed)
	}
	return nil
}

// EventName refuses input whose hook_event_name names another event than
// the one the hook was registered for.
func (d Decoding) EventName(wrong error, got, want string) error {
	if got != "" && got != want {
		return fmt.Errorf("%w: hook_event_name is %q, the hook was registered for %s", wrong, got, want)
	}
	return nil
}

// IsObject reports whether raw is a JSON object (after white space).
func IsObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) >= 2 && t[0] == '{'
}

// SessionStampKey is the tool-input key a hook sets on every statewright
// control call to the hook's session id. statewright's MCP server trusts it
// over its own environment (which goes stale after /clear).
const SessionStampKey = "statewright_session"

// Stamp returns input with SessionStampKey set to session, overwriting
// whatever the model put there. The other keys keep their values: a
// harness's updatedInput replaces the whole input, so the result carries
// every field. An input that is not a JSON object is an error wrapping
// malformed.
func Stamp(input json.RawMessage, session string, malformed error, field string) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(input, &m); err != nil || m == nil {
		return nil, fmt.Errorf("%w: %s is not a JSON object", malformed, field)
	}
	id, err := json.Marshal(session)
	if err != nil {
		return nil, fmt.Errorf("stamp session: %w", err)
	}
	m[SessionStampKey] = id
	out, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("stamp session: %w", err)
	}
	return out, nil
}

// Encode renders v as one line of JSON, HTML characters unescaped so deny
// reasons stay readable in transcripts. Only an invalid json.RawMessage in
// v can fail, and callers pass valid JSON.
func Encode(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("wire: encode answer: " + err.Error())
	}
	return b.Bytes()
}

// Line ends s with exactly one newline.
func Line(s string) string { return strings.TrimRight(s, "\n") + "\n" }

// Prefixed puts "statewright: " before msg, once.
func Prefixed(msg string) string { return "statewright: " + strings.TrimPrefix(msg, "statewright: ") }

// FailClosed is what a failure to decide a call says after its reason.
const FailClosed = "; the call is denied (statewright fails closed). A person must fix this; run `statewright doctor`."
