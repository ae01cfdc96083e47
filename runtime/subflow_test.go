package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/store"
)

const parentWorkflow = `{"id":"parent","initial":"work","states":{
 "work":{"allowed_tools":["Read","Write","Edit","Bash"],"on":{
   "CHECK":{"invoke":"audit","on_complete":"ship","on_fail":"fix","input":{"scope":"all"}},
   "CHECK_BARE":{"invoke":"audit","on_complete":"ship"}}},
 "ship":{"allowed_tools":["Read","Write"],"on":{"DONE":"done"}},
 "fix":{"allowed_tools":["Read","Write"],"on":{"RETRY":"work"}},
 "done":{"type":"final"}}}`

const auditWorkflow = `{"id":"audit","initial":"look","context":{"n":1},"states":{
 "look":{"allowed_tools":["Read","Grep"],"on":{"OK":"passed","BAD":"failed","DEEPER":{"invoke":"audit","on_complete":"passed","on_fail":"failed"},
   "DEEPER_BARE":{"invoke":"audit","on_complete":"passed"}}},
 "passed":{"type":"final"},
 "failed":{"type":"final"}}}`

const forkWorkflow = `{"id":"fk","initial":"start","states":{
 "start":{"on":{"SPLIT":{"fork":{"branches":{
     "lint":{"initial":"lint_run","terminal":"lint_done"},
     "types":{"initial":"types_run","terminal":"types_done"}},
   "join":"JOIN","on_complete":"merged","on_fail":"broken"}}}},
 "lint_run":{"allowed_tools":["Read"],"on":{"LINTED":"lint_done","LINT_FAIL":"failed"}},
 "lint_done":{"type":"final"},
 "types_run":{"allowed_tools":["Read","Write"],"on":{"TYPED":"types_done","TYPE_FAIL":"failed"}},
 "types_done":{"type":"final"},
 "merged":{"on":{"DONE":"done"}},
 "broken":{"on":{"DONE":"done"}},
 "failed":{"type":"final"},
 "done":{"type":"final"}}}`

// step is one transition of a scenario and where the run must be after it.
type step struct {
	event  string
	state  string       // the run's state afterwards
	depth  int          // its stack depth afterwards
	status store.Status // its status afterwards ("" : active)
	err    string       // a refusal containing this ("" : accepted)
}

