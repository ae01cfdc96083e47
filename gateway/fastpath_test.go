package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sjson "github.com/segmentio/encoding/json"

	"github.com/statewright-go/statewright/store"
)

// TestFastPathAsSDK makes the same calls through the fast path and through
// the SDK's handling of the request: the client sees the same answers and
// the store the same decisions.
func TestFastPathAsSDK(t *testing.T) {
	calls := []struct {
		name string
		args any
		meta mcp.Meta
	}{
		{name: "up__echo", args: map[string]any{"text": "hello <b>&</b> é"}},
		{name: "up__echo", args: map[string]any{"text": "with a progress token"}, meta: mcp.Meta{"progressToken": "p1"}},
		{name: "up__echo", args: map[string]any{"text": "other meta"}, meta: mcp.Meta{"claudecode/toolUseId": "toolu_1"}},
		{name: "up__echo", args: map[string]any{"text": 5}},         // the upstream's schema refuses it
		{name: "up__echo", args: map[string]any{}},                  // so does this
		{name: "up__tool_000", args: nil},                           // no arguments
		{name: "up__tool_002", args: map[string]any{}},              // the phase does not allow it
		{name: "up__slow", args: map[string]any{"seconds": 0.001}},  // allowed, answers
		{name: "statewright_get_state", args: map[string]any{}},     // a control tool: the SDK's
		{name: "up__nope", args: map[string]any{}},                  // no such tool: the SDK's
		{name: "statewright__list_changed", args: map[string]any{}}, // the sentinel: the SDK's
	}
	answers := map[bool][]string{}
	decisions := map[bool]int{}
	for _, sdk := range []bool{true, false} {
		cs, _, g, st := newGatewayFull(t, newUpstream(t, &upstreamProbe{}), gatewaySetup{sdkPath: sdk})
		// The session starts when the SDK has handled the client's
		// notifications/initialized, which may come after the first call
		// was read: that call is the SDK's. Once one call is answered, it
		// has started.
		if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "up__echo", Arguments: map[string]any{"text": "warm"}}); err != nil {
			t.Fatal(err)
		}
		g.fastCalls.Store(0)
		for _, c := range calls {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.name, Arguments: c.args, Meta: c.meta})
			a := "error: " + errText(err)
			if err == nil {
				b, _ := json.Marshal(res)
				a = runID.ReplaceAllString(string(b), "run_X") // each run its own id
				// How many times the run was written depends on when
				// each result was recorded, not on the path: with the
				// next call's decision, or alone once settleDelay passed
				// without one (a slow moment: 2 runs in 20 under -race
				// differed by one, either way).
				a = revision.ReplaceAllString(a, "${1}N")

			}
			answers[sdk] = append(answers[sdk], a)
		}
		g.Wait()
		evs, err := st.Events(context.Background(), store.EventFilter{SessionKey: "claude-code:t", Kinds: []store.EventKind{store.KindDecision}})
		if err != nil {
			t.Fatal(err)
		}
		decisions[sdk] = len(evs)
		if got := g.fastCalls.Load(); sdk && got != 0 || !sdk && got != 8 {
			t.Errorf("sdk path %v: %d calls took the fast path", sdk, got)
		}
	}
	for i, c := range calls {
		if answers[true][i] != answers[false][i] {
			t.Errorf("%s %v:\n fast path %s\n SDK's     %s", c.name, c.args, answers[false][i], answers[true][i])
		}
	}
	if decisions[true] != decisions[false] || decisions[true] == 0 {
		t.Errorf("decisions recorded: fast path %d, SDK's %d", decisions[false], decisions[true])
	}
}

