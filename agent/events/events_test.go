package events

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestStampAndDecode(t *testing.T) {
	var buf bytes.Buffer
	now := time.Date(2026, 12, 2, 20, 0, 0, 0, time.UTC)
	s := NewStamper(NewJSONL(&buf), func() time.Time { return now })
	s.Emit(Event{Type: TypeRunStart, RunID: "run_1", State: "a", RunStart: &RunStart{Workflow: "w", Model: "m", API: "openai", Sandbox: "bwrap"}})
	s.Emit(Event{Type: TypeRunEnd, RunID: "run_1", State: "done", RunEnd: &RunEnd{Outcome: OutcomeSuccess, FinalState: "done", Steps: 2}})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("lines %q", lines)
	}
	want := `{"v":1,"seq":1,"time":"2026-12-02T20:00:00Z","type":"run_start","run_id":"run_1","state":"a","run_start":{"workflow":"w","task":"","model":"m","endpoint":"","api":"openai","workspace":"","sandbox":"bwrap","max_steps":0}}`
	if lines[0] != want {
		t.Fatalf("line 1\n got %s\nwant %s", lines[0], want)
	}
	e, err := Decode([]byte(lines[1]))
	if err != nil || e.Seq != 2 || e.RunEnd == nil || e.RunEnd.Steps != 2 {
		t.Fatalf("%+v %v", e, err)
	}
	if _, err := Decode([]byte(`{"v":2,"type":"run_end"}`)); err == nil {
		t.Fatal("a future version decoded")
	}
}

func TestRender(t *testing.T) {
	code := 1
	for _, tc := range []struct {
		e    Event
		want string
	}{
		{Event{Type: TypeDecision, Step: 3, State: "planning", Decision: &Decision{Name: "edit_file", Verdict: "deny", Rule: "tool-not-allowed", Reason: "Denied in phase 'planning'\nmore"}},
			"#3 [planning] deny edit_file (tool-not-allowed): Denied in phase 'planning'"},
		{Event{Type: TypeDecision, Decision: &Decision{Name: "read_file", Verdict: "allow"}}, ""},
		{Event{Type: TypeToolResult, Step: 4, State: "testing", ToolResult: &ToolResult{Name: "run_test", OK: false, ExitCode: &code, Bytes: 10}},
			"#4 [testing] run_test failed exit 1 (10 bytes)"},
		{Event{Type: TypeTransition, Step: 5, Depth: 1, Transition: &Transition{Event: "GO", From: "a", To: "b"}}, "  #5 a → b (GO)"},
		{Event{Type: TypeRunStart, RunID: "run_1", RunStart: &RunStart{Workflow: "raed", Model: "m", API: "openai", Workspace: "/w", Sandbox: "bwrap",
			Warnings: []string{`raed.json:5:29: warning: state 'a' allowed_tools entry "Raed" is a tool no harness names (did you mean "Read"?)`}}},
			"start raed (run_1) with m via openai, workspace /w, sandbox bwrap\n  raed.json:5:29: warning: state 'a' allowed_tools entry \"Raed\" is a tool no harness names (did you mean \"Read\"?)"},
		{Event{Type: TypeApprovalWait, RunID: "run_9", Session: "agent:ab", ApprovalWait: &ApprovalWait{ApprovalID: "apr_1", Event: "SHIP", From: "a", To: "b"}},
			"waiting for approval apr_1: a → b (SHIP); approve with `statewright approve agent:ab --id apr_1`, then resume with `statewright agent --resume run_9`"},
	} {
		if got := Render(tc.e); got != tc.want {
			t.Errorf("Render(%s)\n got %q\nwant %q", tc.e.Type, got, tc.want)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"v":1,"seq":1,"type":"tool_call","tool_call":{"id":"x","name":"read_file","args":{}}}`))
	f.Add([]byte(`{"v":1,"type":"run_end","run_end":{"outcome":"success"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := Decode(b)
		if err != nil {
			return
		}
		if e.V != Version || e.Type == "" {
			t.Fatalf("accepted %+v", e)
		}
		_ = Render(e) // must not panic on any decoded event
	})
}
