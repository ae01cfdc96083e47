package fakemodel

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// post sends body to srv.URL+path and returns the response.
func post(t *testing.T, srv *Server, path, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("content-type", "application/json")
	req.Header.Set("anthropic-version", "2023-06-01")
	req.Header.Set("anthropic-beta", "some-beta-2025")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

type sseEvent struct {
	name string
	data map[string]any
}

// readSSE parses a server-sent event stream, checking that each event's
// name matches its data's type.
func readSSE(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	var name string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var data map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &data); err != nil {
				t.Fatalf("bad data line %q: %v", line, err)
			}
			if data["type"] != name {
				t.Fatalf("event %q carries type %v", name, data["type"])
			}
			out = append(out, sseEvent{name, data})
		case line == "":
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	return out
}

// assembled is a message rebuilt from a stream, as an SDK would.
type assembled struct {
	stopReason string
	blocks     []map[string]any // type, text or id/name/input (decoded)
	names      []string
}

func assemble(t *testing.T, events []sseEvent) assembled {
	t.Helper()
	var a assembled
	partial := map[int]string{}
	for _, ev := range events {
		a.names = append(a.names, ev.name)
		switch ev.name {
		case "content_block_start":
			cb := ev.data["content_block"].(map[string]any)
			if int(ev.data["index"].(float64)) != len(a.blocks) {
				t.Fatalf("block index %v out of order", ev.data["index"])
			}
			a.blocks = append(a.blocks, cb)
		case "content_block_delta":
			i := int(ev.data["index"].(float64))
			d := ev.data["delta"].(map[string]any)
			switch d["type"] {
			case "text_delta":
				a.blocks[i]["text"] = a.blocks[i]["text"].(string) + d["text"].(string)
			case "input_json_delta":
				partial[i] += d["partial_json"].(string)
			default:
				t.Fatalf("unknown delta %v", d["type"])
			}
		case "content_block_stop":
			i := int(ev.data["index"].(float64))
			if a.blocks[i]["type"] == "tool_use" {
				var in map[string]any
				if err := json.Unmarshal([]byte(partial[i]), &in); err != nil {
					t.Fatalf("tool input %q: %v", partial[i], err)
				}
				a.blocks[i]["input"] = in
			}
		case "message_delta":
			a.stopReason = ev.data["delta"].(map[string]any)["stop_reason"].(string)
		}
	}
	return a
}

const mainBody = `{"model":"claude-test","max_tokens":1000,"stream":%s,"tools":[{"name":"Write","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":"hi"}]}`

func body(stream bool) string {
	return strings.Replace(mainBody, "%s", map[bool]string{true: "true", false: "false"}[stream], 1)
}

func TestStreamedTurns(t *testing.T) {
	longText := strings.Repeat("héllo wörld ", 10)
	srv := NewAnthropic(Script{Turns: []Turn{
		{Text: longText, ToolUses: []ToolUse{
			Tool("Write", map[string]any{"file_path": "/tmp/a", "content": strings.Repeat("x", 100)}),
			{ID: "toolu_custom", Name: "Bash", Input: `{"command":"ls"}`},
		}},
		Say("done"),
	}})
	defer srv.Close()

	resp := post(t, srv, "/v1/messages", body(true))
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	events := readSSE(t, resp.Body)
	a := assemble(t, events)
	if a.names[0] != "message_start" || a.names[len(a.names)-1] != "message_stop" || a.names[len(a.names)-2] != "message_delta" {
		t.Errorf("event order %v", a.names)
	}
	if start := events[0].data["message"].(map[string]any); start["model"] != "claude-test" || start["role"] != "assistant" || start["stop_reason"] != nil {
		t.Errorf("message_start = %v", start)
	}
	if a.stopReason != "tool_use" {
		t.Errorf("stop_reason %q, want tool_use", a.stopReason)
	}
	if len(a.blocks) != 3 || a.blocks[0]["text"] != longText {
		t.Fatalf("blocks %v", a.blocks)
	}
	w, b := a.blocks[1], a.blocks[2]
	if w["type"] != "tool_use" || w["name"] != "Write" || w["id"] != srv.ToolUseID(0, 0) || w["id"] != "toolu_fake_0_0" ||
		w["input"].(map[string]any)["content"] != strings.Repeat("x", 100) {
		t.Errorf("Write block %v", w)
	}
	if b["id"] != "toolu_custom" || srv.ToolUseID(0, 1) != "toolu_custom" || b["input"].(map[string]any)["command"] != "ls" {
		t.Errorf("Bash block %v", b)
	}

	a = assemble(t, readSSE(t, post(t, srv, "/v1/messages", body(true)).Body))
	if a.stopReason != "end_turn" || len(a.blocks) != 1 || a.blocks[0]["text"] != "done" {
		t.Errorf("second turn: %q %v", a.stopReason, a.blocks)
	}
	if srv.Served() != 2 || srv.Overruns() != 0 {
		t.Errorf("served %d overruns %d", srv.Served(), srv.Overruns())
	}
	reqs := srv.MainRequests()
	if len(reqs) != 2 || reqs[0].Turn != 0 || reqs[1].Turn != 1 || !reqs[0].Stream || reqs[0].Header.Get("anthropic-beta") != "some-beta-2025" {
		t.Errorf("recorded %+v", reqs)
	}
}