var (
	runID    = regexp.MustCompile(`run_[0-9a-f]+`)
	revision = regexp.MustCompile(`(\\?"revision\\?": ?)[0-9]+`)
)

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestDecodeFastCall(t *testing.T) {
	tests := []struct {
		params   string
		ok       bool
		name     string
		args     string
		progress any
	}{
		{params: `{"name":"up__echo","arguments":{"text":"hi"}}`, ok: true, name: "up__echo", args: `{"text":"hi"}`},
		{params: `{"name":"up__echo"}`, ok: true, name: "up__echo"},
		{params: `{"name":"up__echo","arguments":null}`, ok: true, name: "up__echo", args: `null`},
		{params: `{"name":"up__echo","_meta":{"progressToken":7}}`, ok: true, name: "up__echo", progress: float64(7)},
		{params: `{"name":"up__echo","_meta":{"progressToken":"t"},"arguments":{}}`, ok: true, name: "up__echo", args: `{}`, progress: "t"},
		{params: `{"name":"up__echo","_meta":null}`, ok: true, name: "up__echo"},
		// The SDK's.
		{params: `{"name":"up__echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`},
		{params: `{"name":"up__echo","requestState":"x"}`},
		{params: `{"name":"up__echo","inputResponses":{}}`},
		{params: `{"Name":"up__echo"}`},
		{params: `{"name":""}`},
		{params: `{"name":3}`},
		{params: `{"name":"up__echo","_meta":[1]}`},
		// A repeated _meta: the SDK's decoder merges the objects, so it
		// would see the 2026-07-28 request metadata the last one hides.
		{params: `{"name":"up__echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"_meta":{}}`},
		{params: `{"name":"up__echo","_meta":{"progressToken":"a"},"_m\u0065ta":{"x":1}}`},
		{params: `{}`},
		{params: `null`},
		{params: ``},
		{params: `[1]`},
		{params: `{"name":"up__echo"`},
	}
	for _, tt := range tests {
		t.Run(tt.params, func(t *testing.T) {
			fc, ok := decodeFastCall(json.RawMessage(tt.params))
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			if fc.name != tt.name || string(fc.args) != tt.args || fc.meta["progressToken"] != tt.progress {
				t.Fatalf("got %q %q %v, want %q %q %v", fc.name, fc.args, fc.meta["progressToken"], tt.name, tt.args, tt.progress)
			}
		})
	}
}

