package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// postUpstream serves tools that exercise what an upstream may send on a
// call's stream: an answer, an error result, structured content, a
// request to the client before the answer (ping, roots/list, elicitation,
// sampling), and a notification.
func postUpstream(t *testing.T, opts *mcp.StreamableHTTPOptions) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "post-upstream", Version: "1"}, nil)
	type in struct {
		Text string `json:"text,omitempty"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "fails"}, func(context.Context, *mcp.CallToolRequest, in) (*mcp.CallToolResult, any, error) {
		return nil, nil, errors.New("it failed")
	})
	mcp.AddTool(s, &mcp.Tool{Name: "structured"}, func(_ context.Context, _ *mcp.CallToolRequest, in in) (*mcp.CallToolResult, struct {
		Len int `json:"len"`
	}, error) {
		return nil, struct {
			Len int `json:"len"`
		}{len(in.Text)}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "asks"}, func(ctx context.Context, req *mcp.CallToolRequest, in in) (*mcp.CallToolResult, any, error) {
		var out []string
		if err := req.Session.Ping(ctx, nil); err != nil {
			out = append(out, "ping: "+err.Error())
		} else {
			out = append(out, "ping ok")
		}
		if r, err := req.Session.ListRoots(ctx, nil); err != nil {
			out = append(out, "roots: "+err.Error())
		} else {
			b, _ := json.Marshal(r.Roots)
			out = append(out, "roots "+string(b))
		}
		if _, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "ok?", RequestedSchema: map[string]any{"type": "object"}}); err != nil {
			out = append(out, "elicit: "+err.Error())
		}
		if _, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{}); err != nil {
			out = append(out, "sampling: "+err.Error())
		}
		if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "a log line"}); err != nil {
			out = append(out, "log: "+err.Error())
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(out, "; ")}}}, nil, nil
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, opts))
	t.Cleanup(srv.Close)
	return srv.URL
}

// startManager runs a manager for one HTTP upstream at url.
func startManager(t *testing.T, url string, sdk bool) *Manager {
	t.Helper()
	cfg := &Config{Timeout: Duration(2 * time.Second), Upstreams: []Upstream{{Name: "up", URL: url}}}
	if err := cfg.Check(); err != nil {
		t.Fatal(err)
	}
	m := NewManager(cfg, t.TempDir(), nil)
	m.sdkCalls = sdk
	m.restartBase = 10 * time.Millisecond
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

// TestPostCallAsSDK: a call the gateway posts to an HTTP upstream itself
// gets what the SDK's client gets, for each thing an upstream may send on
// the call's stream, answering as an event stream or as one JSON body.
func TestPostCallAsSDK(t *testing.T) {
	calls := []struct{ tool, args string }{
		{"echo", `{"text":"hello"}`},
		{"echo", `{ "text" : "spaced" }`},
		{"echo", ``},
		{"fails", `{}`},
		{"structured", `{"text":"four"}`},
		{"asks", `{}`},
		{"missing", `{}`}, // not a tool of the upstream: a JSON-RPC error
		{"echo", `{"text":1}`},
	}
	for _, json := range []bool{false, true} {
		url := postUpstream(t, &mcp.StreamableHTTPOptions{JSONResponse: json})
		managers := map[bool]*Manager{true: startManager(t, url, true), false: startManager(t, url, false)}
		for _, c := range calls {
			results := map[bool]string{}
			for sdk, m := range managers {
				before := m.posted.Load()
				res, err := m.Call(context.Background(), Route{Upstream: &m.cfg.Upstreams[0], Name: c.tool}, []byte(c.args), nil, nil)
				if posted := m.posted.Load() - before; !sdk && err == nil && posted != 1 {
					t.Fatalf("json %v, %s %s: %d calls posted by the gateway, want 1", json, c.tool, c.args, posted)
				}
				if err != nil {
					results[sdk] = "error"
					continue
				}
				b, err := encodeResult(res)
				if err != nil {
					t.Fatal(err)
				}
				results[sdk] = string(b)
			}
			if results[true] != results[false] {
				t.Errorf("json %v, %s %s:\nSDK    %s\nposted %s", json, c.tool, c.args, results[true], results[false])
			}
		}
	}
}

// TestPostCallSessionGone: when the upstream ends the session, a posted
// call fails, the upstream is connected again, and the next call works.
func TestPostCallSessionGone(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "forgetful", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "here"}}}, nil, nil
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	m := startManager(t, srv.URL, false)
	route := Route{Upstream: &m.cfg.Upstreams[0], Name: "echo"}
	if _, err := m.Call(context.Background(), route, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	for ss := range s.Sessions() {
		ss.Close()
	}
	if _, err := m.Call(context.Background(), route, nil, nil, nil); err == nil {
		t.Fatal("a call on a session the upstream ended succeeded")
	}
	waitFor(t, func() bool { return m.Status()[0].Restarts == 1 && m.Status()[0].Up }, "the upstream to be connected again")
	res, err := m.Call(context.Background(), route, nil, nil, nil)
	if err != nil || text(res) != "here" {
		t.Fatalf("after the restart: %v %v", res, err)
	}
}

// TestCallBody: the request a posted call sends.
func TestCallBody(t *testing.T) {
	for _, c := range []struct {
		name, args, tok, want string
	}{
		{"echo", `{"text": "a"}`, "", `{"jsonrpc":"2.0","id":"statewright-1","method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}}`},
		{"echo", ``, "sw-2", `{"jsonrpc":"2.0","id":"statewright-1","method":"tools/call","params":{"_meta":{"progressToken":"sw-2"},"name":"echo","arguments":{}}}`},
		{`a"b`, `null`, "", `{"jsonrpc":"2.0","id":"statewright-1","method":"tools/call","params":{"name":"a\"b","arguments":null}}`},
	} {
		b, err := callBody("statewright-1", c.name, json.RawMessage(c.args), func() string { return c.tok })
		if err != nil || string(b.data) != c.want {
			t.Errorf("callBody(%q, %q) = %s, %v; want %s", c.name, c.args, b.data, err, c.want)
		}
		if tok, _ := b.token(); tok != c.tok {
			t.Errorf("token %q, want %q", tok, c.tok)
		}
		var v any
		if err := json.Unmarshal(b.data, &v); err != nil {
			t.Errorf("not JSON: %s", b.data)
		}
	}
	if _, err := callBody("statewright-1", "echo", json.RawMessage(`{"text":`), func() string { return "" }); err == nil {
		t.Error("arguments that are not JSON were sent")
	}
}

// TestPostCallStreamKeptOpen: a call returns with its answer even when the
// upstream keeps the call's stream open after it (a server should close
// it, but need not): the first such stream is cut after drainWait, the
// next ones are read to their end in the background.
func TestPostCallStreamKeptOpen(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "lingering", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "here"}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	release := make(chan struct{})
	var held atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		if r.Body != nil {
			body, _ = io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
		if r.Method != http.MethodPost || !bytes.Contains(body, []byte(`"method":"tools/call"`)) {
			return
		}
		held.Add(1) // the answer is written; the stream stays open
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	m := startManager(t, srv.URL, false)
	for i := range 3 {
		res, err := m.Call(context.Background(), Route{Upstream: &m.cfg.Upstreams[0], Name: "echo"}, nil, nil, nil)
		if err != nil || text(res) != "here" {
			t.Fatalf("call %d: %v %v", i, res, err)
		}
	}
	if n := m.drainsCut.Load(); n != 1 {
		t.Fatalf("%d streams held open after their answer were cut, want 1 (the first)", n)
	}
	waitFor(t, func() bool { return held.Load() == 3 }, "the three streams to be held open")
}
