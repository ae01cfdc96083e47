package fakemodel

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

const responsesTools = `"tools":[{"type":"function","name":"exec_command","parameters":{"type":"object"}},` +
	`{"type":"custom","name":"apply_patch"},{"type":"web_search"}]`

// assembleResponses rebuilds the output items from a Responses stream, as
// Codex does: only response.output_item.done items count, and the stream
// must end with response.completed.
func assembleResponses(t *testing.T, events []sseEvent) []map[string]any {
	t.Helper()
	var items []map[string]any
	if len(events) == 0 || events[0].name != "response.created" || events[len(events)-1].name != "response.completed" {
		t.Fatalf("stream does not run from response.created to response.completed: %v", events)
	}
	seq := -1.0
	for _, ev := range events {
		if n, _ := ev.data["sequence_number"].(float64); n != seq+1 {
			t.Fatalf("sequence_number %v after %v", n, seq)
		}
		seq++
		if ev.name == "response.output_item.done" {
			items = append(items, ev.data["item"].(map[string]any))
		}
	}
	return items
}

func TestResponsesStreamsScriptedTurns(t *testing.T) {
	srv := NewResponses(Script{Turns: []Turn{
		Call(Tool("exec_command", map[string]any{"cmd": "ls -la"}), Tool("apply_patch", map[string]any{"input": "*** Begin Patch\n*** End Patch\n"})),
		Say("All done, ünïcode included."),
	}})
	defer srv.Close()

	resp := post(t, srv, "/v1/responses", `{"model":"gpt-5.5","stream":true,`+responsesTools+`,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]}]}`)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	items := assembleResponses(t, readSSE(t, resp.Body))
	if len(items) != 2 || items[0]["type"] != "function_call" || items[0]["call_id"] != "toolu_fake_0_0" ||
		items[0]["arguments"] != `{"cmd":"ls -la"}` || items[1]["type"] != "custom_tool_call" ||
		items[1]["name"] != "apply_patch" || items[1]["input"] != "*** Begin Patch\n*** End Patch\n" {
		t.Fatalf("items = %v", items)
	}

	// The next request carries the outputs; the server reports them.
	body := `{"model":"gpt-5.5","stream":false,` + responsesTools + `,"input":[` +
		`{"type":"function_call","call_id":"toolu_fake_0_0","name":"exec_command","arguments":"{}"},` +
		`{"type":"function_call_output","call_id":"toolu_fake_0_0","output":"Command blocked by PreToolUse hook: no"},` +
		`{"type":"custom_tool_call_output","call_id":"toolu_fake_0_1","output":[{"type":"input_text","text":"Success."}]}]}`
	resp = post(t, srv, "/responses", body)
	var got responseObj
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &got); err != nil || got.Status != "completed" || len(got.Output) != 1 ||
		got.Output[0]["type"] != "message" {
		t.Fatalf("non-streamed answer %s (%v)", b, err)
	}
	if r, ok := srv.ToolResult("toolu_fake_0_0"); !ok || r.Content != "Command blocked by PreToolUse hook: no" {
		t.Errorf("ToolResult = %+v, %v", r, ok)
	}
	if r, ok := srv.ToolResult("toolu_fake_0_1"); !ok || r.Content != "Success." {
		t.Errorf("ToolResult = %+v, %v", r, ok)
	}
	if srv.Served() != 2 {
		t.Errorf("served %d turns, want 2", srv.Served())
	}
}

func TestResponsesNamespacedCall(t *testing.T) {
	srv := NewResponses(Script{Turns: []Turn{Call(Tool("mcp__statewright__statewright_transition", map[string]any{"event": "GO"}))}})
	defer srv.Close()
	resp := post(t, srv, "/v1/responses", `{"stream":true,"tools":[{"type":"namespace","name":"mcp__statewright","tools":[`+
		`{"type":"function","name":"statewright_transition"}]}],"input":"go"}`)
	items := assembleResponses(t, readSSE(t, resp.Body))
	if len(items) != 1 || items[0]["namespace"] != "mcp__statewright" || items[0]["name"] != "statewright_transition" ||
		items[0]["arguments"] != `{"event":"GO"}` {
		t.Fatalf("items = %v", items)
	}
	q, _ := srv.Requests()[0].Responses()
	if !q.HasTool("mcp__statewright__statewright_transition") || q.HasTool("mcp__statewright__nope") {
		t.Error("HasTool on a namespaced tool")
	}
}

func TestResponsesSideAndAuxRequests(t *testing.T) {
	srv := NewResponses(Script{Turns: []Turn{Say("main")}, SideText: "side"})
	defer srv.Close()
	// No tools: a side request, answered without consuming the turn.
	resp := post(t, srv, "/v1/responses", `{"model":"m","input":"summarise"}`)
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), `"text":"side"`) || srv.Served() != 0 {
		t.Errorf("side answer %s, served %d", b, srv.Served())
	}
	r, err := http.Get(srv.URL + "/v1/models")
	if err != nil || r.StatusCode != 200 {
		t.Fatalf("models: %v %v", r, err)
	}
	r.Body.Close()
	resp = post(t, srv, "/v1/chat/completions", `{}`)
	if resp.StatusCode != 404 || len(srv.Unknown()) != 1 {
		t.Errorf("unknown route: status %d, unknown %d", resp.StatusCode, len(srv.Unknown()))
	}
	// A thread match by the first user message.
	q := Request{Body: []byte(`{"input":[{"type":"message","role":"developer","content":"x"},{"type":"message","role":"user","content":[{"type":"input_text","text":"MARK task"}]}]}`)}
	if !ResponsesFirstUserContains("MARK")(&q) || ResponsesFirstUserContains("other")(&q) {
		t.Error("ResponsesFirstUserContains")
	}
}
