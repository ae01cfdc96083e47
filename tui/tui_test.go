package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/sqlite"
)

const testWorkflow = `{
  "id": "tui-test",
  "initial": "localizing",
  "states": {
    "localizing": {"allowed_tools": ["Read", "Grep"], "on": {"LOCALIZED": "fixing"}},
    "fixing": {"allowed_tools": ["Read", "Edit"], "on": {"FIXED": {"target": "done", "requires_approval": true}}},
    "done": {"type": "final"}
  }
}`

var human = runtime.Actor{Kind: runtime.ActorHuman, Channel: "test"}

type env struct {
	st  store.Store
	svc *runtime.Service
	ld  *Loader
}

func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	wf := filepath.Join(dir, "wf.json")
	if err := os.WriteFile(wf, []byte(testWorkflow), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "state.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc := runtime.New(st, runtime.Options{ProjectDir: dir})
	if _, err := svc.Start(context.Background(), "claude-code:s1", wf, human); err != nil {
		t.Fatal(err)
	}
	return &env{st: st, svc: svc, ld: &Loader{Service: svc, Store: st}}
}

func (e *env) decide(t *testing.T, tool, input string) {
	t.Helper()
	_, err := e.svc.Decide(context.Background(), runtime.ToolCall{Session: "claude-code:s1",
		Call: policy.ToolCall{Tool: tool, Input: json.RawMessage(input), ToolUseID: tool + input}})
	if err != nil {
		t.Fatal(err)
	}
}

func plainText(s string) string { return ansi.Strip(s) }

func TestFrameListAndDetail(t *testing.T) {
	e := newEnv(t)
	e.decide(t, "Edit", `{"file_path":"/tmp/x.go","old_string":"a","new_string":"b"}`)
	e.decide(t, "Read", `{"file_path":"/tmp/x.go"}`)
	ctx := context.Background()

	list := plainText(Frame(ctx, Options{Load: e.ld.Load}, 120, 30))
	for _, want := range []string{"runs (1)", "claude-code:s1", "tui-test", "localizing", "active"} {
		if !strings.Contains(list, want) {
			t.Errorf("list frame lacks %q:\n%s", want, list)
		}
	}

	detail := plainText(Frame(ctx, Options{Load: e.ld.Load, OpenSession: "s1"}, 120, 40))
	for _, want := range []string{
		"▶ localizing", "LOCALIZED → fixing", "FIXED (approval) → done", "done        (final)",
		"allowed tools: Read, Grep",
		"DENY  Edit", "tool-not-allowed", "ALLOW Read",
		"(new run) → localizing (event start) by human via test",
	} {
		if !strings.Contains(detail, want) {
			t.Errorf("detail frame lacks %q:\n%s", want, detail)
		}
	}
}

func press(m tea.Model, keys ...string) (tea.Model, []tea.Cmd) {
	var cmds []tea.Cmd
	for _, k := range keys {
		var msg tea.KeyPressMsg
		switch k {
		case "enter":
			msg = tea.KeyPressMsg{Code: tea.KeyEnter}
		case "esc":
			msg = tea.KeyPressMsg{Code: tea.KeyEscape}
		default:
			msg = tea.KeyPressMsg{Code: []rune(k)[0], Text: k}
		}
		var cmd tea.Cmd
		m, cmd = m.Update(msg)
		if cmd != nil {
			cmds = append(cmds, cmd)
		}
	}
	return m, cmds
}

// openParked returns a model showing the run parked on an approval.
func openParked(t *testing.T, e *env, opts Options) (*Model, string) {
	t.Helper()
	ctx := context.Background()
	if _, err := e.svc.Transition(ctx, "claude-code:s1", "LOCALIZED", nil, human); err != nil {
		t.Fatal(err)
	}
	res, err := e.svc.Transition(ctx, "claude-code:s1", "FIXED", nil, runtime.Actor{Kind: runtime.ActorAgent, Channel: "test"})
	if err != nil || !res.Parked {
		t.Fatalf("FIXED: %+v %v", res, err)
	}
	opts.Load = e.ld.Load
	opts.OpenSession = "s1"
	m := New(opts)
	m.applySnapshot(e.ld.Load(ctx, ""))
	m.applySnapshot(e.ld.Load(ctx, m.openID))
	if m.mode != modeDetail {
		t.Fatalf("the session did not open")
	}
	return m, res.ApprovalID
}

