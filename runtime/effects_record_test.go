package runtime

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/store"
)

// TestCallRecordsEffectsToSettle: an allowed call's pre record carries
// effects only when PostToolUse has something to settle (a reserved file),
// and such a call still settles; a call with nothing to settle records
// none and is done at once.
func TestCallRecordsEffectsToSettle(t *testing.T) {
	f := newFixture(t, Options{})
	f.start("claude-code:fx")
	read := f.call("claude-code:fx", "toolu_read", "Read", map[string]string{"file_path": "a.go"})
	edit := f.call("claude-code:fx", "toolu_edit", "Edit", map[string]string{"file_path": "b.go", "old_string": "x", "new_string": "y"})
	for _, c := range []ToolCall{read, edit} {
		if r := f.decide(c); r.Verdict != policy.Allow {
			t.Fatalf("%s: %+v", c.Call.Tool, r)
		}
	}
	run := f.live("claude-code:fx")
	calls, err := f.st.Calls(context.Background(), run.ID)
	if err != nil || len(calls) != 2 {
		t.Fatalf("calls = %+v, %v", calls, err)
	}
	for _, c := range calls {
		switch c.ToolUseID {
		case "toolu_read":
			if c.Effects != nil || c.Status != store.CallDone {
				t.Errorf("the Read's record: effects %s, status %s; want none, done", c.Effects, c.Status)
			}
		case "toolu_edit":
			var eff policy.Effects
			if err := json.Unmarshal(c.Effects, &eff); err != nil || len(eff.FilesEdited) != 1 || filepath.Base(eff.FilesEdited[0]) != "b.go" || c.Status != store.CallReserved {
				t.Errorf("the Edit's record: effects %s (%v), status %s; want b.go reserved", c.Effects, err, c.Status)
			}
		}
	}
	f.result(edit, false, nil)
	if run := f.live("claude-code:fx"); !slices.ContainsFunc(run.FilesEdited, func(f string) bool { return filepath.Base(f) == "b.go" }) || run.Iterations != 2 {
		t.Errorf("after the Edit's result: files %v, iterations %d; want b.go, 2", run.FilesEdited, run.Iterations)
	}
}
