package runtime

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/workflow"
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

// A tool name no harness knows is a warning, not an error: the run starts,
// and the start names it with a did-you-mean wherever a run is started
// from a workflow (the view Start returns, its phase notes, the run's
// "started" event). A later read of the run does not repeat it. The
// bundled templates start without warnings.
func TestStartWarnsAboutUnknownToolNames(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := context.Background()
	path := f.workflowFile("raed.json", `{"id": "raed", "initial": "reading", "states": {
  "reading": {"allowed_tools": ["Raed", "Grep"], "on": {"DONE": "done"}},
  "done": {"type": "final"}}}`)
	v, err := f.svc.Start(ctx, "s", path, human)
	if err != nil {
		t.Fatalf("Start = %v", err)
	}
	if len(v.Warnings) != 1 || !strings.Contains(v.Warnings[0], `"Raed"`) || !strings.Contains(v.Warnings[0], `did you mean "Read"?`) ||
		!strings.Contains(v.Warnings[0], "raed.json:2:") {
		t.Fatalf("Start warnings = %q, want one unknown-tool warning at raed.json:2 naming Read", v.Warnings)
	}
	if notes := strings.Join(v.PhaseNotes(), "\n"); !strings.Contains(notes, `did you mean "Read"?`) {
		t.Errorf("phase notes do not name the warning:\n%s", notes)
	}
	evs, err := f.st.Events(ctx, store.EventFilter{SessionKey: "s", Kinds: []store.EventKind{store.KindRun}})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) == 0 || !strings.Contains(string(evs[0].Data), `"warnings":[`) || !strings.Contains(string(evs[0].Data), "Raed") {
		t.Errorf("started event = %+v, want the warnings recorded", evs)
	}
	again, err := f.svc.Status(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Warnings) != 0 {
		t.Errorf("Status repeats the start's warnings: %q", again.Warnings)
	}
	for _, name := range workflow.TemplateNames() {
		v, err := f.svc.Start(ctx, "t-"+name, name, human)
		if err != nil {
			t.Fatalf("Start(%s) = %v", name, err)
		}
		if len(v.Warnings) != 0 {
			t.Errorf("bundled %s starts with warnings %q", name, v.Warnings)
		}
	}
}