func TestNonStreamedTurnSideRequestsAndOverrun(t *testing.T) {
	srv := NewAnthropic(Script{
		Turns:         []Turn{Call(Tool("Read", map[string]any{"file_path": "/x"}))},
		SideText:      "side answer",
		ExhaustedText: "no more",
	})
	defer srv.Close()

	// A side request (no tools) does not consume the turn.
	var side anthropicMsg
	json.NewDecoder(post(t, srv, "/v1/messages", `{"model":"claude-haiku","max_tokens":1,"messages":[{"role":"user","content":"quota"}]}`).Body).Decode(&side)
	if side.Content[0]["text"] != "side answer" || *side.StopReason != "end_turn" {
		t.Errorf("side answer %+v", side)
	}

	var msg anthropicMsg
	resp := post(t, srv, "/v1/messages", body(false))
	if resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("content type %q", resp.Header.Get("Content-Type"))
	}
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		t.Fatal(err)
	}
	if *msg.StopReason != "tool_use" || len(msg.Content) != 1 || msg.Content[0]["name"] != "Read" || msg.Content[0]["id"] != "toolu_fake_0_0" {
		t.Errorf("main answer %+v", msg)
	}

	var over anthropicMsg
	json.NewDecoder(post(t, srv, "/v1/messages", body(false)).Body).Decode(&over)
	if over.Content[0]["text"] != "no more" || *over.StopReason != "end_turn" || srv.Overruns() != 1 {
		t.Errorf("overrun answer %+v, overruns %d", over, srv.Overruns())
	}

	var got []string
	for _, r := range srv.Requests() {
		got = append(got, fmt.Sprintf("%s/%d", r.Kind, r.Turn))
	}
	if strings.Join(got, " ") != "side/-1 turn/0 turn/-1" {
		t.Errorf("recorded %v", got)
	}
}

func TestCustomIsMain(t *testing.T) {
	srv := NewAnthropic(Script{
		Turns:  []Turn{Say("main")},
		IsMain: func(r *Request) bool { return strings.Contains(string(r.Body), "MARKER") },
	})
	defer srv.Close()
	var m anthropicMsg
	json.NewDecoder(post(t, srv, "/v1/messages", body(false)).Body).Decode(&m)
	if m.Content[0]["text"] != "OK" {
		t.Errorf("unmarked request answered %v, want the default side text", m.Content)
	}
	json.NewDecoder(post(t, srv, "/v1/messages", `{"model":"m","messages":[{"role":"user","content":"MARKER"}]}`).Body).Decode(&m)
	if m.Content[0]["text"] != "main" {
		t.Errorf("marked request answered %v", m.Content)
	}
}

