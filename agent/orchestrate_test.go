package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/agent"
	"github.com/statewright-go/statewright/agent/events"
	fm "github.com/statewright-go/statewright/internal/fakemodel"
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

// TestOrchestrateInvokeAndFork: an invoke runs the child workflow from the
// project's registry as its own run (with the invoke's input as its
// context), merges its final context and moves to on_complete; a fork runs
// each branch of the workflow from its initial to its terminal state, one
// after the other, and joins them (any: one success suffices).
func TestOrchestrateInvokeAndFork(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, ".statewright/workflows/parent.json", parentWorkflow)
	write(t, dir, ".statewright/workflows/child.json", childWorkflow)
	h := newHarness(t, dir)
	tr := func(ev string) fm.Turn { return call("statewright_transition", map[string]any{"event": ev}) }
	srv := fm.NewChatCompletions(fm.Script{Turns: []fm.Turn{
		tr("DELEGATE"), // parent, plan
		call("write_file", map[string]any{"path": "child.txt", "content": "from the child\n"}), // child
		tr("FINISH"), // child → finished
		tr("SPLIT"),  // parent, review
		call("write_file", map[string]any{"path": "a.txt", "content": "a\n"}), // branch a
		tr("A_OK"), // branch a → a_done (final in the branch)
		tr("FAIL"), // branch b gives up
	}}, fm.WithLog(t.Logf))
	defer srv.Close()
	cfg := h.config(srv, filepath.Join(h.ws.Root, ".statewright/workflows/parent.json"), "orchestrate", "")
	cfg.Registry = agent.DefaultRegistry(h.ws.Root)
	res, err := agent.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != events.OutcomeSuccess || res.FinalState != "done" {
		t.Fatalf("result %+v\n%s", res, h.jsnl.String())
	}
	for _, f := range []string{"child.txt", "a.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s was not written by the child run", f)
		}
	}
	// The child saw its input.
	reqs := srv.MainRequests()
	c1, _ := reqs[1].Chat()
	if first := c1.Messages[1].Text(); !strings.Contains(first, `Input: {"ticket":7}`) {
		t.Fatalf("the child's task message: %q", first)
	}
	// The parent's context has the child's, the fork's branch a; the store has a child run per piece of work.
	ctx := context.Background()
	run, _ := h.st.Run(ctx, res.RunID)
	var pc map[string]any
	_ = json.Unmarshal(run.Context, &pc)
	if pc["child_result"] != "ok" {
		t.Fatalf("parent context %s", run.Context)
	}
	if _, ok := pc["a"]; !ok {
		t.Fatalf("parent context lacks the joined branch: %s", run.Context)
	}
	runs, _ := h.st.Runs(ctx, store.RunFilter{})
	children := map[string]string{}
	for _, r := range runs {
		if strings.HasPrefix(r.SessionKey, res.Session+"/") {
			children[r.WorkflowID] = r.State
		}
	}
	want := map[string]string{"child": "finished", "parent-a": "a_done", "parent-b": "failed"}
	for k, v := range want {
		if children[k] != v {
			t.Fatalf("child runs %v, want %v", children, want)
		}
	}
	var starts, depth1 int
	for _, e := range h.events(t) {
		if e.Type == events.TypeChild && e.Child.Phase == "start" {
			starts++
		}
		if e.Depth == 1 && e.Type == events.TypeRunStart {
			depth1++
		}
	}
	if starts != 3 || depth1 != 3 {
		t.Fatalf("%d child starts, %d depth-1 runs; want 3 and 3", starts, depth1)
	}
}

// TestOrchestrateInvokeFails: a child that ends in its failed state sends
// the parent to on_fail; an unknown child workflow too.
func TestOrchestrateInvokeFails(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, ".statewright/workflows/parent.json", strings.Replace(parentWorkflow, `"invoke": "child"`, `"invoke": "no-such-child"`, 1))
	h := newHarness(t, dir)
	srv := fm.NewChatCompletions(fm.Script{Turns: []fm.Turn{call("statewright_transition", map[string]any{"event": "DELEGATE"})}})
	defer srv.Close()
	cfg := h.config(srv, filepath.Join(h.ws.Root, ".statewright/workflows/parent.json"), "orchestrate", "")
	cfg.Registry = agent.DefaultRegistry(h.ws.Root)
	res, err := agent.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != events.OutcomeFailed || res.FinalState != "failed" || srv.Served() != 1 {
		t.Fatalf("result %+v (%d model calls)", res, srv.Served())
	}
}
