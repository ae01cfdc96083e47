package control

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/sqlite"
)

// fixture is a Control over a real SQLite store with one project workflow.
func fixture(t *testing.T) (*Control, *sqlite.Store) {
	t.Helper()
	dir := t.TempDir()
	wf := filepath.Join(dir, ".statewright", "workflows")
	if err := os.MkdirAll(wf, 0o755); err != nil {
		t.Fatal(err)
	}
	const gate = `{"id":"gate","initial":"a","states":{
	  "a":{"allowed_tools":["Read"],"on":{"GO":"b"}},
	  "b":{"on":{"DONE":"end"}},
	  "fix":{"on":{"FIXED":"$return"}},
	  "end":{"type":"final"}},
	  "interrupts":{"env":{"trigger":{"file_pattern":"**/.env"},"target":"fix"}}}`
	if err := os.WriteFile(filepath.Join(wf, "gate.json"), []byte(gate), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(t.Context(), filepath.Join(dir, "state.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	rt := runtime.New(st, runtime.Options{ProjectDir: dir})
	c, err := New(rt, st, Options{ProjectDir: dir, Workflows: runtime.DefaultWorkflows(dir)})
	if err != nil {
		t.Fatal(err)
	}
	return c, st
}

var agent = runtime.Actor{Kind: runtime.ActorAgent, Channel: "test"}

func TestCall(t *testing.T) {
	c, st := fixture(t)
	ctx := context.Background()
	const s = "test:s1"
	tests := []struct {
		name, tool, args string
		wantErr          string // substring of the refusal ("" : success)
		wantState        string // the run's state afterwards ("" : no run)
	}{
		{"no run yet", "get_state", `{}`, "no active workflow", ""},
		{"unknown argument", "statewright_start", `{"name":"gate","nmae":"x"}`, "invalid arguments", ""},
		{"not an object", "statewright_start", `[1]`, "not a JSON object", ""},
		{"unknown tool", "statewright_reboot", `{}`, "not a statewright control tool", ""},
		{"start, stamp ignored", "statewright_start", `{"name":"gate","statewright_session":"other"}`, "", "a"},
		{"state", "statewright_get_state", ``, "", "a"},
		{"interrupt refused", "statewright_transition", `{"event":"INTERRUPT:env"}`, "not the agent's to send", "a"},
		{"interrupt refused, lower case", "statewright_transition", `{"event":"interrupt:env"}`, "not the agent's to send", "a"},
		{"unknown event", "statewright_transition", `{"event":"NOPE"}`, "transition refused", "a"},
		{"transition", "transition", `{"event":"GO","data":{"why":"done"}}`, "", "b"},
		{"pause is a request", "statewright_pause", `{"reason":"tired"}`, "", "b"},
		{"force_state needs a state", "statewright_force_state", `{}`, "name the state", "b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := c.Call(ctx, s, tt.tool, json.RawMessage(tt.args), "", agent)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Call: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("Call = %v, %v; want an error containing %q", res, err, tt.wantErr)
			}
			run, err := st.LiveRun(ctx, s)
			switch {
			case tt.wantState == "" && err == nil:
				t.Fatalf("a run exists in %s", run.State)
			case tt.wantState != "" && (err != nil || run.State != tt.wantState || run.Status != store.StatusActive):
				t.Fatalf("run = %+v, %v; want active in %s", run, err, tt.wantState)
			}
		})
	}
}

func TestTransitionIsIdempotentOnTheCallID(t *testing.T) {
	c, st := fixture(t)
	ctx := context.Background()
	const s = "test:s2"
	if _, err := c.Start(ctx, s, "gate", agent); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := c.Call(ctx, s, ToolTransition, json.RawMessage(`{"event":"GO"}`), "call-1", agent); err != nil {
			t.Fatalf("Call: %v", err)
		}
	}
	if run, err := st.LiveRun(ctx, s); err != nil || run.State != "b" {
		t.Fatalf("run = %+v, %v; want b (GO applied once)", run, err)
	}
}

// TestStateAfterCompletion checks that get_state after the run reached its
// final state says the work is done and does not invite the agent to
// start another workflow (issue 18 item 3).
func TestStateAfterCompletion(t *testing.T) {
	c, _ := fixture(t)
	ctx := context.Background()
	const s = "test:done"
	for _, call := range []struct{ tool, args string }{
		{"statewright_start", `{"name":"gate"}`},
		{"statewright_transition", `{"event":"GO"}`},
		{"statewright_transition", `{"event":"DONE"}`},
	} {
		if _, err := c.Call(ctx, s, call.tool, json.RawMessage(call.args), "", agent); err != nil {
			t.Fatalf("%s %s: %v", call.tool, call.args, err)
		}
	}
	_, err := c.Call(ctx, s, "statewright_get_state", json.RawMessage(`{}`), "", agent)
	if err == nil {
		t.Fatal("get_state after completion: no error; want the completed run named")
	}
	msg := err.Error()
	if !strings.Contains(msg, "completed in state 'end'") || !strings.Contains(msg, "report the outcome to the user") {
		t.Errorf("get_state after completion = %q; want the completed run and what to do", msg)
	}
	for _, bad := range []string{"statewright_start", "Start one", "workflows you may start"} {
		if strings.Contains(msg, bad) {
			t.Errorf("get_state after completion invites a new run (%q): %q", bad, msg)
		}
	}
}
