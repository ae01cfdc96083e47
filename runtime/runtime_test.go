package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/sqlite"
	"github.com/statewright-go/statewright/testreport"
)

// testWorkflow exercises approvals, limits, interrupts and $return.
const testWorkflow = `{
  "id": "rt",
  "initial": "plan",
  "context": {"ticket": "X-1"},
  "interrupts": {"sec": {"trigger": {"file_pattern": "secrets/**"}, "target": "review"}},
  "states": {
    "plan": {
      "allowed_tools": ["Read", "Bash", "Edit", "Write", "Grep"],
      "allowed_commands": ["go test", "ls"],
      "max_iterations": 3,
      "on": {
        "GO": "build",
        "SHIP": {"target": "done", "requires_approval": true, "approval_message": "ship it?"}
      }
    },
    "build": {
      "allowed_tools": ["Read", "Edit", "Write", "Bash"],
      "allowed_commands": ["go test", "ls"],
      "on": {"DONE": "done"}
    },
    "review": {
      "allowed_tools": ["Read"],
      "on": {"BACK": "$return"}
    },
    "done": {"type": "final", "instructions": "finished"}
  }
}`

var (
	human = Actor{Kind: ActorHuman, Channel: "test"}
	agent = Actor{Kind: ActorAgent, Channel: "test"}
)

type fixture struct {
	t    *testing.T
	dir  string
	path string
	st   *sqlite.Store
	svc  *Service
	now  time.Time
}