func runCmds(m tea.Model, cmds []tea.Cmd) tea.Model {
	for _, c := range cmds {
		if msg := c(); msg != nil {
			if _, ok := msg.(doneMsg); ok {
				m, _ = m.Update(msg)
			}
		}
	}
	return m
}

func (e *env) run(t *testing.T) *store.Run {
	t.Helper()
	runs, err := e.st.Runs(context.Background(), store.RunFilter{SessionKey: "claude-code:s1"})
	if err != nil || len(runs) == 0 {
		t.Fatalf("runs: %v %v", runs, err)
	}
	return runs[0]
}

func TestApproveNeedsTypedConfirmation(t *testing.T) {
	e := newEnv(t)
	var approvals int
	opts := Options{
		Approve: func(ctx context.Context, session, id string) (runtime.TransitionResult, error) {
			approvals++
			return e.svc.Approve(ctx, session, id, human)
		},
		Reject: func(ctx context.Context, session, id, reason string) error {
			return e.svc.Reject(ctx, session, id, reason, human)
		},
	}
	m, id := openParked(t, e, opts)
	if !strings.Contains(plainText(m.render()), "Pending approval "+id) {
		t.Fatalf("no pending approval shown:\n%s", plainText(m.render()))
	}

	// Typing something else changes nothing.
	var tm tea.Model = m
	tm, cmds := press(tm, "a", "n", "o", "enter")
	tm = runCmds(tm, cmds)
	if approvals != 0 || e.run(t).State != "fixing" {
		t.Fatalf("approved without confirmation: %d approvals, state %s", approvals, e.run(t).State)
	}
	if !strings.Contains(plainText(m.render()), "not confirmed; nothing changed") {
		t.Errorf("no refusal shown:\n%s", plainText(m.render()))
	}
	// Esc cancels.
	tm, cmds = press(tm, "a", "y", "esc", "enter")
	tm = runCmds(tm, cmds)
	if approvals != 0 {
		t.Fatalf("esc did not cancel")
	}

	tm, cmds = press(tm, "a", "y", "e", "s", "enter")
	runCmds(tm, cmds)
	if approvals != 1 {
		t.Fatalf("approvals = %d, want 1", approvals)
	}
	r := e.run(t)
	if r.State != "done" || r.Status != store.StatusCompleted {
		t.Fatalf("after approve: state %s status %s", r.State, r.Status)
	}
	if !strings.Contains(plainText(m.render()), "approved "+id+": fixing → done") {
		t.Errorf("no success shown:\n%s", plainText(m.render()))
	}
}

func TestRejectByApprovalID(t *testing.T) {
	e := newEnv(t)
	opts := Options{
		Approve: func(ctx context.Context, session, id string) (runtime.TransitionResult, error) {
			return runtime.TransitionResult{}, errors.New("approve called")
		},
		Reject: func(ctx context.Context, session, id, reason string) error {
			return e.svc.Reject(ctx, session, id, reason, human)
		},
	}
	m, id := openParked(t, e, opts)
	keys := []string{"r"}
	for _, r := range id {
		keys = append(keys, string(r))
	}
	tm, cmds := press(m, append(keys, "enter")...)
	runCmds(tm, cmds)
	r := e.run(t)
	if r.State != "fixing" || r.PendingApproval != nil || r.Status != store.StatusActive {
		t.Fatalf("after reject: state %s status %s pending %v", r.State, r.Status, r.PendingApproval)
	}
}

