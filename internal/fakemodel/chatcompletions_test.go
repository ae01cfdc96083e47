package fakemodel

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// readChatSSE parses a Chat Completions stream: "data: {json}" lines, the
// last one "data: [DONE]".
func readChatSSE(t *testing.T, r io.Reader) []map[string]any {
	t.Helper()
	var out []map[string]any
	done := false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
		case line == "data: [DONE]":
			if done {
				t.Fatal("two [DONE]")
			}
			done = true
		case strings.HasPrefix(line, "data: "):
			if done {
				t.Fatalf("chunk after [DONE]: %q", line)
			}
			var chunk map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &chunk); err != nil {
				t.Fatalf("bad data line %q: %v", line, err)
			}
			if chunk["object"] != "chat.completion.chunk" {
				t.Fatalf("chunk object %v", chunk["object"])
			}
			out = append(out, chunk)
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	if !done {
		t.Fatal("stream without [DONE]")
	}
	return out
}

// chatAssembled is a completion rebuilt from chunks, as the OpenAI SDKs do.
type chatAssembled struct {
	role, text, finish string
	calls              []map[string]any // id, name, arguments (decoded)
	usage              map[string]any
}

func assembleChat(t *testing.T, chunks []map[string]any) chatAssembled {
	t.Helper()
	var a chatAssembled
	args := map[int]string{}
	for _, c := range chunks {
		if u, ok := c["usage"].(map[string]any); ok {
			a.usage = u
		}
		for _, ch := range c["choices"].([]any) {
			choice := ch.(map[string]any)
			if f, ok := choice["finish_reason"].(string); ok {
				a.finish = f
			}
			d := choice["delta"].(map[string]any)
			if r, ok := d["role"].(string); ok {
				a.role = r
			}
			if s, ok := d["content"].(string); ok {
				a.text += s
			}
			tcs, _ := d["tool_calls"].([]any)
			for _, tc := range tcs {
				m := tc.(map[string]any)
				i := int(m["index"].(float64))
				fn := m["function"].(map[string]any)
				if id, ok := m["id"].(string); ok {
					if i != len(a.calls) {
						t.Fatalf("tool call index %d out of order", i)
					}
					a.calls = append(a.calls, map[string]any{"id": id, "name": fn["name"]})
				}
				args[i] += fn["arguments"].(string)
			}
		}
	}
	for i, c := range a.calls {
		var in map[string]any
		if err := json.Unmarshal([]byte(args[i]), &in); err != nil {
			t.Fatalf("arguments %q: %v", args[i], err)
		}
		c["arguments"] = in
	}
	return a
}

const chatBody = `{"model":"fake-test","stream":%s,"stream_options":{"include_usage":true},"tools":[{"type":"function","function":{"name":"write","parameters":{"type":"object"}}}],"messages":[{"role":"system","content":"be good"},{"role":"user","content":"hi"}]}`

func chatReq(stream bool) string {
	return strings.Replace(chatBody, "%s", map[bool]string{true: "true", false: "false"}[stream], 1)
}

func TestChatStreamedTurns(t *testing.T) {
	longText := strings.Repeat("héllo wörld ", 10)
	srv := NewChatCompletions(Script{Turns: []Turn{
		{Text: longText, ToolUses: []ToolUse{
			Tool("write", map[string]any{"filePath": "/tmp/a", "content": strings.Repeat("x", 100)}),
			{ID: "call_custom", Name: "bash", Input: `{"command":"ls"}`},
		}},
		Say("done"),
	}})
	defer srv.Close()

	resp := post(t, srv, "/v1/chat/completions", chatReq(true))
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	a := assembleChat(t, readChatSSE(t, resp.Body))
	if a.role != "assistant" || a.text != longText || a.finish != "tool_calls" {
		t.Errorf("assembled role %q text %q finish %q", a.role, a.text, a.finish)
	}
	if len(a.calls) != 2 {
		t.Fatalf("calls %v", a.calls)
	}
	w, b := a.calls[0], a.calls[1]
	if w["name"] != "write" || w["id"] != srv.ToolUseID(0, 0) || w["arguments"].(map[string]any)["content"] != strings.Repeat("x", 100) {
		t.Errorf("write call %v", w)
	}
	if b["id"] != "call_custom" || b["name"] != "bash" || b["arguments"].(map[string]any)["command"] != "ls" {
		t.Errorf("bash call %v", b)
	}
	if a.usage == nil || a.usage["total_tokens"].(float64) <= 0 {
		t.Errorf("usage %v", a.usage)
	}

	// Without include_usage the usage rides on the finish chunk; no tool
	// calls means finish_reason stop.
	resp = post(t, srv, "/chat/completions", strings.Replace(chatReq(true), `"stream_options":{"include_usage":true},`, "", 1))
	a = assembleChat(t, readChatSSE(t, resp.Body))
	if a.finish != "stop" || a.text != "done" || len(a.calls) != 0 || a.usage == nil {
		t.Errorf("second turn: %+v", a)
	}
	if srv.Served() != 2 || srv.Overruns() != 0 {
		t.Errorf("served %d overruns %d", srv.Served(), srv.Overruns())
	}
	reqs := srv.MainRequests()
	if len(reqs) != 2 || reqs[0].Turn != 0 || reqs[1].Turn != 1 || !reqs[0].Stream {
		t.Errorf("recorded %+v", reqs)
	}
	c, err := reqs[0].Chat()
	if err != nil || c.SystemText() != "be good" || !c.HasTool("write") || c.HasTool("bash") || strings.Join(c.ToolNames(), ",") != "write" {
		t.Errorf("decoded %+v %v", c, err)
	}
}