func newFixture(t *testing.T, opts Options) *fixture {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{t: t, dir: dir, path: filepath.Join(dir, "state.db"), now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	st, err := sqlite.Open(context.Background(), f.path, sqlite.Options{Now: func() time.Time { return f.now }})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	f.st = st
	if opts.ProjectDir == "" {
		opts.ProjectDir = dir
	}
	if opts.Now == nil {
		opts.Now = func() time.Time { return f.now }
	}
	f.svc = New(st, opts)
	return f
}

// workflowFile writes src under the project's .statewright/workflows.
func (f *fixture) workflowFile(name, src string) string {
	f.t.Helper()
	p := filepath.Join(f.dir, ".statewright", "workflows", name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		f.t.Fatal(err)
	}
	return p
}

func (f *fixture) start(session string) *RunView {
	f.t.Helper()
	v, err := f.svc.Start(context.Background(), session, f.workflowFile("rt.json", testWorkflow), human)
	if err != nil {
		f.t.Fatalf("start: %v", err)
	}
	return v
}

func (f *fixture) call(session, id, tool string, input any) ToolCall {
	b, err := json.Marshal(input)
	if err != nil {
		f.t.Fatal(err)
	}
	return ToolCall{Session: session, Actor: agent, Call: policy.ToolCall{
		Harness: policy.ClaudeCode, Tool: tool, Input: b, Cwd: f.dir, ProjectDir: f.dir, ToolUseID: id}}
}

func (f *fixture) decide(c ToolCall) DecideResult {
	f.t.Helper()
	r, err := f.svc.Decide(context.Background(), c)
	if err != nil {
		f.t.Fatalf("decide %s: %v", c.Call.Tool, err)
	}
	return r
}

func (f *fixture) result(c ToolCall, failed bool, code *int) {
	f.t.Helper()
	err := f.svc.RecordResult(context.Background(), ToolResult{Session: c.Session, ToolUseID: c.Call.ToolUseID, Call: c.Call, Failed: failed, ExitCode: code, Actor: agent})
	if err != nil {
		f.t.Fatalf("record result: %v", err)
	}
}

func (f *fixture) live(session string) *store.Run {
	f.t.Helper()
	r, err := f.st.LiveRun(context.Background(), session)
	if err != nil {
		f.t.Fatalf("live run %s: %v", session, err)
	}
	return r
}

func (f *fixture) events(session string, kind store.EventKind) []store.Event {
	f.t.Helper()
	evs, err := f.st.Events(context.Background(), store.EventFilter{SessionKey: session, Kinds: []store.EventKind{kind}})
	if err != nil {
		f.t.Fatal(err)
	}
	return evs
}

func intp(i int) *int { return &i }

func TestNewDoesNotPanic(t *testing.T) {
	f := newFixture(t, Options{})
	if f.svc.opts.ApprovalTTL != DefaultApprovalTTL {
		t.Errorf("ApprovalTTL = %v, want %v", f.svc.opts.ApprovalTTL, DefaultApprovalTTL)
	}
	for _, p := range []string{f.st.Path(), f.st.Path() + "-wal", f.st.Path() + "-shm", f.st.Path() + ".lock"} {
		if !slices.Contains(f.svc.opts.Policy.ProtectedPaths, p) {
			t.Errorf("%s is not protected: %v", p, f.svc.opts.Policy.ProtectedPaths)
		}
	}
	// And the law enforces it, also while dormant.
	for _, p := range []string{f.st.Path(), f.st.Path() + "-wal", f.st.Path() + ".lock"} {
		r := f.decide(f.call("s", "w-"+filepath.Base(p), "Write", map[string]any{"file_path": p, "content": ""}))
		if r.Verdict != policy.Deny || r.Rule != policy.RuleSelfProtect {
			t.Errorf("write %s = %+v, want self-protect", p, r)
		}
	}
}

func TestStartAndStatus(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := context.Background()
	v, err := f.svc.Start(ctx, "claude-code:s1", "tdd", human)
	if err != nil {
		t.Fatalf("start tdd: %v", err)
	}
	if v.Run.State != "red" || v.Run.Status != store.StatusActive || v.Run.WorkflowSource != "template:tdd" || v.Run.WorkflowID != "tdd" {
		t.Fatalf("run = %+v", v.Run)
	}
	if v.Run.SnapshotDigest == "" || len(v.Run.Snapshot) == 0 {
		t.Errorf("snapshot not stored")
	}
	if v.MaxIterations == nil || *v.MaxIterations != 25 || !slices.Contains(v.AllowedTools, "Bash") || v.Instructions == "" {
		t.Errorf("view = %+v", v)
	}
	var evs []string
	for _, e := range v.NextEvents {
		evs = append(evs, e.Event)
	}
	if !slices.Equal(evs, []string{"FAIL", "TEST_FAILS"}) {
		t.Errorf("next events = %v", evs)
	}
	if _, err := f.svc.Start(ctx, "claude-code:s1", "bugfix", human); !errors.Is(err, ErrRunActive) {
		t.Errorf("second start: err = %v, want ErrRunActive", err)
	}
	s, err := f.svc.Status(ctx, "claude-code:s1")
	if err != nil || s.Run.State != "red" {
		t.Fatalf("status = %+v, %v", s, err)
	}
	if _, err := f.svc.Status(ctx, "claude-code:none"); !errors.Is(err, ErrNoRun) {
		t.Errorf("status of an empty session: err = %v, want ErrNoRun", err)
	}
	if n := len(f.events("claude-code:s1", store.KindRun)); n != 1 {
		t.Errorf("run events = %d, want 1", n)
	}
	tr := f.events("claude-code:s1", store.KindTransition)
	if len(tr) != 1 || tr[0].State != "red" {
		t.Errorf("transition events = %+v", tr)
	}
}

func TestStartRefusals(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := context.Background()
	outside := filepath.Join(f.dir, "elsewhere.json")
	if err := os.WriteFile(outside, []byte(testWorkflow), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := f.workflowFile("bad.json", `{"id": "bad", "initial": "nowhere", "states": {"a": {"type": "final"}}}`)
	inside := f.workflowFile("rt.json", testWorkflow)
	tests := []struct {
		name, workflow string
		by             Actor
		want           error
	}{
		{"agent, file outside .statewright/workflows", outside, agent, ErrNotAllowed},
		{"agent, missing file", filepath.Join(f.dir, ".statewright", "workflows", "nope.json"), agent, ErrNotAllowed},
		{"human, invalid workflow", bad, human, ErrWorkflow},
		{"human, unknown name", "no-such-template", human, ErrWorkflow},
		{"agent, invalid workflow in the project dir", bad, agent, ErrWorkflow},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.svc.Start(ctx, fmt.Sprintf("s%d", i), tt.workflow, tt.by)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
	for _, wf := range []string{"bugfix", inside} {
		if _, err := f.svc.Start(ctx, "agent-"+filepath.Base(wf), wf, agent); err != nil {
			t.Errorf("agent start %s: %v", wf, err)
		}
	}
	// A human may start a file anywhere.
	if _, err := f.svc.Start(ctx, "human", outside, human); err != nil {
		t.Errorf("human start outside: %v", err)
	}
}

func TestDecideIdempotent(t *testing.T) {
	f := newFixture(t, Options{})
	f.start("s")
	c := f.call("s", "tu1", "Read", map[string]any{"file_path": filepath.Join(f.dir, "a.go")})
	r1 := f.decide(c)
	r2 := f.decide(c)
	if r1.Verdict != policy.Allow || r1.Replayed || !r1.Enforced || r1.State != "plan" {
		t.Errorf("first = %+v", r1)
	}
	if !r2.Replayed || r2.Verdict != r1.Verdict || r2.Rule != r1.Rule || r2.Reason != r1.Reason {
		t.Errorf("second = %+v, want a replay of %+v", r2, r1)
	}
	if it := f.live("s").Iterations; it != 1 {
		t.Errorf("iterations = %d, want 1", it)
	}
	evs := f.events("s", store.KindDecision)
	if len(evs) != 1 || evs[0].Decision != "allow" || evs[0].ToolUseID != "tu1" || evs[0].InputDigest == "" || evs[0].Rule != "allow" {
		t.Errorf("decision events = %+v", evs)
	}
}

// A tool_use_id reused for a different call must not replay the first
// call's allow.
func TestDecideReusedIDOtherCall(t *testing.T) {
	f := newFixture(t, Options{})
	f.start("s")
	c := f.call("s", "tu1", "Read", map[string]any{"file_path": filepath.Join(f.dir, "a.go")})
	if r := f.decide(c); r.Verdict != policy.Allow {
		t.Fatalf("first = %+v", r)
	}
	c2 := f.call("s", "tu1", "Write", map[string]any{"file_path": filepath.Join(f.dir, "a.go"), "content": "x"})
	r, err := f.svc.Decide(context.Background(), c2)
	if err == nil && (r.Verdict == policy.Allow || r.Replayed) {
		t.Fatalf("reused tool_use_id for another call = %+v, want an error or a fresh deny", r)
	}
	if err == nil {
		t.Fatalf("reused tool_use_id: no error, got %+v", r)
	}
}

func TestDecideDormant(t *testing.T) {
	tests := []struct {
		name    string
		require bool
		tool    string
		input   map[string]any
		verdict policy.Verdict
		rule    policy.Rule
	}{
		{"read allowed", false, "Read", map[string]any{"file_path": "/tmp/x"}, policy.Allow, policy.RuleDormant},
		{"require-workflow denies", true, "Read", map[string]any{"file_path": "/tmp/x"}, policy.Deny, policy.RuleNoWorkflow},
		{"self-protect while dormant", false, "Write", map[string]any{"file_path": ".claude/settings.json", "content": "{}"}, policy.Deny, policy.RuleSelfProtect},
		{"start allowed", true, "mcp__statewright__start_workflow", map[string]any{"workflow": "tdd"}, policy.Allow, policy.RuleControlStart},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, Options{Policy: policy.Options{RequireWorkflow: tt.require}})
			r := f.decide(f.call("s", "tu", tt.tool, tt.input))
			if r.Verdict != tt.verdict || r.Rule != tt.rule || r.State != "" {
				t.Fatalf("decision = %+v, want %v/%v", r, tt.verdict, tt.rule)
			}
			evs := f.events("s", store.KindDecision)
			if len(evs) != 1 || evs[0].RunID != "" || evs[0].Decision != tt.verdict.String() {
				t.Fatalf("events = %+v", evs)
			}
		})
	}
}