// FuzzDecodeFastCall: whatever the parameters, the fast path takes only a
// named call without the SDK's own request metadata.
func FuzzDecodeFastCall(f *testing.F) {
	for _, s := range []string{`{"name":"up__echo","arguments":{"text":"hi"}}`, `{"name":"a","_meta":{"progressToken":1}}`,
		`{"name":"a","_meta":{"io.modelcontextprotocol/protocolVersion":"x"}}`, `{"name":"a","requestState":""}`, `null`,
		`{"name":"a","_meta":{"progressToken":1},"_meta":{"x":2}}`, `{"name":"a","arguments":{"x":1},"arguments":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		fc, ok := decodeFastCall(params)
		if !ok {
			return
		}
		// What the SDK's handling would have read (its internal json
		// package: segmentio's decoder, keys matched exactly).
		var sdk *mcp.CallToolParamsRaw
		dec := sjson.NewDecoder(bytes.NewReader(params))
		dec.DontMatchCaseInsensitiveStructFields()
		if err := dec.Decode(&sdk); err != nil || sdk == nil {
			t.Fatalf("%q taken, but the SDK reads no parameters: %v", params, err)
		}
		if sdk.Name != fc.name || !bytes.Equal(sdk.Arguments, fc.args) ||
			(len(sdk.Meta) != 0 || len(fc.meta) != 0) && !reflect.DeepEqual(map[string]any(sdk.Meta), map[string]any(fc.meta)) {
			t.Fatalf("%q: the fast path reads %q %q %v, the SDK %q %q %v", params, fc.name, fc.args, fc.meta, sdk.Name, sdk.Arguments, sdk.Meta)
		}
		if fc.name == "" || !json.Valid(params) {
			t.Fatalf("%q taken as %+v", params, fc)
		}
		if _, has := fc.meta[metaProtocolVersion]; has {
			t.Fatalf("%q: the 2026-07-28 request metadata taken", params)
		}
		var w map[string]json.RawMessage
		if err := json.Unmarshal(params, &w); err != nil {
			t.Fatalf("%q: %v", params, err)
		}
		for k := range w {
			if !strings.Contains(" name arguments _meta ", " "+k+" ") {
				t.Fatalf("%q: key %q taken", params, k)
			}
		}
	})
}

// TestProgressForwarded: an upstream's progress reaches the client under
// the client's own token while the call is under way, on both paths.
func TestProgressForwarded(t *testing.T) {
	var release chan struct{} // closed when the client heard the progress
	up := mcp.NewServer(&mcp.Implementation{Name: "progress-upstream", Version: "1"}, nil)
	mcp.AddTool(up, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		for i := range 3 {
			if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(),
				Progress: float64(i + 1), Total: 3}); err != nil {
				return nil, nil, err
			}
		}
		select {
		case <-release:
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "heard"}}}, nil, nil
		case <-time.After(10 * time.Second):
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "not heard"}}}, nil, nil
		}
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	t.Cleanup(srv.Close)
	for _, sdk := range []bool{true, false} {
		release = make(chan struct{})
		var heard atomic.Int32
		cs, _ := newGateway(t, srv.URL, gatewaySetup{sdkPath: sdk, client: &mcp.ClientOptions{
			ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
				if r.Params.ProgressToken == "mine" && heard.Add(1) == 3 {
					close(release)
				}
			},
		}})
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "up__echo", Arguments: map[string]any{},
			Meta: mcp.Meta{"progressToken": "mine"}})
		if err != nil || res.IsError || text(res) != "heard" {
			t.Fatalf("sdk path %v: %v %q (progress heard under the client's token: %d)", sdk, err, text(res), heard.Load())
		}
	}
}

// TestFastPathCallEndsWithSession: a client that goes away during a
// fast-path call cancels it upstream, and Gateway.Wait returns only once
// the call is answered and its result recorded, as on the SDK's path.
func TestFastPathCallEndsWithSession(t *testing.T) {
	for _, sdk := range []bool{true, false} {
		probe := &upstreamProbe{}
		cs, _, g, st := newGatewayFull(t, newUpstream(t, probe), gatewaySetup{sdkPath: sdk})
		go cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "up__slow", Arguments: map[string]any{"seconds": 30}})
		waitFor(t, func() bool { return probe.calls.Load() == 1 }, "the slow call to reach the upstream")
		cs.Close()
		g.Wait()
		evs, err := st.Events(context.Background(), store.EventFilter{SessionKey: "claude-code:t",
			Kinds: []store.EventKind{store.KindDecision, store.KindResult}})
		if err != nil {
			t.Fatal(err)
		}
		kinds := []store.EventKind{}
		for _, e := range evs {
			if e.Tool == "up__slow" {
				kinds = append(kinds, e.Kind)
			}
		}
		if len(kinds) != 2 || kinds[0] != store.KindDecision || kinds[1] != store.KindResult {
			t.Fatalf("sdk path %v: events of the call after Wait: %v, want a decision and its result", sdk, kinds)
		}
		waitFor(t, func() bool { return probe.cancelled.Load() == 1 }, "the upstream to see the call cancelled")
	}
}

// TestRequestIDInUse: a call reusing the id of a call under way is dropped
// unanswered, whichever of the fast path and the SDK answers the call under
// way, as the SDK alone drops it: the client never sees two answers with
// one id.
func TestRequestIDInUse(t *testing.T) {
	calls := []struct {
		name        string
		first, then string // a slow call under way, and a call reusing its id
	}{
		{"a fast-path call under way",
			`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"up__slow","arguments":{"seconds":1}}}`,
			`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"up__echo","arguments":{"text":"again"}}}`},
		{"a fast-path call under way, then another method",
			`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"up__slow","arguments":{"seconds":1}}}`,
			`{"jsonrpc":"2.0","id":"x","method":"tools/list"}`},
		{"an SDK call under way", // an unknown parameter: the SDK's
			`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"up__slow","arguments":{"seconds":1},"other":1}}`,
			`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"up__echo","arguments":{"text":"again"}}}`},
	}
	answers := map[bool][]string{}
	for _, sdk := range []bool{true, false} {
		var conn io.ReadWriteCloser
		_, _, g, _ := newGatewayFull(t, newUpstream(t, &upstreamProbe{}), gatewaySetup{sdkPath: sdk, raw: &conn})
		lines := bufio.NewScanner(conn)
		send := func(s string) {
			t.Helper()
			if _, err := io.WriteString(conn, s+"\n"); err != nil {
				t.Fatal(err)
			}
		}
		// read returns the answers (not the notifications) until one
		// that contains until.
		read := func(until string) []string {
			t.Helper()
			var out []string
			for lines.Scan() {
				l := lines.Text()
				if strings.Contains(l, `"method"`) {
					continue
				}
				out = append(out, runID.ReplaceAllString(l, "run_X"))
				if strings.Contains(l, until) {
					return out
				}
			}
			t.Fatalf("the connection ended: %v (read %q)", lines.Err(), out)
			return nil
		}
		send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
		read(`"id":0`)
		send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		// Once one call is answered, the session has started (see
		// TestFastPathAsSDK).
		send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"up__echo","arguments":{"text":"warm"}}}`)
		read(`"id":1`)
		g.fastCalls.Store(0)
		for _, c := range calls {
			send(c.first)
			send(c.then)
			answers[sdk] = append(answers[sdk], strings.Join(read("slept"), "\n"))
		}
		if got := g.fastCalls.Load(); sdk && got != 0 || !sdk && got != 2 {
			t.Errorf("sdk path %v: %d calls took the fast path", sdk, got)
		}
	}
	for i, c := range calls {
		if answers[true][i] != answers[false][i] {
			t.Errorf("%s:\n fast path %s\n SDK's     %s", c.name, answers[false][i], answers[true][i])
		}
		for sdk, a := range answers {
			if n := strings.Count(a[i], "\n") + 1; n != 1 {
				t.Errorf("%s: sdk path %v: %d answers, want the call under way's alone:\n%s", c.name, sdk, n, a[i])
			}
		}
	}
}
