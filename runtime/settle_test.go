package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/store"
)

// TestDecideSettles: results handed to Decide (ToolCall.Settle) are
// recorded in the decision's own transaction, before it, as RecordResult
// records them: the interrupt a result fires moves the run before the
// call is decided, and the log reads results, then the decision.
func TestDecideSettles(t *testing.T) {
	f := newFixture(t, Options{})
	f.start("s")
	edit := f.call("s", "e1", "Write", map[string]any{"file_path": "src/a.go", "content": "x"})
	if d := f.decide(edit); d.Verdict != policy.Allow {
		t.Fatalf("edit: %v %s", d.Verdict, d.Reason)
	}
	secret := f.call("s", "e2", "Write", map[string]any{"file_path": "secrets/k.txt", "content": "x"})
	if d := f.decide(secret); d.Verdict != policy.Allow {
		t.Fatalf("secret edit: %v %s", d.Verdict, d.Reason)
	}
	settle := []ToolResult{
		{Session: "s", Call: edit.Call, Actor: agent},
		{Session: "s", Call: secret.Call, Actor: agent},
	}
	// The interrupt the second result fires (secrets/** -> review) moves
	// the run first: an Edit is then denied in review.
	next := f.call("s", "e3", "Edit", map[string]any{"file_path": "src/a.go", "old_string": "x", "new_string": "y"})
	next.Settle = settle
	if d := f.decide(next); d.Verdict != policy.Deny || d.State != "review" {
		t.Fatalf("next call: %v in %q (%s), want a deny in review", d.Verdict, d.State, d.Reason)
	}
	got := decisionsAndResults(f, "s")
	want := []string{"decision e1", "decision e2", "result e1", "result e2", "decision e3"}
	if !slices.Equal(got, want) {
		t.Errorf("log %q, want %q", got, want)
	}
	// Settling again (a retried request) records nothing twice.
	again := f.call("s", "e4", "Read", map[string]any{"file_path": "src/a.go"})
	again.Settle = settle
	f.decide(again)
	if n := len(f.events("s", store.KindResult)); n != 2 {
		t.Errorf("%d result events after settling the same results again, want 2", n)
	}
	// A result of another session fails the decision.
	bad := f.call("s", "e5", "Read", map[string]any{"file_path": "src/a.go"})
	bad.Settle = []ToolResult{{Session: "other", Call: edit.Call}}
	if _, err := f.svc.Decide(context.Background(), bad); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("settling another session's result: %v, want ErrInvalid", err)
	}
}

// TestDecideSettleWritesRunOnce: a decision that carries results writes
// the run once, with the results' counters and its own iteration in that
// one write (the run's revision moves by one); when the decision writes
// nothing itself (a replayed call), the results' counters are still
// written.
func TestDecideSettleWritesRunOnce(t *testing.T) {
	f := newFixture(t, Options{})
	f.start("s")
	r1 := f.call("s", "r1", "Read", map[string]any{"file_path": "src/a.go"})
	f.decide(r1)
	before := f.live("s")

	r2 := f.call("s", "r2", "Read", map[string]any{"file_path": "src/b.go"})
	r2.Settle = []ToolResult{{Session: "s", Call: r1.Call, Output: json.RawMessage(`"hello"`), Actor: agent}}
	if d := f.decide(r2); d.Verdict != policy.Allow {
		t.Fatalf("r2: %v %s", d.Verdict, d.Reason)
	}
	after := f.live("s")
	if after.Revision != before.Revision+1 {
		t.Errorf("revision %d -> %d: the run was written %d times, want once", before.Revision, after.Revision, after.Revision-before.Revision)
	}
	if after.Iterations != before.Iterations+1 || after.Counters[contextBytesKey] != before.Counters[contextBytesKey]+5 {
		t.Errorf("iterations %d -> %d, context bytes %d -> %d; want +1 and +5", before.Iterations, after.Iterations,
			before.Counters[contextBytesKey], after.Counters[contextBytesKey])
	}

	// r2 again (a retried request) replays its answer and writes no
	// iteration; the result it carries is still counted.
	again := f.call("s", "r2", "Read", map[string]any{"file_path": "src/b.go"})
	again.Settle = []ToolResult{{Session: "s", Call: r2.Call, Output: json.RawMessage(`"abc"`), Actor: agent}}
	if d := f.decide(again); !d.Replayed {
		t.Fatalf("r2 again: not replayed")
	}
	last := f.live("s")
	if last.Revision != after.Revision+1 || last.Iterations != after.Iterations || last.Counters[contextBytesKey] != after.Counters[contextBytesKey]+3 {
		t.Errorf("replay: revision %d -> %d, iterations %d -> %d, context bytes %d -> %d; want +1, +0, +3", after.Revision, last.Revision,
			after.Iterations, last.Iterations, after.Counters[contextBytesKey], last.Counters[contextBytesKey])
	}
	if n := len(f.events("s", store.KindResult)); n != 2 {
		t.Errorf("%d result events, want 2", n)
	}
}