func TestMaxIterations(t *testing.T) {
	f := newFixture(t, Options{})
	f.start("s")
	for i := range 3 {
		r := f.decide(f.call("s", fmt.Sprint("r", i), "Read", map[string]any{"file_path": "a"}))
		if r.Verdict != policy.Allow {
			t.Fatalf("call %d: %+v", i, r)
		}
	}
	r := f.decide(f.call("s", "r3", "Read", map[string]any{"file_path": "a"}))
	if r.Verdict != policy.Deny || r.Rule != policy.RuleMaxIterations || !slices.Contains(r.NextEvents, "GO") {
		t.Fatalf("fourth call = %+v, want max-iterations", r)
	}
	if it := f.live("s").Iterations; it != 4 {
		t.Errorf("iterations = %d, want 4 (denied calls count)", it)
	}
	// A transition resets the count.
	if _, err := f.svc.Transition(context.Background(), "s", "GO", nil, agent); err != nil {
		t.Fatal(err)
	}
	if run := f.live("s"); run.Iterations != 0 || run.State != "build" {
		t.Errorf("after GO: state %s, iterations %d", run.State, run.Iterations)
	}
}

func TestApprovals(t *testing.T) {
	f := newFixture(t, Options{ApprovalTTL: time.Hour})
	ctx := context.Background()
	f.start("s")
	tr, err := f.svc.Transition(ctx, "s", "SHIP", map[string]any{"note": "ready"}, agent)
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Parked || tr.ApprovalID == "" || tr.From != "plan" || tr.To != "done" || tr.Message != "ship it?" {
		t.Fatalf("transition = %+v", tr)
	}
	run := f.live("s")
	if run.Status != store.StatusAwaitingApproval || run.State != "plan" || run.PendingApproval == nil ||
		run.PendingApproval.ID != tr.ApprovalID || !run.PendingApproval.ExpiresAt.Equal(f.now.Add(time.Hour)) {
		t.Fatalf("parked run = %+v", run)
	}
	// The agent keeps the phase's tools, but transitions are refused.
	if r := f.decide(f.call("s", "x1", "Read", map[string]any{"file_path": "a"})); r.Verdict != policy.Allow {
		t.Errorf("read while parked = %+v", r)
	}
	if r := f.decide(f.call("s", "x2", "mcp__statewright__transition", map[string]any{"event": "GO"})); r.Verdict != policy.Deny || r.Rule != policy.RuleApprovalPending {
		t.Errorf("transition tool while parked = %+v", r)
	}
	if _, err := f.svc.Transition(ctx, "s", "GO", nil, agent); !errors.Is(err, ErrApprovalPending) {
		t.Errorf("transition while parked: %v", err)
	}
	// Agents cannot approve or reject; the refusal is logged.
	if _, err := f.svc.Approve(ctx, "s", tr.ApprovalID, agent); !errors.Is(err, ErrNotAllowed) {
		t.Errorf("agent approve: %v", err)
	}
	if err := f.svc.Reject(ctx, "s", tr.ApprovalID, "no", agent); !errors.Is(err, ErrNotAllowed) {
		t.Errorf("agent reject: %v", err)
	}
	if n := len(f.events("s", store.KindAdmin)); n != 2 {
		t.Errorf("refusal events = %d, want 2", n)
	}
	if _, err := f.svc.Approve(ctx, "s", "apr_wrong", human); !errors.Is(err, ErrNoApproval) {
		t.Errorf("wrong id: %v", err)
	}
	// Decisions moved the revision; the approval stays valid.
	res, err := f.svc.Approve(ctx, "s", tr.ApprovalID, human)
	if err != nil {
		t.Fatalf("approve: %v", err)
	}
	if res.To != "done" || !res.Final {
		t.Errorf("approve = %+v", res)
	}
	if _, err := f.st.LiveRun(ctx, "s"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the completed run is still live: %v", err)
	}
	runs, _ := f.st.Runs(ctx, store.RunFilter{SessionKey: "s"})
	if len(runs) != 1 || runs[0].Status != store.StatusCompleted || runs[0].State != "done" || runs[0].PendingApproval != nil {
		t.Fatalf("runs = %+v", runs)
	}
	var ctxm map[string]any
	if err := json.Unmarshal(runs[0].Context, &ctxm); err != nil {
		t.Fatal(err)
	}
	if d, _ := ctxm["data"].(map[string]any); d["note"] != "ready" || ctxm["ticket"] != "X-1" || ctxm[pendingKey] != nil || ctxm["runtime"] != nil {
		t.Errorf("context after approval = %v", ctxm)
	}
	var granted bool
	for _, e := range f.events("s", store.KindApproval) {
		var d map[string]any
		json.Unmarshal(e.Data, &d)
		if d["action"] == "granted" {
			a, _ := d["actor"].(map[string]any)
			granted = a["kind"] == "human" && a["channel"] == "test"
		}
	}
	if !granted {
		t.Errorf("no granted approval event naming the human")
	}
}