func TestAuxAndUnknownEndpoints(t *testing.T) {
	var logged []string
	var mu sync.Mutex
	srv := NewAnthropic(Script{}, WithLog(func(f string, a ...any) {
		mu.Lock()
		logged = append(logged, f)
		mu.Unlock()
	}))
	defer srv.Close()

	var count map[string]int
	json.NewDecoder(post(t, srv, "/v1/messages/count_tokens", body(false)).Body).Decode(&count)
	if count["input_tokens"] <= 0 {
		t.Errorf("count_tokens %v", count)
	}
	for _, path := range []string{"/v1/models", "/v1/models/claude-x"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET %s: %v %v", path, resp, err)
		}
		resp.Body.Close()
	}
	resp, err := http.Head(srv.URL + "/api/hello")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("HEAD /api/hello: %v %v", resp, err)
	}
	resp = post(t, srv, "/v1/oauth/whatever", `{"a":1}`)
	var e map[string]any
	json.NewDecoder(resp.Body).Decode(&e)
	if resp.StatusCode != 404 || e["type"] != "error" {
		t.Errorf("unknown endpoint: %d %v", resp.StatusCode, e)
	}
	resp = post(t, srv, "/v1/messages", `not json`)
	if resp.StatusCode != 400 {
		t.Errorf("bad body: %d", resp.StatusCode)
	}

	unknown := srv.Unknown()
	if len(unknown) != 2 || unknown[0].Path != "/v1/oauth/whatever" || string(unknown[0].Body) != `{"a":1}` {
		t.Errorf("unknown %+v", unknown)
	}
	if n := len(srv.Requests()); n != 6 {
		t.Errorf("%d requests recorded, want 6:\n%s", n, srv.Summary())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(logged) != 6 {
		t.Errorf("%d log lines, want 6", len(logged))
	}
}

func TestToolResults(t *testing.T) {
	srv := NewAnthropic(Script{Turns: []Turn{Say("a"), Say("b")}})
	defer srv.Close()
	post(t, srv, "/v1/messages", `{"model":"m","tools":[{"name":"Write"}],"messages":[
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"denied: because","is_error":true}]}]}`)
	post(t, srv, "/v1/messages", `{"model":"m","tools":[{"name":"Write"}],"system":[{"type":"text","text":"sys1"},{"type":"text","text":"sys2"}],"messages":[
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"later copy"},
		{"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"line1"},{"type":"image"},{"type":"text","text":"line2"}]}]}]}`)

	if r, ok := srv.ToolResult("t1"); !ok || !r.IsError || r.Content != "denied: because" || r.Seq != 0 {
		t.Errorf("t1 = %+v %v; want the first request's copy", r, ok)
	}
	if r, ok := srv.ToolResult("t2"); !ok || r.IsError || r.Content != "line1\nline2" || r.Seq != 1 {
		t.Errorf("t2 = %+v %v", r, ok)
	}
	if _, ok := srv.ToolResult("t3"); ok {
		t.Error("t3 found")
	}
	reqs := srv.MainRequests()
	a, err := reqs[1].Anthropic()
	if err != nil || a.SystemText() != "sys1\nsys2" || !a.HasTool("Write") || a.HasTool("Bash") {
		t.Errorf("decoded %+v %v", a, err)
	}
}

func TestSessionID(t *testing.T) {
	a := AnthropicRequest{Metadata: json.RawMessage(`{"user_id":"{\"device_id\":\"d\",\"session_id\":\"s-1\"}"}`)}
	if got := a.SessionID(); got != "s-1" {
		t.Errorf("SessionID = %q", got)
	}
	legacy := AnthropicRequest{Metadata: json.RawMessage(`{"user_id":"user_abc_account__session_s-2"}`)}
	if got := legacy.SessionID(); got != "s-2" {
		t.Errorf("legacy SessionID = %q", got)
	}
	for _, md := range []string{``, `{}`, `{"user_id":"user_abc"}`, `{"user_id":"{bad"}`} {
		a := AnthropicRequest{Metadata: json.RawMessage(md)}
		if got := a.SessionID(); got != "" {
			t.Errorf("SessionID(%s) = %q, want empty", md, got)
		}
	}
}

func TestInvalidScriptPanics(t *testing.T) {
	for name, s := range map[string]Script{
		"not an object": {Turns: []Turn{Call(Tool("Bash", "[1,2]"))}},
		"not JSON":      {Turns: []Turn{Call(Tool("Bash", "{"))}},
		"no name":       {Turns: []Turn{Call(Tool("", nil))}},
		"unmarshalable": {Turns: []Turn{Call(Tool("Bash", map[string]any{"f": func() {}}))}},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			NewAnthropic(s).Close()
		})
	}
}

