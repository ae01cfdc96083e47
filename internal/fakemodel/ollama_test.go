package fakemodel

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func TestOllamaStreamsAndPairsResults(t *testing.T) {
	srv := NewOllama(Script{Respond: func(r *Request) Turn {
		c, err := r.Conversation()
		if err != nil {
			t.Errorf("conversation: %v", err)
			return Say("?")
		}
		steps := c.Steps()
		if len(steps) == 0 {
			return Call(Tool("read_file", map[string]any{"path": "a"}), Tool("list_dir", map[string]any{}))
		}
		// Ollama sends no ids: results pair with calls by position.
		return Say(steps[0].Name + "=" + steps[0].Result + ";" + steps[1].Name + "=" + steps[1].Result)
	}})
	defer srv.Close()
	post := func(body string) *http.Response {
		resp, err := http.Post(srv.URL+"/api/chat", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	// Streamed by default: NDJSON, the last line done.
	resp := post(`{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"read_file"}}]}`)
	var lines []map[string]any
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		lines = append(lines, m)
	}
	resp.Body.Close()
	if len(lines) < 2 || lines[len(lines)-1]["done"] != true {
		t.Fatalf("stream %v", lines)
	}
	calls := lines[len(lines)-2]["message"].(map[string]any)["tool_calls"].([]any)
	args := calls[0].(map[string]any)["function"].(map[string]any)["arguments"].(map[string]any)
	if len(calls) != 2 || args["path"] != "a" {
		t.Fatalf("calls %v", calls)
	}
	resp = post(`{"model":"m","stream":false,"tools":[{"type":"function","function":{"name":"read_file"}}],"messages":[
		{"role":"user","content":"hi"},
		{"role":"assistant","content":"","tool_calls":[{"function":{"name":"read_file","arguments":{"path":"a"}}},{"function":{"name":"list_dir","arguments":{}}}]},
		{"role":"tool","content":"AAA","tool_name":"read_file"},
		{"role":"tool","content":"BBB","tool_name":"list_dir"}]}`)
	var one struct {
		Message struct{ Content string }
		Done    bool
	}
	if err := json.NewDecoder(resp.Body).Decode(&one); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !one.Done || one.Message.Content != "read_file=AAA;list_dir=BBB" {
		t.Fatalf("answer %+v", one)
	}
	if srv.Served() != 2 || len(srv.Unknown()) != 0 {
		t.Fatalf("served %d\n%s", srv.Served(), srv.Summary())
	}
}