func TestApprovalExpiryAndReject(t *testing.T) {
	f := newFixture(t, Options{ApprovalTTL: time.Minute})
	ctx := context.Background()
	f.start("s")
	tr, err := f.svc.Transition(ctx, "s", "SHIP", nil, agent)
	if err != nil {
		t.Fatal(err)
	}
	f.now = f.now.Add(2 * time.Minute)
	if _, err := f.svc.Approve(ctx, "s", tr.ApprovalID, human); !errors.Is(err, ErrNoApproval) {
		t.Fatalf("expired approve: %v", err)
	}
	if run := f.live("s"); run.Status != store.StatusActive || run.PendingApproval != nil || run.State != "plan" {
		t.Errorf("after expiry: %+v", run)
	}
	tr, err = f.svc.Transition(ctx, "s", "SHIP", nil, agent)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.svc.Reject(ctx, "s", tr.ApprovalID, "not yet", human); err != nil {
		t.Fatal(err)
	}
	if run := f.live("s"); run.Status != store.StatusActive || run.PendingApproval != nil || run.State != "plan" {
		t.Errorf("after reject: %+v", run)
	}
	if _, err := f.svc.Approve(ctx, "s", tr.ApprovalID, human); !errors.Is(err, ErrNoApproval) {
		t.Errorf("approve after reject: %v", err)
	}
}

// report is the structured evidence a runner wrapper hands over for a go
// test run.
func report(code int, c testreport.Counts, narrowedBy ...string) *testreport.Evidence {
	p := testreport.Plan{Runner: testreport.GoTest, Format: testreport.FormatGoJSON, Narrowed: len(narrowedBy) > 0, NarrowedBy: narrowedBy}
	ev := p.Evidence(code, c, nil)
	return &ev
}

func (f *fixture) resultReport(c ToolCall, code int, rep *testreport.Evidence) {
	f.t.Helper()
	err := f.svc.RecordResult(context.Background(), ToolResult{Session: c.Session, ToolUseID: c.Call.ToolUseID, Call: c.Call,
		Failed: code != 0, ExitCode: &code, Actor: agent, TestReport: rep})
	if err != nil {
		f.t.Fatalf("record result: %v", err)
	}
}

func TestEvidenceGuardsTDD(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := context.Background()
	if _, err := f.svc.Start(ctx, "s", "tdd", human); err != nil {
		t.Fatal(err)
	}
	// No test run yet: the guard fails, whatever the agent claims.
	_, err := f.svc.Transition(ctx, "s", "TEST_FAILS", map[string]any{"runtime": map[string]any{"last_test": map[string]any{"passed": false}}}, agent)
	if !errors.Is(err, ErrTransition) {
		t.Fatalf("TEST_FAILS without evidence: %v", err)
	}
	// A failing run without a structured report proves nothing either.
	gotest := f.call("s", "t1", "Bash", map[string]any{"command": "go test ./..."})
	if r := f.decide(gotest); r.Verdict != policy.Allow {
		t.Fatalf("go test = %+v", r)
	}
	f.result(gotest, true, intp(1))
	run := f.live("s")
	var ev evidence
	if err := json.Unmarshal(run.Evidence, &ev); err != nil {
		t.Fatal(err)
	}
	if ev.LastTest == nil || ev.LastTest.Passed || ev.LastTest.ExitCode != 1 || ev.LastTest.Reason != NoReportReason || ev.LastCommand.Program != "go" {
		t.Fatalf("evidence = %s", run.Evidence)
	}
	if _, err := f.svc.Transition(ctx, "s", "TEST_FAILS", nil, agent); !errors.Is(err, ErrTransition) {
		t.Fatalf("TEST_FAILS after a run without a report: %v", err)
	}
	red := f.call("s", "t1b", "Bash", map[string]any{"command": "go test -run TestNew ./..."})
	f.decide(red)
	f.resultReport(red, 1, report(1, testreport.Counts{Run: 1, Failed: 1}, "argv -run TestNew"))
	sv, err := f.svc.Status(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if lt, _ := sv.Runtime["last_test"].(map[string]any); lt["passed"] != false || lt["tests_run"] != int64(1) || lt["narrowed"] != true ||
		lt["narrowed_by"] != "argv -run TestNew" || lt["report"] != "go-json" || sv.Runtime["iterations"] != int64(2) {
		t.Errorf("status runtime = %v", sv.Runtime)
	}
	if _, err := f.svc.Transition(ctx, "s", "TEST_FAILS", nil, agent); err != nil {
		t.Fatalf("TEST_FAILS with a failed run: %v", err)
	}
	run = f.live("s")
	if run.State != "green" || run.Evidence != nil || run.Iterations != 0 {
		t.Fatalf("after TEST_FAILS: state %s evidence %s iterations %d", run.State, run.Evidence, run.Iterations)
	}
	// Evidence is per state: the failed run of red does not carry over.
	if _, err := f.svc.Transition(ctx, "s", "TESTS_PASS", nil, agent); !errors.Is(err, ErrTransition) {
		t.Fatalf("TESTS_PASS without a run in green: %v", err)
	}
	for i, tc := range []struct {
		cmd string
		rep *testreport.Evidence
		ok  bool
	}{
		{"go test ./...", nil, false}, // exit 0, but no report
		{"go test -run NoSuchTest ./...", report(0, testreport.Counts{}, "argv -run NoSuchTest"), false},
		{"go test ./...", report(0, testreport.Counts{}), false}, // zero tests, not narrowed
		{"go test -short ./...", report(0, testreport.Counts{Run: 3, Passed: 3}, "argv -short"), false},
		{"go test ./...", report(0, testreport.Counts{Run: 4, Passed: 4}), true},
	} {
		c := f.call("s", fmt.Sprintf("t2-%d", i), "Bash", map[string]any{"command": tc.cmd})
		f.decide(c)
		code := 0
		if tc.rep == nil {
			f.result(c, false, nil)
		} else {
			f.resultReport(c, code, tc.rep)
		}
		_, err := f.svc.Transition(ctx, "s", "TESTS_PASS", nil, agent)
		if tc.ok != (err == nil) {
			t.Fatalf("TESTS_PASS after %q (%+v): %v", tc.cmd, tc.rep, err)
		}
	}
	if run := f.live("s"); run.State != "refactor" {
		t.Errorf("state = %s", run.State)
	}
}

func TestShellEvidence(t *testing.T) {
	tests := []struct {
		cmd      string
		code     int
		program  string
		test     bool
		lastTest *testEvidence
	}{
		{"go test ./...", 0, "go", true, &testEvidence{ExitCode: 0, Runner: "go test", Reason: NoReportReason}},
		{"pytest -x", 2, "pytest", true, &testEvidence{ExitCode: 2, Runner: "pytest", Reason: NoReportReason}},
		{"timeout 60 cargo test", 0, "cargo", true, &testEvidence{ExitCode: 0, Runner: "cargo test", Reason: NoReportReason}},
		{"go test -run X ./...", 0, "go", true, &testEvidence{ExitCode: 0, Runner: "go test", Narrowed: true, NarrowedBy: "argv -run X", Reason: NoReportReason}},
		{"go test ./... || true", 0, "go", false, nil},
		{"go test ./... | tee log", 0, "go", false, nil},
		{"go test ./... &", 0, "go", false, nil},
		{"! go test ./...", 0, "go", false, nil}, // exit 0 means the tests failed
		{"{ ! pytest -x; }", 0, "pytest", false, nil},
		{"go test -exec /bin/true ./...", 0, "go", false, nil}, // runs /bin/true, not the tests
		{"go test -c ./...", 0, "go", false, nil},              // compiles only
		{"pytest --collect-only", 0, "pytest", false, nil},
		{"cargo test --no-run", 0, "cargo", false, nil},
		{"go test -list . ./...", 0, "go", false, nil},
		{"pytest -n 4", 0, "pytest", true, &testEvidence{ExitCode: 0, Runner: "pytest", Reason: NoReportReason}},
		{"ls -la", 0, "ls", false, nil},
		{"cd x && make build", 2, "make", false, nil},
		{"if then (", 0, "", false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			var ev evidence
			test := shellEvidence(&ev, tt.cmd, tt.code, nil)
			if test != tt.test {
				t.Errorf("test = %v, want %v", test, tt.test)
			}
			if tt.program == "" {
				if ev.LastCommand != nil {
					t.Errorf("last_command = %+v for an unparsable command", ev.LastCommand)
				}
				return
			}
			if ev.LastCommand == nil || ev.LastCommand.Program != tt.program || ev.LastCommand.ExitCode != tt.code {
				t.Errorf("last_command = %+v, want %s/%d", ev.LastCommand, tt.program, tt.code)
			}
			if (ev.LastTest == nil) != (tt.lastTest == nil) || ev.LastTest != nil && *ev.LastTest != *tt.lastTest {
				t.Errorf("last_test = %+v, want %+v", ev.LastTest, tt.lastTest)
			}
		})
	}
}

