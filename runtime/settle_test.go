package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
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
	evs, err := f.st.Events(context.Background(), store.EventFilter{SessionKey: "s", Kinds: []store.EventKind{store.KindDecision, store.KindResult}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		got = append(got, string(e.Kind)+" "+e.ToolUseID)
	}
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