func TestSubflowScenarios(t *testing.T) {
	tests := []struct {
		name     string
		workflow string // file in .statewright/workflows/ to start
		files    map[string]string
		maxDepth int
		steps    []step
		// check inspects the run at the end (optional).
		check func(t *testing.T, run *store.Run, ctx map[string]any)
	}{
		{name: "invoke completes to on_complete", workflow: "parent.json",
			steps: []step{{event: "CHECK", state: "look", depth: 1}, {event: "OK", state: "ship"}, {event: "DONE", state: "done", status: store.StatusCompleted}},
			check: func(t *testing.T, run *store.Run, ctx map[string]any) {
				res := ctx[SubflowsKey].(map[string]any)["audit"].(map[string]any)
				if res["outcome"] != OutcomeCompleted || res["final_state"] != "passed" {
					t.Errorf("result = %v", res)
				}
				child := res["context"].(map[string]any)
				if child["scope"] != "all" || child["n"] != float64(1) {
					t.Errorf("the child's context (its own plus the invoke's input) = %v", child)
				}
			}},
		{name: "invoke fails to on_fail", workflow: "parent.json",
			steps: []step{{event: "CHECK", state: "look", depth: 1}, {event: "BAD", state: "fix"}, {event: "RETRY", state: "work"}}},
		{name: "failure without on_fail returns to the invoking state", workflow: "parent.json",
			steps: []step{{event: "CHECK_BARE", state: "look", depth: 1}, {event: "BAD", state: "work"}}},
		{name: "the parent's events are not the child's", workflow: "parent.json",
			steps: []step{{event: "CHECK", state: "look", depth: 1}, {event: "DONE", state: "look", depth: 1, err: "no transition"}}},
		{name: "nesting is bounded: too deep fails through the levels' on_fail", workflow: "parent.json", maxDepth: 2,
			// Depth 3 would exceed 2: the depth-2 level fails to its
			// on_fail (a failure state), which fails the depth-1 level,
			// which sends the root to its on_fail.
			steps: []step{{event: "CHECK", state: "look", depth: 1}, {event: "DEEPER", state: "look", depth: 2}, {event: "DEEPER", state: "fix"}}},
		{name: "the default bound is DefaultMaxDepth", workflow: "parent.json",
			steps: []step{{event: "CHECK", state: "look", depth: 1}, {event: "DEEPER", state: "look", depth: 2}, {event: "DEEPER", state: "look", depth: 3},
				{event: "DEEPER", state: "fix"}}},
		{name: "too deep without on_fail is refused", workflow: "parent.json", maxDepth: 1,
			steps: []step{{event: "CHECK", state: "look", depth: 1}, {event: "DEEPER_BARE", state: "look", depth: 1, err: "max depth 1"}}},
		{name: "fork all runs branches in name order and joins", workflow: "fork.json", files: map[string]string{"fork.json": strings.Replace(forkWorkflow, "JOIN", "all", 1)},
			steps: []step{{event: "SPLIT", state: "lint_run", depth: 1}, {event: "LINTED", state: "types_run", depth: 1}, {event: "TYPED", state: "merged"}},
			check: func(t *testing.T, run *store.Run, ctx map[string]any) {
				br := ctx[BranchesKey].(map[string]any)
				for _, n := range []string{"lint", "types"} {
					if b := br[n].(map[string]any); b["outcome"] != OutcomeCompleted {
						t.Errorf("branch %s = %v", n, b)
					}
				}
			}},
		{name: "fork all fails on the first failed branch", workflow: "fork.json", files: map[string]string{"fork.json": strings.Replace(forkWorkflow, "JOIN", "all", 1)},
			steps: []step{{event: "SPLIT", state: "lint_run", depth: 1}, {event: "LINT_FAIL", state: "broken"}},
			check: func(t *testing.T, run *store.Run, ctx map[string]any) {
				br := ctx[BranchesKey].(map[string]any)
				if br["lint"].(map[string]any)["outcome"] != OutcomeFailed || br["types"].(map[string]any)["outcome"] != OutcomeCancelled {
					t.Errorf("branches = %v", br)
				}
			}},
		{name: "fork any joins on the first completed branch and cancels the rest", workflow: "fork.json", files: map[string]string{"fork.json": strings.Replace(forkWorkflow, "JOIN", "any", 1)},
			steps: []step{{event: "SPLIT", state: "lint_run", depth: 1}, {event: "LINTED", state: "merged"}},
			check: func(t *testing.T, run *store.Run, ctx map[string]any) {
				if b := ctx[BranchesKey].(map[string]any)["types"].(map[string]any); b["outcome"] != OutcomeCancelled {
					t.Errorf("types = %v", b)
				}
			}},
		{name: "fork any tries the next branch after a failure", workflow: "fork.json", files: map[string]string{"fork.json": strings.Replace(forkWorkflow, "JOIN", "any", 1)},
			steps: []step{{event: "SPLIT", state: "lint_run", depth: 1}, {event: "LINT_FAIL", state: "types_run", depth: 1}, {event: "TYPE_FAIL", state: "broken"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, Options{MaxDepth: tt.maxDepth})
			f.workflowFile("parent.json", parentWorkflow)
			f.workflowFile("audit.json", auditWorkflow)
			for n, src := range tt.files {
				f.workflowFile(n, src)
			}
			ctx := context.Background()
			const s = "test:sub"
			if _, err := f.svc.Start(ctx, s, filepath.Join(f.dir, ".statewright", "workflows", tt.workflow), agent); err != nil {
				t.Fatalf("start: %v", err)
			}
			for i, st := range tt.steps {
				_, err := f.svc.Transition(ctx, s, st.event, nil, agent)
				switch {
				case st.err == "" && err != nil:
					t.Fatalf("step %d %s: %v", i, st.event, err)
				case st.err != "" && (err == nil || !strings.Contains(err.Error(), st.err)):
					t.Fatalf("step %d %s: err = %v, want %q", i, st.event, err, st.err)
				}
				run, err := f.st.Runs(ctx, store.RunFilter{SessionKey: s, Limit: 1})
				if err != nil {
					t.Fatal(err)
				}
				r := run[0]
				_, stack, err := readHistory(r)
				if err != nil {
					t.Fatal(err)
				}
				want := st.status
				if want == "" {
					want = store.StatusActive
				}
				if r.State != st.state || len(stack) != st.depth || r.Status != want {
					t.Fatalf("after step %d %s: state %s depth %d status %s; want %s depth %d %s", i, st.event, r.State, len(stack), r.Status, st.state, st.depth, want)
				}
			}
			if tt.check != nil {
				runs, _ := f.st.Runs(ctx, store.RunFilter{SessionKey: s, Limit: 1})
				c, err := decodeContext(runs[0])
				if err != nil {
					t.Fatal(err)
				}
				tt.check(t, runs[0], c)
			}
		})
	}
}