// TestOneShotCalls: a one-shot call (ToolCall.OneShot: the MCP gateway's)
// that reserves nothing keeps no call record, and its result, settled from
// the answer (ToolResult.Decided), records none either but counts as any
// result; a one-shot call that reserves (an edit an interrupt watches)
// keeps its records and its result fires the interrupt.
func TestOneShotCalls(t *testing.T) {
	f := newFixture(t, Options{})
	f.start("s")
	run := f.live("s")
	read := f.call("s", "gw1", "Read", map[string]any{"file_path": "src/a.go"})
	read.OneShot = true
	dr := f.decide(read)
	if dr.Verdict != policy.Allow {
		t.Fatalf("read: %v %s", dr.Verdict, dr.Reason)
	}
	secret := f.call("s", "gw2", "Write", map[string]any{"file_path": "secrets/k.txt", "content": "x"})
	secret.OneShot = true
	ds := f.decide(secret)
	if ds.Verdict != policy.Allow {
		t.Fatalf("secret edit: %v %s", ds.Verdict, ds.Reason)
	}
	records := func() []string {
		calls, err := f.st.Calls(context.Background(), run.ID)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range calls {
			got = append(got, c.ToolUseID+" "+string(c.Phase))
		}
		return got
	}
	if got := records(); !slices.Equal(got, []string{"gw2 pre"}) {
		t.Errorf("call records %q, want only the edit's", got)
	}
	next := f.call("s", "gw3", "Read", map[string]any{"file_path": "src/b.go"})
	next.OneShot = true
	next.Settle = []ToolResult{
		{Session: "s", Call: read.Call, Decided: &dr, Output: json.RawMessage(`"hello"`), Actor: agent},
		{Session: "s", Call: secret.Call, Decided: &ds, Actor: agent},
	}
	if d := f.decide(next); d.Verdict != policy.Allow || d.State != "review" {
		t.Fatalf("next call: %v in %q (%s), want allowed in review (the interrupt fired)", d.Verdict, d.State, d.Reason)
	}
	if got := records(); !slices.Equal(got, []string{"gw2 post", "gw2 pre"}) && !slices.Equal(got, []string{"gw2 pre", "gw2 post"}) {
		t.Errorf("call records %q, want the edit's pre and post records only", got)
	}
	for _, e := range f.events("s", store.KindResult) {
		// The read's output counted (in plan, whose counters the
		// interrupt then left), with no note.
		if e.ToolUseID == "gw1" && (!strings.Contains(string(e.Data), `"bytes":5`) || strings.Contains(string(e.Data), "note")) {
			t.Errorf("gw1's result %s, want 5 bytes and no note", e.Data)
		}
	}
	got := decisionsAndResults(f, "s")
	want := []string{"decision gw1", "decision gw2", "result gw1", "result gw2", "decision gw3"}
	if !slices.Equal(got, want) {
		t.Errorf("log %q, want %q", got, want)
	}

	// A one-shot result of a call decided in a state the run has left
	// counts nothing there.
	if _, err := f.svc.Transition(context.Background(), "s", "BACK", nil, agent); err != nil {
		t.Fatal(err)
	}
	back := f.live("s")
	last := f.call("s", "gw4", "Read", map[string]any{"file_path": "src/c.go"})
	last.OneShot = true
	gw3 := next
	gw3.Settle = nil
	dn := f.decide(gw3) // one-shot: decided afresh, nothing replays it
	if dn.Replayed || dn.State != "plan" {
		t.Fatalf("gw3 again: replayed %v in %q, want decided afresh in plan", dn.Replayed, dn.State)
	}
	last.Settle = []ToolResult{{Session: "s", Call: next.Call, Decided: &DecideResult{State: "review", unrecorded: true, runID: run.ID,
		Decision: policy.Decision{Verdict: policy.Allow, Tool: "Read"}}, Output: json.RawMessage(`"abc"`), Actor: agent}}
	f.decide(last)
	if c := f.live("s").Counters[contextBytesKey]; c != back.Counters[contextBytesKey] {
		t.Errorf("context bytes %d -> %d, want unchanged (decided in review, settled in plan)", back.Counters[contextBytesKey], c)
	}
	res := f.events("s", store.KindResult)
	if n := res[len(res)-1]; n.ToolUseID != "gw3" || !strings.Contains(string(n.Data), "decided in state review") {
		t.Errorf("last result %s %s, want gw3's with the note that it was decided in review", n.ToolUseID, n.Data)
	}
}