func TestConcurrentRequestsTakeDistinctTurns(t *testing.T) {
	const n = 8
	turns := make([]Turn, n)
	for i := range turns {
		turns[i] = Say(strings.Repeat("x", i+1))
	}
	srv := NewAnthropic(Script{Turns: turns})
	defer srv.Close()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			resp, err := http.Post(srv.URL+"/v1/messages", "application/json", strings.NewReader(body(false)))
			if err == nil {
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	seen := map[int]bool{}
	for _, r := range srv.MainRequests() {
		seen[r.Turn] = true
	}
	if len(seen) != n || srv.Served() != n {
		t.Errorf("turns served %v (%d)", seen, srv.Served())
	}
}

func TestChunksKeepRunesWhole(t *testing.T) {
	s := "aé€😀" + strings.Repeat("ü", 20)
	for n := 1; n < 10; n++ {
		parts := chunks(s, n)
		if strings.Join(parts, "") != s {
			t.Fatalf("n=%d: parts do not rejoin", n)
		}
		for _, p := range parts {
			if !utf8.ValidString(p) && n >= 4 {
				t.Errorf("n=%d: part %q splits a rune", n, p)
			}
		}
	}
	if chunks("", 4) != nil {
		t.Error("empty string gave chunks")
	}
}

func TestThreads(t *testing.T) {
	srv := NewAnthropic(Script{
		Turns: []Turn{Call(Tool("Agent", map[string]any{"prompt": "SUB-1 write it"})), Say("waiting"), Say("main done")},
		Threads: []Thread{{
			Name:  "sub",
			Match: AnthropicFirstUserContains("SUB-1"),
			Turns: []Turn{Call(Tool("Write", map[string]any{"file_path": "/x"})), Say("sub done")},
		}},
	})
	defer srv.Close()
	const mainReq = `{"model":"m","tools":[{"name":"Agent"}],"messages":[{"role":"user","content":"do it"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_fake_0_0","name":"Agent","input":{"prompt":"SUB-1 write it"}}]}]}`
	const subReq = `{"model":"m","tools":[{"name":"Write"}],"messages":[{"role":"user","content":[{"type":"text","text":"<system-reminder>x</system-reminder>"},{"type":"text","text":"SUB-1 write it"}]}]}`
	var got []string
	for _, b := range []string{mainReq, subReq, mainReq, subReq, mainReq, subReq} {
		var m anthropicMsg
		json.NewDecoder(post(t, srv, "/v1/messages", b).Body).Decode(&m)
		c := m.Content[len(m.Content)-1]
		if c["type"] == "tool_use" {
			got = append(got, c["id"].(string))
		} else {
			got = append(got, c["text"].(string))
		}
	}
	want := "toolu_fake_0_0 toolu_sub_0_0 waiting sub done main done fakemodel: script exhausted"
	if strings.Join(got, " ") != want {
		t.Errorf("answers %q\nwant    %q", strings.Join(got, " "), want)
	}
	if srv.ThreadToolUseID("sub", 0, 0) != "toolu_sub_0_0" || srv.Served() != 3 || srv.ServedThread("sub") != 2 || srv.Overruns() != 1 {
		t.Errorf("served main %d sub %d overruns %d", srv.Served(), srv.ServedThread("sub"), srv.Overruns())
	}
	if n := len(srv.ThreadRequests("sub")); n != 3 {
		t.Errorf("%d sub requests, want 3", n)
	}
}

func TestInvalidThreadsPanic(t *testing.T) {
	match := func(*Request) bool { return false }
	for name, th := range map[string][]Thread{
		"empty name":   {{Name: "", Match: match}},
		"reserved":     {{Name: "fake", Match: match}},
		"duplicate":    {{Name: "a", Match: match}, {Name: "a", Match: match}},
		"space":        {{Name: "a b", Match: match}},
		"no match":     {{Name: "a"}},
		"bad tool use": {{Name: "a", Match: match, Turns: []Turn{Call(Tool("X", "[]"))}}},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			NewAnthropic(Script{Threads: th}).Close()
		})
	}
}