// TestInvokedPhaseIsTheLaw: while a read-only sub-workflow runs, a write
// is denied; after it returns, the parent's phase allows it again.
func TestInvokedPhaseIsTheLaw(t *testing.T) {
	f := newFixture(t, Options{})
	f.workflowFile("audit.json", auditWorkflow)
	ctx := context.Background()
	const s = "test:law"
	if _, err := f.svc.Start(ctx, s, f.workflowFile("parent.json", parentWorkflow), agent); err != nil {
		t.Fatal(err)
	}
	write := func(id string) DecideResult {
		return f.decide(f.call(s, id, "Write", map[string]any{"file_path": filepath.Join(f.dir, "notes.txt"), "content": "x"}))
	}
	if d := write("w1"); d.Verdict != policy.Allow {
		t.Fatalf("write in the parent's work phase: %+v", d)
	}
	res, err := f.svc.Transition(ctx, s, "CHECK", nil, agent)
	if err != nil {
		t.Fatal(err)
	}
	if res.To != "look" || res.Depth != 1 || len(res.Subflows) != 1 || res.Subflows[0].Action != "enter" || res.Subflows[0].Workflow != "audit" {
		t.Fatalf("CHECK = %+v", res)
	}
	d := write("w2")
	if d.Verdict != policy.Deny || d.State != "look" || !strings.Contains(d.Reason, `returns to "parent" at ship`) {
		t.Fatalf("write while the read-only sub-workflow is the phase: %+v", d)
	}
	v, err := f.svc.Status(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if v.Workflow != "audit" || len(v.Stack) != 1 || v.Stack[0].Workflow != "parent" || v.Stack[0].State != "work" || v.Stack[0].Invoked != "audit" {
		t.Fatalf("view = workflow %s stack %+v", v.Workflow, v.Stack)
	}
	if n := v.SubflowNote(); !strings.Contains(n, `sub-workflow "audit"`) || !strings.Contains(n, `"parent" at ship (fix if it fails)`) {
		t.Errorf("SubflowNote = %q", n)
	}
	res, err = f.svc.Transition(ctx, s, "OK", nil, agent)
	if err != nil {
		t.Fatal(err)
	}
	if res.To != "ship" || res.Depth != 0 || res.Final || len(res.Subflows) != 1 || res.Subflows[0].Outcome != OutcomeCompleted {
		t.Fatalf("OK = %+v", res)
	}
	if d := write("w3"); d.Verdict != policy.Allow || d.State != "ship" {
		t.Fatalf("write after the sub-workflow returned: %+v", d)
	}
}

// TestClosureIsSnapshotted: the invoked workflow is the one read at start
// (docs/runtime.md); an edit of its file changes nothing for the run, and
// the closure is part of the run's digest.
func TestClosureIsSnapshotted(t *testing.T) {
	f := newFixture(t, Options{})
	audit := f.workflowFile("audit.json", auditWorkflow)
	parent := f.workflowFile("parent.json", parentWorkflow)
	ctx := context.Background()
	v1, err := f.svc.Start(ctx, "test:a", parent, human)
	if err != nil {
		t.Fatal(err)
	}
	// An agent (or anyone) opens the child's phase after the start.
	if err := os.WriteFile(audit, []byte(strings.Replace(auditWorkflow, `["Read","Grep"]`, `["Read","Grep","Write"]`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Transition(ctx, "test:a", "CHECK", nil, agent); err != nil {
		t.Fatal(err)
	}
	d := f.decide(f.call("test:a", "w", "Write", map[string]any{"file_path": filepath.Join(f.dir, "x"), "content": "x"}))
	if d.Verdict != policy.Deny {
		t.Fatalf("the edited child file changed the running law: %+v", d)
	}
	v2, err := f.svc.Start(ctx, "test:b", parent, human)
	if err != nil {
		t.Fatal(err)
	}
	if v1.Run.SnapshotDigest == v2.Run.SnapshotDigest {
		t.Fatal("a different child did not change the run's workflow digest")
	}
	// The law protects the child file too.
	d = f.decide(f.call("test:b", "w", "Write", map[string]any{"file_path": audit, "content": "{}"}))
	if d.Verdict != policy.Deny {
		t.Fatalf("writing the invoked workflow's file: %+v", d)
	}
}

func TestStartRefusesABadClosure(t *testing.T) {
	tests := []struct {
		name, parent string
		files        map[string]string
		by           Actor
		want         error
		msg          string
	}{
		{"missing child", parentWorkflow, nil, human, ErrWorkflow, `no bundled workflow named "audit"`},
		{"child does not validate", parentWorkflow, map[string]string{"audit.json": `{"id":"audit","initial":"nowhere","states":{"a":{"type":"final"}}}`}, human, ErrWorkflow, "sub-workflow"},
		{"agent may not start a child outside the project's workflows", strings.Replace(parentWorkflow, `"invoke":"audit"`, `"invoke":"../../outside.json"`, 2),
			map[string]string{"../../outside.json": auditWorkflow}, agent, ErrNotAllowed, "does not let agents start"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, Options{})
			for n, src := range tt.files {
				f.workflowFile(n, src)
			}
			_, err := f.svc.Start(context.Background(), "test:x", f.workflowFile("parent.json", tt.parent), tt.by)
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("start = %v; want %v containing %q", err, tt.want, tt.msg)
			}
		})
	}
}

func TestInvokeBehindAnApproval(t *testing.T) {
	f := newFixture(t, Options{})
	f.workflowFile("audit.json", auditWorkflow)
	gated := strings.Replace(parentWorkflow, `"CHECK_BARE":{"invoke":"audit","on_complete":"ship"}`, `"GATE":{"target":"ship","requires_approval":true}`, 1)
	gated = strings.Replace(gated, `"ship":{"allowed_tools":["Read","Write"],"on":{"DONE":"done"}}`,
		`"ship":{"allowed_tools":["Read","Write"],"on":{"DONE":"done","AUDIT":{"invoke":"audit","on_complete":"done"}}}`, 1)
	ctx := context.Background()
	if _, err := f.svc.Start(ctx, "test:g", f.workflowFile("parent.json", gated), human); err != nil {
		t.Fatal(err)
	}
	res, err := f.svc.Transition(ctx, "test:g", "GATE", nil, agent)
	if err != nil || !res.Parked {
		t.Fatalf("GATE = %+v, %v", res, err)
	}
	if res, err = f.svc.Approve(ctx, "test:g", res.ApprovalID, human); err != nil || res.To != "ship" {
		t.Fatalf("approve = %+v, %v", res, err)
	}
	if res, err = f.svc.Transition(ctx, "test:g", "AUDIT", nil, agent); err != nil || res.To != "look" || res.Depth != 1 {
		t.Fatalf("AUDIT = %+v, %v", res, err)
	}
	if res, err = f.svc.Transition(ctx, "test:g", "OK", nil, agent); err != nil || res.To != "done" || !res.Final {
		t.Fatalf("OK = %+v, %v", res, err)
	}
	evs := f.events("test:g", store.KindTransition)
	var kinds []string
	for _, e := range evs {
		var d map[string]any
		_ = json.Unmarshal(e.Data, &d)
		if sf, ok := d["subflow"].(string); ok {
			kinds = append(kinds, sf+":"+e.State)
		}
	}
	if strings.Join(kinds, ",") != "enter:look,return:done" {
		t.Errorf("sub-workflow events = %v", kinds)
	}
}