func TestChatNonStreamedSideAndOverrun(t *testing.T) {
	srv := NewChatCompletions(Script{
		Turns:         []Turn{Call(Tool("read", map[string]any{"filePath": "/x"}))},
		SideText:      "side answer",
		ExhaustedText: "no more",
	})
	defer srv.Close()

	type completion struct {
		Choices []struct {
			Message struct {
				Role      string         `json:"role"`
				Content   *string        `json:"content"`
				ToolCalls []ChatToolCall `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	decode := func(resp *http.Response) completion {
		t.Helper()
		if resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("content type %q", resp.Header.Get("Content-Type"))
		}
		var c completion
		if err := json.NewDecoder(resp.Body).Decode(&c); err != nil || len(c.Choices) != 1 {
			t.Fatalf("decode: %v %+v", err, c)
		}
		return c
	}

	// A side request (no tools, like a title generation) consumes no turn.
	side := decode(post(t, srv, "/v1/chat/completions", `{"model":"small","messages":[{"role":"user","content":"title this"}]}`))
	if m := side.Choices[0]; m.Message.Content == nil || *m.Message.Content != "side answer" || m.FinishReason != "stop" {
		t.Errorf("side answer %+v", side)
	}

	main := decode(post(t, srv, "/v1/chat/completions", chatReq(false)))
	m := main.Choices[0]
	if m.FinishReason != "tool_calls" || m.Message.Content != nil || len(m.Message.ToolCalls) != 1 ||
		m.Message.ToolCalls[0].Function.Name != "read" || m.Message.ToolCalls[0].ID != "toolu_fake_0_0" ||
		m.Message.ToolCalls[0].Function.Arguments != `{"filePath":"/x"}` || m.Message.ToolCalls[0].Type != "function" {
		t.Errorf("main answer %+v", main)
	}

	over := decode(post(t, srv, "/v1/chat/completions", chatReq(false)))
	if c := over.Choices[0].Message.Content; c == nil || *c != "no more" || srv.Overruns() != 1 {
		t.Errorf("overrun answer %+v, overruns %d", over, srv.Overruns())
	}
	var kinds []string
	for _, r := range srv.Requests() {
		kinds = append(kinds, string(r.Kind))
	}
	if strings.Join(kinds, " ") != "side turn turn" {
		t.Errorf("kinds %v", kinds)
	}
}

func TestChatAuxAndUnknown(t *testing.T) {
	srv := NewChatCompletions(Script{})
	defer srv.Close()
	for _, path := range []string{"/v1/models", "/models", "/v1/models/fake-x"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET %s: %v %v", path, resp, err)
		}
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		if path == "/v1/models/fake-x" && m["id"] != "fake-x" {
			t.Errorf("model %v", m)
		}
		if path == "/v1/models" && m["object"] != "list" {
			t.Errorf("list %v", m)
		}
	}
	resp := post(t, srv, "/v1/responses", `{"a":1}`)
	if resp.StatusCode != 404 {
		t.Errorf("unknown endpoint: %d", resp.StatusCode)
	}
	resp = post(t, srv, "/v1/chat/completions", `not json`)
	if resp.StatusCode != 400 {
		t.Errorf("bad body: %d", resp.StatusCode)
	}
	if u := srv.Unknown(); len(u) != 2 || u[0].Path != "/v1/responses" {
		t.Errorf("unknown %+v", u)
	}
}

func TestChatToolResultsAndThreads(t *testing.T) {
	srv := NewChatCompletions(Script{
		Turns:   []Turn{Say("a"), Say("b")},
		Threads: []Thread{{Name: "sub", Match: ChatFirstUserContains("SUBTASK"), Turns: []Turn{Say("sub")}}},
	})
	defer srv.Close()
	tools := `"tools":[{"type":"function","function":{"name":"write"}}]`
	post(t, srv, "/v1/chat/completions", `{"model":"m",`+tools+`,"messages":[{"role":"user","content":"go"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"t1","type":"function","function":{"name":"write","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"t1","content":"denied: because"}]}`)
	post(t, srv, "/v1/chat/completions", `{"model":"m",`+tools+`,"messages":[{"role":"user","content":[{"type":"text","text":"go"}]},
		{"role":"tool","tool_call_id":"t1","content":"later copy"},
		{"role":"tool","tool_call_id":"t2","content":[{"type":"text","text":"line1"},{"type":"image_url"},{"type":"text","text":"line2"}]}]}`)
	post(t, srv, "/v1/chat/completions", `{"model":"m",`+tools+`,"messages":[{"role":"user","content":"SUBTASK: look"}]}`)

	if r, ok := srv.ToolResult("t1"); !ok || r.IsError || r.Content != "denied: because" || r.Seq != 0 {
		t.Errorf("t1 = %+v %v; want the first request's copy", r, ok)
	}
	if r, ok := srv.ToolResult("t2"); !ok || r.Content != "line1\nline2" || r.Seq != 1 {
		t.Errorf("t2 = %+v %v", r, ok)
	}
	if _, ok := srv.ToolResult("t3"); ok {
		t.Error("t3 found")
	}
	if srv.Served() != 2 || srv.ServedThread("sub") != 1 || len(srv.ThreadRequests("sub")) != 1 {
		t.Errorf("served main %d sub %d", srv.Served(), srv.ServedThread("sub"))
	}
	c, _ := srv.MainRequests()[0].Chat()
	if tr := c.ToolResults(); len(tr) != 1 || tr[0].ToolUseID != "t1" {
		t.Errorf("ToolResults %+v", tr)
	}
	if got := (ChatMessage{Content: json.RawMessage(`null`)}).Text(); got != "" {
		t.Errorf("null content text %q", got)
	}
}
