package mcpio

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// decodeCases are inbound messages DecodeMessage must read as the SDK's
// jsonrpc.DecodeMessage does.
var decodeCases = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"up__echo","arguments":{"text":"hi"}}}`,
	`{"jsonrpc":"2.0","id":"abc","method":"initialize","params":{"protocolVersion":"2025-06-18"}}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"x"}}`,
	`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"ok"}]}}`,
	`{"jsonrpc":"2.0","id":7,"result":null}`,
	`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no such method","data":{"x":1}}}`,
	`{"jsonrpc":"2.0","id":7,"error":null,"result":{}}`,
	`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1e3,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"method":""}`,
	`{"jsonrpc":"2.0","id":1,"method":null}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":null}`,
	` { "params" : [1, 2] , "method" : "m" , "jsonrpc" : "2.0" } `,
	`{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}`,
	`{"jsonrpc":"2.0","id":1,"Method":"ping"}`,
	`{"JSONRPC":"2.0","id":1,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"error":{"Code":5,"message":"m"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","extra":{"deep":[1,2,3]}}`,
	// errors
	`{"jsonrpc":"1.0","id":1,"method":"ping"}`,
	`{"id":1,"method":"ping"}`,
	`{"jsonrpc":2,"id":1,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":true,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":{},"method":"ping"}`,
	`{"jsonrpc":"2.0","id":[1],"method":"ping"}`,
	`{"jsonrpc":"2.0","method":3}`,
	`{"jsonrpc":"2.0","result":{}}`,
	`{"jsonrpc":"2.0","id":null,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}`,
	`{"jsonrpc":"2.0","id":1,"error":[1]}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping"`,
	`null`,
	`"2.0"`,
	`42`,
	``,
	`{}`,
	// as deep as the SDK's decoder reads, and deeper (an error)
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":` + strings.Repeat("[", 999) + strings.Repeat("]", 999) + `}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"s":"` + strings.Repeat("[", 1500) + `"}}`,
}

func TestDecodeMessageAsSDK(t *testing.T) {
	for _, in := range decodeCases {
		t.Run(in, func(t *testing.T) { sameAsSDK(t, []byte(in)) })
	}
}

// sameAsSDK fails when DecodeMessage and the SDK's decoder disagree on in.
func sameAsSDK(t *testing.T, in []byte) {
	t.Helper()
	want, werr := jsonrpc.DecodeMessage(in)
	got, gerr := DecodeMessage(in)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("%s: error %v, the SDK's %v", in, gerr, werr)
	}
	if werr != nil {
		return
	}
	if g, w := describe(got), describe(want); g != w {
		t.Fatalf("%s:\n got %s\nwant %s", in, g, w)
	}
}

// describe prints a message's every field.
func describe(m jsonrpc.Message) string {
	switch m := m.(type) {
	case *jsonrpc.Request:
		return fmt.Sprintf("request id=%#v method=%q params=%q", m.ID.Raw(), m.Method, m.Params)
	case *jsonrpc.Response:
		e := "<nil>"
		if m.Error != nil {
			we := m.Error.(*jsonrpc.Error)
			e = fmt.Sprintf("%d %q %q", we.Code, we.Message, we.Data)
		}
		return fmt.Sprintf("response id=%#v result=%q error=%s", m.ID.Raw(), m.Result, e)
	}
	return fmt.Sprintf("%T", m)
}

func TestDecodeFrame(t *testing.T) {
	tests := []struct {
		in      string
		n       int
		batch   bool
		wantErr bool
	}{
		{in: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, n: 1},
		{in: ` [{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`, n: 2, batch: true},
		{in: `[]`, batch: true, wantErr: true},
		{in: `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"1.0"}]`, batch: true, wantErr: true},
		{in: `[1,`, batch: true, wantErr: true},
		{in: `{"jsonrpc":"2.0"`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			msgs, batch, err := DecodeFrame([]byte(tt.in))
			if (err != nil) != tt.wantErr || batch != tt.batch || len(msgs) != tt.n {
				t.Fatalf("DecodeFrame = %d messages, batch %v, err %v; want %d, %v, error %v", len(msgs), batch, err, tt.n, tt.batch, tt.wantErr)
			}
		})
	}
}

// FuzzDecodeMessage checks DecodeMessage against the SDK's decoder on
// anything: the same messages, errors for the same inputs.
func FuzzDecodeMessage(f *testing.F) {
	for _, in := range decodeCases {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if !json.Valid(in) {
			if _, err := DecodeMessage(in); err == nil {
				t.Fatalf("%q: invalid JSON decoded", in)
			}
			return
		}
		sameAsSDK(t, in)
	})
}