func TestNoApprovalWithoutAPerson(t *testing.T) {
	e := newEnv(t)
	m, _ := openParked(t, e, Options{NoApproval: "no terminal"})
	tm, cmds := press(m, "a", "y", "e", "s", "enter")
	runCmds(tm, cmds)
	if got := plainText(m.render()); !strings.Contains(got, "approvals are not available here: no terminal") {
		t.Errorf("no explanation shown:\n%s", got)
	}
	if r := e.run(t); r.State != "fixing" || r.PendingApproval == nil {
		t.Fatalf("the run moved: %s", r.State)
	}
}

func TestListNavigation(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if _, err := e.svc.Start(ctx, "claude-code:s2", "bugfix", human); err != nil {
		t.Fatal(err)
	}
	m := New(Options{Load: e.ld.Load})
	m.applySnapshot(e.ld.Load(ctx, ""))
	first := m.selectedRun().SessionKey
	var tm tea.Model = m
	tm, _ = press(tm, "j")
	if m.selectedRun().SessionKey == first {
		t.Fatalf("down did not move the selection")
	}
	tm, cmds := press(tm, "enter")
	if m.mode != modeDetail || len(cmds) == 0 {
		t.Fatalf("enter did not open the run")
	}
	m.applySnapshot(cmds[0]().(snapshotMsg).toSnapshot())
	if !strings.Contains(plainText(m.render()), m.selectedRun().SessionKey) {
		t.Errorf("detail is not the selected run's:\n%s", plainText(m.render()))
	}
	press(tm, "esc")
	if m.mode != modeList {
		t.Fatalf("esc did not go back")
	}
}

func (s snapshotMsg) toSnapshot() Snapshot { return Snapshot(s) }

func TestDecisionsScrollBack(t *testing.T) {
	e := newEnv(t)
	for i := 0; i < 30; i++ {
		e.decide(t, "Read", fmt.Sprintf(`{"file_path":"/tmp/f%02d.go"}`, i))
	}
	ctx := context.Background()
	m := New(Options{Load: e.ld.Load, OpenSession: "s1"})
	m.width, m.height = 160, 30
	m.applySnapshot(e.ld.Load(ctx, ""))
	m.applySnapshot(e.ld.Load(ctx, m.openID))
	newest := plainText(m.render())
	if !strings.Contains(newest, "of 30, newest last)") || strings.Contains(newest, "scrolled back") {
		t.Fatalf("not following the newest:\n%s", newest)
	}
	press(m, "u")
	back := plainText(m.render())
	if !strings.Contains(back, "scrolled back 5") {
		t.Fatalf("PgUp did not scroll back:\n%s", back)
	}
	press(m, "G")
	if got := plainText(m.render()); got != newest {
		t.Fatalf("End did not return to the newest:\n%s", got)
	}
}

// TestDetailShowsTheStack: while an invoked sub-workflow runs, the detail
// view names it and what waits for it, and draws its graph.
func TestDetailShowsTheStack(t *testing.T) {
	dir := t.TempDir()
	for name, src := range map[string]string{
		"parent.json": `{"id":"parent","initial":"work","states":{"work":{"on":{"CHECK":{"invoke":"audit","on_complete":"done"}}},"done":{"type":"final"}}}`,
		"audit.json":  `{"id":"audit","initial":"look","states":{"look":{"allowed_tools":["Read"],"on":{"PASS":"passed"}},"passed":{"type":"final"}}}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "state.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc := runtime.New(st, runtime.Options{ProjectDir: dir})
	ctx := context.Background()
	if _, err := svc.Start(ctx, "claude-code:s9", filepath.Join(dir, "parent.json"), human); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Transition(ctx, "claude-code:s9", "CHECK", nil, human); err != nil {
		t.Fatal(err)
	}
	ld := &Loader{Service: svc, Store: st}
	detail := plainText(Frame(ctx, Options{Load: ld.Load, OpenSession: "s9"}, 140, 40))
	for _, want := range []string{"Sub-workflow audit (depth 1)", "1. parent waits in work: invoked audit (event CHECK); then done", "▶ look", "PASS → passed"} {
		if !strings.Contains(detail, want) {
			t.Errorf("detail frame lacks %q:\n%s", want, detail)
		}
	}
}
