package runtime

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/store"
)

// typoWorkflow has allowed_tool (a typo): read as written, its phase would
// be unrestricted.
const typoWorkflow = `{"id": "typo", "initial": "reading", "states": {
  "reading": {"allowed_tool": ["Read", "Grep"], "on": {"DONE": "done"}},
  "done": {"type": "final"}}}`

// Start refuses a workflow with an unknown key (docs/workflow-format.md).
func TestStartRefusesUnknownKeys(t *testing.T) {
	f := newFixture(t, Options{})
	path := f.workflowFile("typo.json", typoWorkflow)
	_, err := f.svc.Start(context.Background(), "s", path, human)
	if !errors.Is(err, ErrWorkflow) || !strings.Contains(err.Error(), `unknown key "allowed_tool"`) || !strings.Contains(err.Error(), ":2:15:") {
		t.Fatalf("Start(typo) = %v, want an unknown-key error with its position", err)
	}
	if _, err := f.st.LiveRun(context.Background(), "s"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a run was started: %v", err)
	}
	// The file's own opt-in for files written for the original.
	compat := f.workflowFile("compat.json", strings.Replace(typoWorkflow, `"id": "typo",`, `"id": "typo", "compat": "statewright",`, 1))
	if _, err := f.svc.Start(context.Background(), "s", compat, human); err != nil {
		t.Fatalf("Start(compat) = %v", err)
	}
}

// A run already in flight whose snapshot holds a key this version rejects
// keeps working under the law it started with, and the audit log says so.
func TestSnapshotInFlightIsReadLeniently(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := context.Background()
	err := f.st.Update(ctx, "s", func(tx store.Tx) error {
		return tx.Put(&store.Run{SessionKey: "s", WorkflowID: "old", WorkflowSource: "old.json",
			Snapshot: []byte(`{"id": "old", "initial": "reading", "states": {
  "reading": {"allowed_tools": ["Read"], "owner": "team-a", "on": {"DONE": "done"}},
  "done": {"type": "final"}}}`), State: "reading", Status: store.StatusActive})
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct {
		tool  string
		input map[string]any
		want  policy.Verdict
	}{
		{"Read", map[string]any{"file_path": "a.go"}, policy.Allow},
		{"Edit", map[string]any{"file_path": "a.go", "old_string": "a", "new_string": "b"}, policy.Deny},
	} {
		r := f.decide(f.call("s", "t"+string(rune('1'+i)), tc.tool, tc.input))
		if r.Verdict != tc.want {
			t.Errorf("%s = %+v, want %v", tc.tool, r, tc.want)
		}
	}
	evs, err := f.st.Events(ctx, store.EventFilter{SessionKey: "s", Kinds: []store.EventKind{store.KindAdmin}})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Rule != "snapshot-lenient" || !strings.Contains(evs[0].Reason, `unknown key "owner"`) {
		t.Errorf("audit events = %+v, want one snapshot-lenient warning", evs)
	}
}