// TestOneShotResultOfAnotherRun: a one-shot call keeps no record of the
// run it was decided in but its answer, so its result must still be
// settled against that run: when a person has ended the run and a new one
// of the same workflow stands in the same state, a passing `go test` the
// old run allowed is no evidence for the new one (its guards read
// runtime.last_command), and its output counts nothing there.
func TestOneShotResultOfAnotherRun(t *testing.T) {
	for _, alone := range []bool{true, false} {
		f := newFixture(t, Options{})
		f.start("s")
		old := f.live("s")
		c := f.call("s", "gw1", "Bash", map[string]any{"command": "go test ./..."})
		c.OneShot = true
		d := f.decide(c)
		if d.Verdict != policy.Allow || d.State != "plan" {
			t.Fatalf("go test: %v in %q (%s)", d.Verdict, d.State, d.Reason)
		}
		if err := f.svc.Deactivate(context.Background(), "s", human); err != nil {
			t.Fatal(err)
		}
		f.start("s")
		fresh := f.live("s")
		if fresh.ID == old.ID || fresh.State != d.State {
			t.Fatalf("new run %s in %q, old %s", fresh.ID, fresh.State, old.ID)
		}
		zero := 0
		r := ToolResult{Session: "s", Call: c.Call, Decided: &d, ExitCode: &zero, Output: json.RawMessage(`"ok  \tpkg\t0.1s"`), Actor: agent}
		if alone {
			if err := f.svc.RecordResult(context.Background(), r); err != nil {
				t.Fatal(err)
			}
		} else {
			next := f.call("s", "gw2", "Read", map[string]any{"file_path": "a.go"})
			next.OneShot = true
			next.Settle = []ToolResult{r}
			f.decide(next)
		}
		now := f.live("s")
		if len(now.Evidence) > 0 || now.Counters[contextBytesKey] != 0 {
			t.Errorf("alone %v: the new run's evidence %s, context bytes %d; want none (the call was decided under %s)",
				alone, now.Evidence, now.Counters[contextBytesKey], old.ID)
		}
		res := f.events("s", store.KindResult)
		if len(res) == 0 || !strings.Contains(string(res[len(res)-1].Data), "decided under another run") {
			t.Errorf("alone %v: result events %v, want the last noted as decided under another run", alone, res)
		}
	}
}

// decisionsAndResults lists the session's decision and result events in
// log order, as "kind tool_use_id".
func decisionsAndResults(f *fixture, session string) []string {
	f.t.Helper()
	evs, err := f.st.Events(context.Background(), store.EventFilter{SessionKey: session, Kinds: []store.EventKind{store.KindDecision, store.KindResult}})
	if err != nil {
		f.t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		got = append(got, string(e.Kind)+" "+e.ToolUseID)
	}
	return got
}
