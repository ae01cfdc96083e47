package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/agent"
	"github.com/statewright-go/statewright/agent/events"
	"github.com/statewright-go/statewright/agent/model"
	fm "github.com/statewright-go/statewright/internal/fakemodel"
)

const routingWorkflow = `{
  "id": "routing",
  "initial": "look",
  "meta": { "default_model": "base-model" },
  "states": {
    "look": { "allowed_tools": ["Read"], "thinking_level": "high", "on": { "SEEN": "fix", "FAIL": "failed" } },
    "fix": { "allowed_tools": ["Read", "Edit"], "model": "fixer-model", "model_ladder": ["big-model"], "on": { "FIXED": "done", "FAIL": "failed" } },
    "done": { "type": "final" },
    "failed": { "type": "final" }
  }
}`

// TestRunOverOllamaNative drives Ollama's native /api/chat and exercises
// the runner's model handling: per-state routing (meta.default_model, a
// state's model), thinking_level sent as think, the read loop (the third
// read of a window nudges, the fourth is refused), a tool call written as
// gpt-oss harmony text and one written as JSON in the content (both
// recovered), and model_ladder escalation after three failures in a row.
func TestRunOverOllamaNative(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.txt", "colour = 'red'\n")
	write(t, dir, ".statewright/workflows/routing.json", routingWorkflow)
	h := newHarness(t, dir)
	read := call("read_file", map[string]any{"path": "a.txt"})
	srv := fm.NewOllama(fm.Script{Turns: []fm.Turn{
		read, read, read, read, // 0-3: the fourth is refused
		fm.Say(`<|start|>assistant<|channel|>commentary to=functions.statewright_transition <|constrain|>json<|message|>{"event":"SEEN"}<|call|>`), // 4
		call("write_file", map[string]any{"path": "a.txt", "content": "x"}),                                                                        // 5: not allowed in fix
		fm.Say("Let me think about colours."), // 6: no tool call
		call("edit_file", map[string]any{"path": "a.txt", "old_string": "blue", "new_string": "green"}),                 // 7: fails → escalate
		fm.Say(`{"name": "edit_file", "arguments": {"path": "a.txt", "old_string": "'red'", "new_string": "'green'"}}`), // 8
		call("statewright_transition", map[string]any{"event": "FIXED"}),                                                // 9
	}, IsMain: func(*fm.Request) bool { return true }}, fm.WithLog(t.Logf))
	defer srv.Close()
	ep, err := model.ParseEndpoint("ollama://" + strings.TrimPrefix(srv.URL, "http://") + "#cli-model")
	if err != nil {
		t.Fatal(err)
	}
	cfg := h.config(srv, filepath.Join(h.ws.Root, ".statewright/workflows/routing.json"), "recolour", "")
	cfg.Endpoint = ep
	res, err := agent.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != events.OutcomeSuccess || res.FinalState != "done" {
		t.Fatalf("result %+v\n%s", res, h.jsnl.String())
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "colour = 'green'\n" {
		t.Fatalf("a.txt = %q", b)
	}
	reqs := srv.MainRequests()
	if len(reqs) != 10 || len(srv.Unknown()) != 0 {
		t.Fatalf("%d requests\n%s", len(reqs), srv.Summary())
	}
	type body struct {
		Model    string `json:"model"`
		Stream   *bool  `json:"stream"`
		Think    any    `json:"think"`
		Messages []struct {
			Role, Content string
		} `json:"messages"`
	}
	var bs []body
	for _, r := range reqs {
		var b body
		if err := json.Unmarshal(r.Body, &b); err != nil {
			t.Fatal(err)
		}
		if r.Path != "/api/chat" || b.Stream == nil || *b.Stream {
			t.Fatalf("request %s stream %v: want /api/chat, stream false", r.Path, b.Stream)
		}
		bs = append(bs, b)
	}
	wantModels := []string{"base-model", "base-model", "base-model", "base-model", "base-model", "fixer-model", "fixer-model", "fixer-model", "big-model", "big-model"}
	for i, b := range bs {
		if b.Model != wantModels[i] {
			t.Fatalf("request %d went to %q, want %q", i, b.Model, wantModels[i])
		}
	}
	if bs[0].Think != "high" || bs[5].Think != nil {
		t.Fatalf("think: %v, %v", bs[0].Think, bs[5].Think)
	}
	lastTool := func(b body) string {
		return b.Messages[len(b.Messages)-1].Content
	}
	if !strings.Contains(lastTool(bs[3]), "will be refused") {
		t.Fatalf("third read answered %q", lastTool(bs[3]))
	}
	if !strings.HasPrefix(lastTool(bs[4]), "Refused: You have read") {
		t.Fatalf("fourth read answered %q", lastTool(bs[4]))
	}
	var recovered []string
	escalations := 0
	for _, e := range h.events(t) {
		if e.Type == events.TypeModelResponse && e.ModelResponse.Recovered != "" {
			recovered = append(recovered, e.ModelResponse.Recovered)
		}
		if e.Type == events.TypeNudge && e.Nudge.Kind == "escalate" {
			escalations++
			if !strings.HasSuffix(e.Nudge.Model, "#big-model") {
				t.Fatalf("escalated to %s", e.Nudge.Model)
			}
		}
	}
	if strings.Join(recovered, ",") != "harmony,json" || escalations != 1 {
		t.Fatalf("recovered %v, %d escalations", recovered, escalations)
	}
}