func TestCommandText(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{`{"command": "go test ./..."}`, "go test ./...", true},
		{`{"command": ["bash", "-lc", "go test ./... && ls"]}`, "go test ./... && ls", true},
		{`{"cmd": ["go", "test", "./a b"]}`, "go test './a b'", true},
		{`{"command": 3}`, "", false},
		{`not json`, "", false},
	}
	for _, tt := range tests {
		got, ok := commandText(json.RawMessage(tt.in))
		if got != tt.want || ok != tt.ok {
			t.Errorf("commandText(%s) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestFilesAndInterrupts(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := context.Background()
	f.start("s")
	if _, err := f.svc.Transition(ctx, "s", "GO", nil, agent); err != nil {
		t.Fatal(err)
	}
	a := filepath.Join(f.dir, "a.go")
	edit := f.call("s", "e1", "Edit", map[string]any{"file_path": a, "old_string": "x", "new_string": "y"})
	if r := f.decide(edit); r.Verdict != policy.Allow {
		t.Fatalf("edit = %+v", r)
	}
	run := f.live("s")
	if len(run.FilesEdited) != 0 || run.Counters[reservedPrefix+a] != 1 {
		t.Fatalf("after decide: files %v counters %v (want reserved only)", run.FilesEdited, run.Counters)
	}
	f.result(edit, false, nil)
	f.result(edit, false, nil) // a retried PostToolUse settles once
	run = f.live("s")
	if !slices.Equal(run.FilesEdited, []string{a}) || len(run.Counters) != 0 {
		t.Fatalf("after settle: files %v counters %v", run.FilesEdited, run.Counters)
	}
	if n := len(f.events("s", store.KindResult)); n != 1 {
		t.Errorf("result events = %d, want 1", n)
	}
	// A failed edit releases its reservation and edits nothing.
	b := filepath.Join(f.dir, "b.go")
	failed := f.call("s", "e2", "Write", map[string]any{"file_path": b, "content": "x"})
	f.decide(failed)
	f.result(failed, true, nil)
	run = f.live("s")
	if slices.Contains(run.FilesEdited, b) || len(run.Counters) != 0 || run.Iterations != 2 {
		t.Fatalf("after failed write: files %v counters %v iterations %d", run.FilesEdited, run.Counters, run.Iterations)
	}
	// An edit under secrets/ fires the interrupt once it succeeded.
	sec := f.call("s", "e3", "Write", map[string]any{"file_path": filepath.Join(f.dir, "secrets", "k.txt"), "content": "x"})
	f.decide(sec)
	if run := f.live("s"); run.State != "build" {
		t.Fatalf("interrupt fired before the edit happened: %s", run.State)
	}
	f.result(sec, false, nil)
	run = f.live("s")
	hist, _ := decodeHistory(run)
	if run.State != "review" || len(hist) != 1 || hist[0].Return != "build" || hist[0].Interrupt != "sec" || len(run.FilesEdited) != 0 {
		t.Fatalf("after secret edit: state %s history %v files %v", run.State, hist, run.FilesEdited)
	}
	tr := f.events("s", store.KindTransition)
	var last map[string]any
	json.Unmarshal(tr[len(tr)-1].Data, &last)
	if last["interrupt"] != "sec" || last["to"] != "review" || last["file"] != "secrets/k.txt" {
		t.Errorf("interrupt transition event = %v", last)
	}
	if _, err := f.svc.Transition(ctx, "s", "BACK", nil, agent); err != nil {
		t.Fatal(err)
	}
	if run := f.live("s"); run.State != "build" || run.History != nil {
		t.Errorf("after $return: state %s history %s", run.State, run.History)
	}
}

func TestAuditOnly(t *testing.T) {
	f := newFixture(t, Options{AuditOnly: true})
	f.start("s")
	if !f.live("s").AuditOnly {
		t.Fatal("run not marked audit-only")
	}
	tests := []struct {
		name     string
		tool     string
		input    map[string]any
		verdict  policy.Verdict
		enforced bool
		logged   string
		rule     policy.Rule
	}{
		{"not allowed tool", "WebFetch", map[string]any{"url": "https://x"}, policy.Allow, false, "deny", policy.RuleToolNotAllowed},
		{"allowed tool", "Read", map[string]any{"file_path": "a"}, policy.Allow, false, "allow", policy.RuleAllow},
		{"self-protect enforced", "Write", map[string]any{"file_path": ".claude/settings.json", "content": "{}"}, policy.Deny, true, "deny", policy.RuleSelfProtect},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := fmt.Sprint("a", i)
			r := f.decide(f.call("s", id, tt.tool, tt.input))
			if r.Verdict != tt.verdict || r.Enforced != tt.enforced || r.Rule != tt.rule {
				t.Fatalf("decision = %+v", r)
			}
			evs, _ := f.st.Events(context.Background(), store.EventFilter{ToolUseID: id, Kinds: []store.EventKind{store.KindDecision}})
			if len(evs) != 1 || evs[0].Decision != tt.logged {
				t.Fatalf("logged = %+v, want %s", evs, tt.logged)
			}
		})
	}
}

