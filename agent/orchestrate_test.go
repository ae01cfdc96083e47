package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/agent"
	"github.com/statewright-go/statewright/agent/events"
	fm "github.com/statewright-go/statewright/internal/fakemodel"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
)

const parentWorkflow = `{
  "id": "parent",
  "initial": "plan",
  "states": {
    "plan": {
      "allowed_tools": ["Read"],
      "on": {
        "DELEGATE": { "invoke": "child", "on_complete": "review", "on_fail": "failed", "input": { "ticket": 7 } },
        "FAIL": "failed"
      }
    },
    "review": {
      "allowed_tools": ["Read"],
      "on": {
        "SPLIT": { "fork": { "branches": { "a": { "initial": "a1", "terminal": "a_done" }, "b": { "initial": "b1", "terminal": "b_done" } },
                             "join": "any", "on_complete": "done", "on_fail": "failed" } },
        "FAIL": "failed"
      }
    },
    "a1": { "allowed_tools": ["Write"], "on": { "A_OK": "a_done", "FAIL": "failed" } },
    "a_done": { "on": { "NEXT": "done" } },
    "b1": { "allowed_tools": ["Read"], "on": { "B_OK": "b_done", "FAIL": "failed" } },
    "b_done": { "on": { "NEXT": "done" } },
    "done": { "type": "final" },
    "failed": { "type": "final" }
  }
}`

const childWorkflow = `{
  "id": "child",
  "initial": "work",
  "context": { "child_result": "ok" },
  "states": {
    "work": { "allowed_tools": ["Write"], "on": { "FINISH": "finished", "FAIL": "failed" } },
    "finished": { "type": "final" },
    "failed": { "type": "final" }
  }
}`

// TestInvokeAndFork: the runner runs invoke and fork with the runtime's
// semantics, in the same run: the invoked workflow's phases are the law
// until it ends (the parent's plan phase forbids Write; the child's work
// phase allows it), its result lands under subflows.<name>, and a fork's
// branches run one after the other (join any: the first completed branch
// joins and cancels the rest).
func TestInvokeAndFork(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, ".statewright/workflows/parent.json", parentWorkflow)
	write(t, dir, ".statewright/workflows/child.json", childWorkflow)
	h := newHarness(t, dir)
	tr := func(ev string) fm.Turn { return call("statewright_transition", map[string]any{"event": ev}) }
	srv := fm.NewChatCompletions(fm.Script{Turns: []fm.Turn{
		call("write_file", map[string]any{"path": "early.txt", "content": "no\n"}), // parent, plan: denied
		tr("DELEGATE"), // parent, plan → child
		call("write_file", map[string]any{"path": "child.txt", "content": "from the child\n"}), // child, work
		tr("FINISH"), // child → finished: back in the parent, review
		tr("SPLIT"),  // parent, review → branch a
		call("write_file", map[string]any{"path": "a.txt", "content": "a\n"}), // branch a
		tr("A_OK"), // branch a → a_done: join any → done
	}}, fm.WithLog(t.Logf))
	defer srv.Close()
	cfg := h.config(srv, filepath.Join(h.ws.Root, ".statewright/workflows/parent.json"), "orchestrate", "")
	res, err := agent.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != events.OutcomeSuccess || res.FinalState != "done" {
		t.Fatalf("result %+v\n%s", res, h.jsnl.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "early.txt")); err == nil {
		t.Error("early.txt was written in the parent's read-only phase")
	}
	for _, f := range []string{"child.txt", "a.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s was not written in the child work", f)
		}
	}
	// One run: the child work ran in it; its results are in the context.
	ctx := context.Background()
	runs, _ := h.st.Runs(ctx, store.RunFilter{})
	if len(runs) != 1 {
		t.Fatalf("%d runs; want the one run", len(runs))
	}
	var pc map[string]any
	_ = json.Unmarshal(runs[0].Context, &pc)
	sub, _ := pc["subflows"].(map[string]any)
	child, _ := sub["child"].(map[string]any)
	if child["outcome"] != "completed" || child["final_state"] != "finished" {
		t.Fatalf("parent context %s", runs[0].Context)
	}
	if cc, _ := child["context"].(map[string]any); cc["child_result"] != "ok" || cc["ticket"] != float64(7) {
		t.Fatalf("the child's context (its own plus the invoke's input) %v", child["context"])
	}
	br, _ := pc["branches"].(map[string]any)
	if a, _ := br["a"].(map[string]any); a["outcome"] != "completed" {
		t.Fatalf("branches %v", br)
	}
	if b, _ := br["b"].(map[string]any); b["outcome"] != "cancelled" {
		t.Fatalf("branches %v", br)
	}
	var kids []string
	for _, e := range h.events(t) {
		if e.Type == events.TypeChild {
			kids = append(kids, e.Child.Phase+":"+e.Child.Kind)
		}
	}
	if strings.Join(kids, ",") != "start:invoke,end:invoke,start:fork,end:fork" {
		t.Fatalf("child events %v", kids)
	}
}

// TestInvokeOfAnUnknownWorkflow: the invoke closure is resolved when the
// run starts, so a workflow that invokes one that does not exist does not
// start.
func TestInvokeOfAnUnknownWorkflow(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, ".statewright/workflows/parent.json", strings.Replace(parentWorkflow, `"invoke": "child"`, `"invoke": "no-such-child"`, 1))
	h := newHarness(t, dir)
	srv := fm.NewChatCompletions(fm.Script{Turns: []fm.Turn{call("statewright_transition", map[string]any{"event": "DELEGATE"})}})
	defer srv.Close()
	cfg := h.config(srv, filepath.Join(h.ws.Root, ".statewright/workflows/parent.json"), "orchestrate", "")
	_, err := agent.Run(context.Background(), cfg)
	if !errors.Is(err, runtime.ErrWorkflow) || !strings.Contains(err.Error(), "no-such-child") || srv.Served() != 0 {
		t.Fatalf("Run = %v (%d model calls); want a workflow error naming the child", err, srv.Served())
	}
}
