package tui

import (
	"errors"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/agent/events"
	"github.com/statewright-go/statewright/internal/wfgraph"
	"github.com/statewright-go/statewright/workflow"
)

// A stream in the shape docs/agent-events.md describes, with an unknown
// field, an unknown event type, a newer-version line and garbage.
var streamLines = []string{
	`{"v":1,"seq":1,"time":"2026-12-02T20:00:00Z","type":"run_start","run_id":"run_1","session":"agent:x","state":"localizing","run_start":{"workflow":"bugfix","task":"fix the off-by-one","model":"qwen","api":"openai","future_field":1}}`,
	`{"v":1,"seq":2,"time":"2026-12-02T20:00:01Z","type":"model_request","state":"localizing","step":1,"model_request":{"model":"qwen","messages":2,"tools":["read_file","edit_file"]}}`,
	`{"v":1,"seq":3,"time":"2026-12-02T20:00:02Z","type":"tool_call","state":"localizing","step":1,"tool_call":{"id":"c1","name":"edit_file","args":{"path":"calc.go"}}}`,
	`{"v":1,"seq":4,"time":"2026-12-02T20:00:02Z","type":"decision","state":"localizing","step":1,"decision":{"id":"c1","name":"edit_file","verdict":"deny","rule":"tool-not-allowed","reason":"Denied in phase 'localizing':\nEdit is not allowed here","enforced":true}}`,
	`not json at all`,
	`{"v":1,"seq":5,"type":"transition","state":"planning","step":2,"transition":{"event":"LOCALIZED","from":"localizing","to":"planning"}}`,
	`{"v":1,"seq":6,"type":"telemetry_blip","step":2,"telemetry_blip":{"cpu":3}}`,
	`{"v":2,"seq":7,"type":"decision","step":3,"decision":{"name":"read_file","verdict":"allow","rule":"allowed"}}`,
	`{"v":1,"seq":8,"type":"approval_wait","step":3,"approval_wait":{"approval_id":"apr_1","from":"testing","to":"done","message":"ship it?"}}`,
	`{"v":1,"seq":9,"type":"run_end","state":"done","run_end":{"outcome":"success","final_state":"done","steps":3,"tool_calls":2,"denials":1}}`,
	``,
}

func TestStreamRendersEvents(t *testing.T) {
	graph := func(name string) *wfgraph.Graph {
		def, err := workflow.LoadTemplate(name)
		if err != nil {
			return nil
		}
		return wfgraph.Build(def)
	}
	m := NewStream(StreamOptions{Input: strings.NewReader(""), Graph: graph})
	m.width, m.height = 140, 60
	for _, l := range streamLines[:6] {
		m.Feed([]byte(l))
	}
	mid := plainText(m.render())
	for _, want := range []string{"agent · bugfix (run_1)", "task: fix the off-by-one", "state planning", "▶ planning",
		"DENY  edit_file (tool-not-allowed): Denied in phase 'localizing': Edit is not allowed here", "localizing → planning (event LOCALIZED)",
		"1 unreadable lines skipped", "denied 1"} {
		if !strings.Contains(mid, want) {
			t.Errorf("mid-stream screen lacks %q:\n%s", want, mid)
		}
	}
	for _, l := range streamLines[6:] {
		m.Feed([]byte(l))
	}
	end := plainText(m.render())
	for _, want := range []string{"telemetry_blip cpu=3", "ALLOW read_file", "schema newer than v1",
		"Waiting for approval apr_1: testing → done ship it?", "run ended: success in done after 3 steps, 2 tool calls, 1 denials", "state done"} {
		if !strings.Contains(end, want) {
			t.Errorf("final screen lacks %q:\n%s", want, end)
		}
	}
}