func TestPauseResumeDeactivateOff(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := context.Background()
	f.start("s")
	if err := f.svc.Pause(ctx, "s", agent); !errors.Is(err, ErrNotAllowed) {
		t.Fatalf("agent pause: %v", err)
	}
	if err := f.svc.Pause(ctx, "s", human); err != nil {
		t.Fatal(err)
	}
	if r := f.decide(f.call("s", "p1", "Read", map[string]any{"file_path": "a"})); r.Verdict != policy.Deny || r.Rule != RulePaused {
		t.Errorf("read while paused = %+v", r)
	}
	if r := f.decide(f.call("s", "p2", "mcp__statewright__get_state", map[string]any{})); r.Verdict != policy.Allow {
		t.Errorf("get_state while paused = %+v", r)
	}
	if _, err := f.svc.Transition(ctx, "s", "GO", nil, agent); !errors.Is(err, ErrPaused) {
		t.Errorf("transition while paused: %v", err)
	}
	if err := f.svc.Resume(ctx, "s", human); err != nil {
		t.Fatal(err)
	}
	if r := f.decide(f.call("s", "p3", "Read", map[string]any{"file_path": "a"})); r.Verdict != policy.Allow {
		t.Errorf("read after resume = %+v", r)
	}
	if err := f.svc.Deactivate(ctx, "s", agent); !errors.Is(err, ErrNotAllowed) {
		t.Errorf("agent deactivate: %v", err)
	}
	f.start("t")
	if _, err := f.svc.Off(ctx, agent); !errors.Is(err, ErrNotAllowed) {
		t.Errorf("agent off: %v", err)
	}
	done, err := f.svc.Off(ctx, human)
	slices.Sort(done)
	if err != nil || !slices.Equal(done, []string{"s", "t"}) {
		t.Fatalf("off = %v, %v", done, err)
	}
	runs, _ := f.svc.Runs(ctx, store.RunFilter{})
	for _, r := range runs {
		if r.Status != store.StatusDeactivated {
			t.Errorf("run %s: %s", r.SessionKey, r.Status)
		}
	}
	if r := f.decide(f.call("s", "p4", "Write", map[string]any{"file_path": "x", "content": ""})); r.Rule != policy.RuleDormant {
		t.Errorf("after deactivate = %+v, want dormant", r)
	}
	hist, err := f.svc.History(ctx, "s")
	if err != nil || len(hist) == 0 {
		t.Fatalf("history: %d, %v", len(hist), err)
	}
	if _, err := f.st.VerifyChain(ctx); err != nil {
		t.Errorf("chain: %v", err)
	}
}

func TestExpiredApprovalReleasesTransitions(t *testing.T) {
	f := newFixture(t, Options{ApprovalTTL: time.Minute})
	ctx := context.Background()
	f.start("s")
	if _, err := f.svc.Transition(ctx, "s", "SHIP", nil, agent); err != nil {
		t.Fatal(err)
	}
	tool := f.call("s", "tt1", "mcp__statewright__transition", map[string]any{"event": "GO"})
	if r := f.decide(tool); r.Rule != policy.RuleApprovalPending {
		t.Fatalf("transition tool while parked = %+v", r)
	}
	f.now = f.now.Add(time.Hour)
	tool.Call.ToolUseID = "tt2"
	if r := f.decide(tool); r.Verdict != policy.Allow || r.Rule != policy.RuleControlTransition {
		t.Fatalf("transition tool after expiry = %+v", r)
	}
	res, err := f.svc.Transition(ctx, "s", "GO", nil, agent)
	if err != nil || res.To != "build" {
		t.Fatalf("transition after expiry = %+v, %v", res, err)
	}
	var actions []string
	for _, e := range f.events("s", store.KindApproval) {
		var d map[string]any
		json.Unmarshal(e.Data, &d)
		actions = append(actions, fmt.Sprint(d["action"]))
	}
	if !slices.Equal(actions, []string{"requested", "expired"}) {
		t.Errorf("approval events = %v", actions)
	}
}

