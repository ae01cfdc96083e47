package mcpio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// DecodeFrame decodes one inbound JSON value: a JSON-RPC message, or a
// batch of them (an array; isBatch). An empty batch is an error.
func DecodeFrame(data []byte) (msgs []jsonrpc.Message, isBatch bool, err error) {
	if err := checkDepth(data); err != nil {
		return nil, false, err
	}
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		var raws []json.RawMessage
		if err := json.Unmarshal(data, &raws); err != nil {
			return nil, true, fmt.Errorf("mcpio: unmarshaling a jsonrpc batch: %w", err)
		}
		if len(raws) == 0 {
			return nil, true, errors.New("mcpio: empty batch")
		}
		msgs = make([]jsonrpc.Message, 0, len(raws))
		for _, raw := range raws {
			m, err := decodeMessage(raw)
			if err != nil {
				return nil, true, err
			}
			msgs = append(msgs, m)
		}
		return msgs, true, nil
	}
	m, err := decodeMessage(data)
	if err != nil {
		return nil, false, err
	}
	return []jsonrpc.Message{m}, false, nil
}

// maxDepth is the deepest nesting of objects and arrays the SDK's decoder
// reads (its internal json package's defaultMaxDepth); encoding/json alone
// reads 10000.
const maxDepth = 1000

// checkDepth refuses data nested deeper than maxDepth, as the SDK's
// decoder does before it decodes anything (the same scan: brackets
// outside strings).
func checkDepth(data []byte) error {
	depth := 0
	inString, escaped := false, false
	for _, b := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			continue
		}
		switch b {
		case '"':
			inString = true
		case '{', '[':
			if depth++; depth > maxDepth {
				return fmt.Errorf("mcpio: unmarshaling jsonrpc message: nested deeper than %d", maxDepth)
			}
		case '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return nil
}

// DecodeMessage decodes one JSON-RPC message as jsonrpc.DecodeMessage does
// (the same messages, the same errors for the same inputs, but for their
// text), with one pass of encoding/json. Keys match exactly, as in the
// SDK's decoder (encoding/json alone would also take "Method" for
// "method"), and JSON nested deeper than the SDK's decoder reads (1000) is
// an error, as there (encoding/json alone reads 10000).
func DecodeMessage(data []byte) (jsonrpc.Message, error) {
	if err := checkDepth(data); err != nil {
		return nil, err
	}
	return decodeMessage(data)
}

// decodeMessage is DecodeMessage for data whose depth was checked.
func decodeMessage(data []byte) (jsonrpc.Message, error) {
	var w map[string]json.RawMessage
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("mcpio: unmarshaling jsonrpc message: %w", err)
	}
	if w == nil {
		// null: every field absent
		return nil, fmt.Errorf("mcpio: invalid message version tag %q; expected %q", "", "2.0")
	}
	var version string
	if err := decodeField(w, "jsonrpc", &version); err != nil {
		return nil, err
	}
	if version != "2.0" {
		return nil, fmt.Errorf("mcpio: invalid message version tag %q; expected %q", version, "2.0")
	}
	var rawID any
	if err := decodeField(w, "id", &rawID); err != nil {
		return nil, err
	}
	id, err := jsonrpc.MakeID(rawID)
	if err != nil {
		return nil, err
	}
	params, result := rawField(w, "params"), rawField(w, "result")
	var werr *jsonrpc.Error
	if e, ok := w["error"]; ok && !isNull(e) {
		werr, err = decodeError(e)
		if err != nil {
			return nil, err
		}
	}
	if m, ok := w["method"]; ok {
		var method string
		if err := json.Unmarshal(m, &method); err != nil {
			return nil, fmt.Errorf("mcpio: unmarshaling jsonrpc message: method: %w", err)
		}
		return &jsonrpc.Request{Method: method, ID: id, Params: params}, nil
	}
	if !id.IsValid() {
		return nil, errors.New("mcpio: a response without an id (JSON RPC invalid request)")
	}
	resp := &jsonrpc.Response{ID: id, Result: result}
	if werr != nil {
		resp.Error = werr
	}
	return resp, nil
}

// decodeField decodes w[key] into v, if present.
func decodeField(w map[string]json.RawMessage, key string, v any) error {
	raw, ok := w[key]
	if !ok {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("mcpio: unmarshaling jsonrpc message: %s: %w", key, err)
	}
	return nil
}

// rawField is w[key] as a json.RawMessage field decodes it: absent is nil,
// and null stays "null".
func rawField(w map[string]json.RawMessage, key string) json.RawMessage {
	raw, ok := w[key]
	if !ok {
		return nil
	}
	return raw
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// decodeError decodes a response's error object with exact keys.
func decodeError(raw json.RawMessage) (*jsonrpc.Error, error) {
	var w map[string]json.RawMessage
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("mcpio: unmarshaling jsonrpc message: error: %w", err)
	}
	e := &jsonrpc.Error{}
	if err := decodeField(w, "code", &e.Code); err != nil {
		return nil, err
	}
	if err := decodeField(w, "message", &e.Message); err != nil {
		return nil, err
	}
	e.Data = rawField(w, "data")
	return e, nil
}
