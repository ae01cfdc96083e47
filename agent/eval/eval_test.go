package eval_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/agent/eval"
	"github.com/statewright-go/statewright/agent/events"
	"github.com/statewright-go/statewright/agent/model"
	"github.com/statewright-go/statewright/agent/tools"
	fm "github.com/statewright-go/statewright/internal/fakemodel"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/sqlite"
)

// Oracles turns a suite's answer keys into the flailing model's knowledge.
func Oracles(t testing.TB, s *eval.Suite) []fm.Oracle {
	var out []fm.Oracle
	for _, task := range s.Tasks {
		var o fm.Oracle
		if err := json.Unmarshal(task.Oracle, &o); err != nil {
			t.Fatalf("%s: oracle: %v", task.ID, err)
		}
		o.Task, o.TestCommand = task.Task, task.TestCommand
		out = append(out, o)
	}
	return out
}

func sandbox(t *testing.T) *tools.Sandbox {
	sb := tools.DetectSandbox(context.Background())
	if sb.Bwrap == "" && os.Getenv("STATEWRIGHT_REQUIRE_SANDBOX") != "" {
		t.Fatalf("bubblewrap is required here: %s", sb.Why)
	}
	if c := tools.GoBuildCache(); c != "" {
		sb.Writable = []string{c}
	}
	return &sb
}

// TestEvalFlailingModel is the CI eval: the suite's ten tasks, each run
// under the suite's workflow and unguarded, against one reactive fake
// model that flails the same way in both (read loops, edits while
// planning, whole-file rewrites, declaring success without running the
// tests). Only the answers it gets differ. Guarded, the denials steer it
// to targeted edits and a proven test run; unguarded, its rewrites break
// other tests and it never notices.
func TestEvalFlailingModel(t *testing.T) {
	suite, err := eval.Load("../testdata/eval")
	if err != nil {
		t.Fatal(err)
	}
	if len(suite.Tasks) < 10 {
		t.Fatalf("%d tasks, want at least 10", len(suite.Tasks))
	}
	langs := map[string]int{}
	for _, task := range suite.Tasks {
		langs[task.Language]++
	}
	if langs["go"] == 0 || langs["python"] == 0 {
		t.Fatalf("languages %v, want Go and Python", langs)
	}
	srv := fm.NewChatCompletions(fm.Script{Respond: fm.Flailing(Oracles(t, suite))})
	defer srv.Close()
	ep, _ := model.ParseEndpoint(srv.URL + "#flailing-coder")
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "eval.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var stream bytes.Buffer
	var progress bytes.Buffer
	rep, err := eval.Run(context.Background(), suite, eval.Options{Endpoint: ep, Store: st, Sandbox: sandbox(t),
		Events: events.NewStamper(events.NewJSONL(&stream), nil), Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	rep.WriteTable(&table)
	t.Logf("\n%s", table.String())

	g, u := rep.Summary[eval.Guarded], rep.Summary[eval.Unguarded]
	if g.Runs != len(suite.Tasks) || u.Runs != len(suite.Tasks) {
		t.Fatalf("runs %d/%d", g.Runs, u.Runs)
	}
	if g.Passed != g.Runs {
		t.Errorf("guarded: %d of %d passed, want all", g.Passed, g.Runs)
	}
	if u.Passed != 0 {
		t.Errorf("unguarded: %d of %d passed, want none (the rewrites break other tests)", u.Passed, u.Runs)
	}
	for _, r := range rep.Results {
		if r.Error != "" {
			t.Errorf("%s %s: %s", r.Task, r.Mode, r.Error)
		}
		switch r.Mode {
		case eval.Guarded:
			if r.Outcome != events.OutcomeSuccess || r.FinalState != "done" || r.Denials == 0 {
				t.Errorf("%s guarded: %s in %s with %d denials", r.Task, r.Outcome, r.FinalState, r.Denials)
			}
		case eval.Unguarded:
			// The workflow let it declare success; the tests say otherwise.
			if r.Outcome != events.OutcomeSuccess || r.FinalState != "done" {
				t.Errorf("%s unguarded: %s in %s", r.Task, r.Outcome, r.FinalState)
			}
		}
	}

	// Same behaviour, different answers: every run read in a loop until the
	// runner's nudge, and tried a whole-file rewrite first.
	var starts, nudges, rewrites int
	for _, line := range bytes.Split(bytes.TrimSpace(stream.Bytes()), []byte("\n")) {
		e, err := events.Decode(line)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case e.Type == events.TypeRunStart:
			starts++
		case e.Type == events.TypeNudge && e.Nudge.Kind == "read_loop":
			nudges++
		case e.Type == events.TypeToolCall && e.ToolCall.Name == "write_file":
			rewrites++
		}
	}
	if starts != 2*len(suite.Tasks) || nudges != starts || rewrites < starts {
		t.Errorf("%d runs, %d read-loop nudges, %d whole-file writes: want one nudge and at least one rewrite per run", starts, nudges, rewrites)
	}
	// Guarded: the edit while planning and the untested TESTS_PASS were refused, in the store's log.
	evs, err := st.Events(context.Background(), store.EventFilter{Kinds: []store.EventKind{store.KindDecision, store.KindTransition}})
	if err != nil {
		t.Fatal(err)
	}
	var planningDenies, maxEditDenies, guardRefusals int
	for _, e := range evs {
		if e.Kind == store.KindDecision && e.Decision == "deny" && e.State == "planning" && e.Tool == "Write" {
			planningDenies++
		}
		if e.Kind == store.KindDecision && e.Rule == "max-edit-lines" {
			maxEditDenies++
		}
		if e.Kind == store.KindTransition && e.State == "testing" && strings.Contains(string(e.Data), `"refused":true`) {
			guardRefusals++
		}
	}
	if n := len(suite.Tasks); planningDenies != n || maxEditDenies != n || guardRefusals != n {
		t.Errorf("store log: %d planning write denies, %d max-edit-lines denies, %d refused TESTS_PASS; want %d each", planningDenies, maxEditDenies, guardRefusals, n)
	}
	if !strings.Contains(table.String(), "guarded   pass rate 10/10") {
		t.Errorf("table:\n%s", table.String())
	}
}