func TestDecodeAgentEvent(t *testing.T) {
	for _, tc := range []struct {
		line    string
		typ     string
		payload bool
		bad     bool
	}{
		{line: `{"type":"decision","decision":{"verdict":"deny"}}`, typ: "decision", payload: true},
		{line: `{"type":"decision","seq":"not a number","decision":"not an object"}`, typ: "decision"},
		{line: `{"type":"x"}`, typ: "x"},
		{line: `{"type":""}`, bad: true},
		{line: `{"type":3}`, bad: true},
		{line: `[]`, bad: true},
		{line: `null`, bad: true},
		{line: ``, bad: true},
	} {
		ev, err := DecodeAgentEvent([]byte(tc.line))
		if tc.bad {
			if !errors.Is(err, ErrNotEvent) {
				t.Errorf("%s: err = %v, want ErrNotEvent", tc.line, err)
			}
			continue
		}
		if err != nil || string(ev.Type) != tc.typ || (ev.Payload != nil) != tc.payload {
			t.Errorf("%s: got %+v, %v", tc.line, ev, err)
		}
	}
}

func FuzzDecodeAgentEvent(f *testing.F) {
	for _, l := range streamLines {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		ev, err := DecodeAgentEvent(line)
		if err == nil && ev.Type == "" {
			t.Fatalf("decoded an event without a type")
		}
		m := NewStream(StreamOptions{Input: strings.NewReader("")})
		m.Feed(line)
		_ = m.render()
	})
}

// TestStreamFromTheAgentsWriter feeds lines written by the agent runner's
// own JSONL sink (agent/events), so the renderer follows the real schema.
func TestStreamFromTheAgentsWriter(t *testing.T) {
	var buf strings.Builder
	sink := events.NewStamper(events.NewJSONL(&buf), nil)
	exit := 1
	for _, e := range []events.Event{
		{Type: events.TypeRunStart, RunID: "run_w", State: "localizing", RunStart: &events.RunStart{Workflow: "bugfix", Task: "fix it", Model: "m1"}},
		{Type: events.TypeToolCall, State: "localizing", Step: 1, ToolCall: &events.ToolCall{ID: "c1", Name: "run_command", Args: []byte(`{"command":"go test ./..."}`)}},
		{Type: events.TypeDecision, State: "localizing", Step: 1, Decision: &events.Decision{ID: "c1", Name: "run_command", Verdict: "allow", Rule: "allow", Enforced: true}},
		{Type: events.TypeToolResult, State: "localizing", Step: 1, ToolResult: &events.ToolResult{ID: "c1", Name: "run_command", ExitCode: &exit}},
		{Type: events.TypeTransition, State: "planning", Step: 2, Transition: &events.Transition{Event: "LOCALIZED", From: "localizing", To: "planning"}},
		{Type: events.TypeNudge, State: "planning", Step: 3, Nudge: &events.Nudge{Kind: "read_loop", Message: "you read calc.go three times"}},
		{Type: events.TypeRunEnd, State: "planning", RunEnd: &events.RunEnd{Outcome: events.OutcomeBudget, FinalState: "planning", Steps: 3, ToolCalls: 1}},
	} {
		sink.Emit(e)
	}
	m := NewStream(StreamOptions{Input: strings.NewReader("")})
	m.width, m.height = 140, 40
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if _, err := events.Decode([]byte(l)); err != nil {
			t.Fatalf("the agent's own decoder refuses its line: %v", err)
		}
		m.Feed([]byte(l))
	}
	got := plainText(m.render())
	for _, want := range []string{"agent · bugfix (run_w)", "call run_command {\"command\":\"go test ./...\"}", "ALLOW run_command (allow)",
		"result run_command failed exit 1", "localizing → planning (event LOCALIZED)", "nudge (read_loop): you read calc.go three times",
		"run ended: budget in planning after 3 steps, 1 tool calls, 0 denials"} {
		if !strings.Contains(got, want) {
			t.Errorf("screen lacks %q:\n%s", want, got)
		}
	}
	if m.bad != 0 || len(m.others) != 0 {
		t.Errorf("known events shown raw or skipped: bad %d, others %v", m.bad, m.others)
	}
}