func TestUnprovenActorIsAgent(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := context.Background()
	outside := filepath.Join(f.dir, "x.json")
	if err := os.WriteFile(outside, []byte(testWorkflow), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Start(ctx, "s", outside, Actor{}); !errors.Is(err, ErrNotAllowed) {
		t.Errorf("start by an empty actor: %v", err)
	}
	f.start("s")
	for name, op := range map[string]func() error{
		"pause":      func() error { return f.svc.Pause(ctx, "s", Actor{Channel: "mcp"}) },
		"deactivate": func() error { return f.svc.Deactivate(ctx, "s", Actor{Kind: "root"}) },
	} {
		if err := op(); !errors.Is(err, ErrNotAllowed) {
			t.Errorf("%s by a non-human actor: %v", name, err)
		}
	}
}

func TestDeniedCallLeavesNoEvidence(t *testing.T) {
	f := newFixture(t, Options{})
	f.start("s")
	// "rm" is not in allowed_commands: denied.
	c := f.call("s", "d1", "Bash", map[string]any{"command": "go test ./... ; rm -rf x"})
	if r := f.decide(c); r.Verdict != policy.Deny {
		t.Fatalf("decision = %+v", r)
	}
	f.result(c, false, intp(0))
	if ev := f.live("s").Evidence; ev != nil {
		t.Errorf("evidence from a denied call: %s", ev)
	}
}

func TestStartDefault(t *testing.T) {
	f := newFixture(t, Options{DefaultWorkflow: "tdd"})
	ctx := context.Background()
	v, started, err := f.svc.StartDefault(ctx, "s", agent)
	if err != nil || !started || v.Run.WorkflowID != "tdd" {
		t.Fatalf("StartDefault = %+v, %v, %v", v, started, err)
	}
	if _, started, err := f.svc.StartDefault(ctx, "s", agent); err != nil || started {
		t.Errorf("second StartDefault = %v, %v; want not started, no error", started, err)
	}
	g := newFixture(t, Options{})
	if _, started, err := g.svc.StartDefault(ctx, "s", agent); err != nil || started {
		t.Errorf("StartDefault without a default = %v, %v", started, err)
	}
}

// implicitWorkflow opts in to implicit transitions: editing in "plan" is
// one unguarded step away, in "build".
const implicitWorkflow = `{
  "id": "imp",
  "initial": "plan",
  "meta": {"implicit_transitions": "auto"},
  "states": {
    "plan": {"allowed_tools": ["Read"], "on": {"BUILD": "build"}},
    "build": {"allowed_tools": ["Read", "Edit"], "on": {"DONE": "done"}},
    "done": {"type": "final"}
  }
}`

func TestImplicitTransition(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := context.Background()
	if _, err := f.svc.Start(ctx, "s", f.workflowFile("imp.json", implicitWorkflow), human); err != nil {
		t.Fatal(err)
	}
	f.decide(f.call("s", "r1", "Read", map[string]any{"file_path": "a"}))
	a := filepath.Join(f.dir, "a.go")
	r := f.decide(f.call("s", "e1", "Edit", map[string]any{"file_path": a, "old_string": "x", "new_string": "y"}))
	if r.Verdict != policy.Allow || r.State != "build" {
		t.Fatalf("edit = %+v, want allowed in build", r)
	}
	run := f.live("s")
	if run.State != "build" || run.Iterations != 1 || run.Counters[reservedPrefix+a] != 1 {
		t.Fatalf("run = state %s iterations %d counters %v", run.State, run.Iterations, run.Counters)
	}
	tr := f.events("s", store.KindTransition)
	var d map[string]any
	json.Unmarshal(tr[len(tr)-1].Data, &d)
	if d["event"] != "BUILD" || d["implicit"] != true || d["tool_use_id"] != "e1" {
		t.Errorf("implicit transition event = %v", d)
	}
}

func TestRunWorkflowFileProtected(t *testing.T) {
	f := newFixture(t, Options{})
	v := f.start("s")
	r := f.decide(f.call("s", "w1", "Edit", map[string]any{"file_path": v.Run.WorkflowSource, "old_string": "plan", "new_string": "x"}))
	if r.Verdict != policy.Deny || r.Rule != policy.RuleSelfProtect {
		t.Errorf("edit of the run's workflow file = %+v, want self-protect", r)
	}
}

func TestDecideFailsClosed(t *testing.T) {
	ctx := context.Background()
	t.Run("broken snapshot", func(t *testing.T) {
		f := newFixture(t, Options{})
		err := f.st.Update(ctx, "s", func(tx store.Tx) error {
			return tx.Put(&store.Run{SessionKey: "s", WorkflowID: "x", Snapshot: []byte(`{"id": "x", "initial": "a", "states": {`), State: "a", Status: store.StatusActive})
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.Decide(ctx, f.call("s", "b1", "Read", map[string]any{"file_path": "a"})); !errors.Is(err, ErrWorkflow) {
			t.Errorf("decide on a broken snapshot: %v, want ErrWorkflow", err)
		}
		if n := len(f.events("s", store.KindDecision)); n != 0 {
			t.Errorf("a failed decision left %d events", n)
		}
	})
	t.Run("closed store", func(t *testing.T) {
		f := newFixture(t, Options{})
		f.start("s")
		f.st.Close()
		if _, err := f.svc.Decide(ctx, f.call("s", "c1", "Read", map[string]any{"file_path": "a"})); !errors.Is(err, store.ErrClosed) {
			t.Errorf("decide on a closed store: %v, want store.ErrClosed", err)
		}
	})
	t.Run("no session", func(t *testing.T) {
		f := newFixture(t, Options{})
		if _, err := f.svc.Decide(ctx, f.call("", "n1", "Read", map[string]any{"file_path": "a"})); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("decide without a session: %v", err)
		}
	})
}

// retryStore runs every Update function twice, like an optimistic backend
// retrying after a conflict: the first run's writes are rolled back.
type retryStore struct{ store.Store }

var errRetry = errors.New("retry")

func (r retryStore) Update(ctx context.Context, key string, fn func(tx store.Tx) error) error {
	err := r.Store.Update(ctx, key, func(tx store.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		return errRetry
	})
	if !errors.Is(err, errRetry) {
		return err
	}
	return r.Store.Update(ctx, key, fn)
}

func TestUpdateFunctionsRerun(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := context.Background()
	svc := New(retryStore{f.st}, Options{ProjectDir: f.dir, Now: func() time.Time { return f.now }})
	if _, err := svc.Start(ctx, "s", f.workflowFile("rt.json", testWorkflow), human); err != nil {
		t.Fatal(err)
	}
	c := f.call("s", "r1", "Read", map[string]any{"file_path": "a"})
	if r, err := svc.Decide(ctx, c); err != nil || r.Verdict != policy.Allow || r.Replayed {
		t.Fatalf("decide = %+v, %v", r, err)
	}
	if _, err := svc.Transition(ctx, "s", "NOPE", nil, agent); !errors.Is(err, ErrTransition) {
		t.Fatalf("bad event: %v", err)
	}
	tr, err := svc.Transition(ctx, "s", "SHIP", nil, agent)
	if err != nil || !tr.Parked {
		t.Fatalf("SHIP = %+v, %v", tr, err)
	}
	if _, err := svc.Approve(ctx, "s", tr.ApprovalID, agent); !errors.Is(err, ErrNotAllowed) {
		t.Fatalf("agent approve: %v", err)
	}
	if res, err := svc.Approve(ctx, "s", tr.ApprovalID, human); err != nil || !res.Final {
		t.Fatalf("approve = %+v, %v", res, err)
	}
	runs, _ := f.st.Runs(ctx, store.RunFilter{SessionKey: "s"})
	if len(runs) != 1 || runs[0].Status != store.StatusCompleted {
		t.Fatalf("runs = %+v", runs)
	}
	if n := len(f.events("s", store.KindDecision)); n != 1 {
		t.Errorf("decision events = %d, want 1", n)
	}
	if _, err := f.st.VerifyChain(ctx); err != nil {
		t.Error(err)
	}
}

// TestCompletedRunKeepsFinalStateLaw: a run that reached a final state is
// over, but the session is not set free: every ordinary call is denied in
// the final state (docs/architecture.md, decision pipeline step 5) until a new run starts; read-only
// control tools and starting a new run still work.
func TestCompletedRunKeepsFinalStateLaw(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := context.Background()
	f.start("s")
	if _, err := f.svc.Transition(ctx, "s", "GO", nil, agent); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Transition(ctx, "s", "DONE", nil, agent); err != nil {
		t.Fatal(err)
	}
	runs, err := f.svc.Runs(ctx, store.RunFilter{SessionKey: "s"})
	if err != nil || len(runs) != 1 || runs[0].Status != store.StatusCompleted || runs[0].State != "done" {
		t.Fatalf("runs = %+v, %v; want one completed run in done", runs, err)
	}
	before := runs[0].Revision

	w := f.call("s", "f1", "Write", map[string]any{"file_path": "notes.md", "content": "x\n"})
	if r := f.decide(w); r.Verdict != policy.Deny || r.Rule != policy.RuleFinalState || r.State != "done" {
		t.Errorf("Write after completion = %+v, want final-state deny in done", r)
	}
	if r := f.decide(f.call("s", "f2", "Read", map[string]any{"file_path": "a"})); r.Verdict != policy.Deny || r.Rule != policy.RuleFinalState {
		t.Errorf("Read after completion = %+v, want final-state deny", r)
	}
	if r := f.decide(f.call("s", "f3", "mcp__statewright__statewright_get_state", map[string]any{})); r.Verdict != policy.Allow {
		t.Errorf("get_state after completion = %+v, want allow", r)
	}
	if r := f.decide(f.call("s", "f4", "mcp__statewright__statewright_start", map[string]any{"workflow": "bugfix"})); r.Verdict != policy.Allow {
		t.Errorf("start after completion = %+v, want allow", r)
	}
	runs, _ = f.svc.Runs(ctx, store.RunFilter{SessionKey: "s"})
	if runs[0].Revision != before || runs[0].Iterations != 0 {
		t.Errorf("the ended run was written to: revision %d→%d, iterations %d", before, runs[0].Revision, runs[0].Iterations)
	}

	// A new run governs the session again; a person's deactivate frees it.
	f.start("s")
	if r := f.decide(f.call("s", "f5", "Read", map[string]any{"file_path": "a"})); r.Verdict != policy.Allow {
		t.Errorf("Read in a new run = %+v", r)
	}
	if err := f.svc.Deactivate(ctx, "s", human); err != nil {
		t.Fatal(err)
	}
	if r := f.decide(f.call("s", "f6", "Write", map[string]any{"file_path": "x", "content": ""})); r.Rule != policy.RuleDormant {
		t.Errorf("after deactivate = %+v, want dormant", r)
	}
}

// TestAgentCannotFireInterruptByName: INTERRUPT:<name> would let the agent
// jump into a handler state no transition leads to; only a person may send it.
func TestAgentCannotFireInterruptByName(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := context.Background()
	f.start("s")
	if _, err := f.svc.Transition(ctx, "s", "INTERRUPT:sec", nil, agent); !errors.Is(err, ErrNotAllowed) {
		t.Fatalf("agent INTERRUPT:sec: %v, want ErrNotAllowed", err)
	}
	if got := f.live("s").State; got != "plan" {
		t.Fatalf("state after refused interrupt = %q, want plan", got)
	}
	res, err := f.svc.Transition(ctx, "s", "INTERRUPT:sec", nil, human)
	if err != nil || res.To != "review" {
		t.Fatalf("human INTERRUPT:sec = %+v, %v; want review", res, err)
	}
	if got := f.live("s").State; got != "review" {
		t.Fatalf("state after human interrupt = %q, want review", got)
	}
}
