package agent_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/agent"
	"github.com/statewright-go/statewright/agent/events"
	"github.com/statewright-go/statewright/agent/model"
	"github.com/statewright-go/statewright/agent/tools"
	fm "github.com/statewright-go/statewright/internal/fakemodel"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/sqlite"
)

// goFixture writes a tiny Go module whose Add is wrong.
func goFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write(t, dir, "go.mod", "module calc\n\ngo 1.21\n")
	write(t, dir, "calc.go", "package calc\n\n// Add returns a+b.\nfunc Add(a, b int) int {\n\treturn a - b\n}\n")
	write(t, dir, "calc_test.go", "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Fatalf(\"Add(2, 3) = %d, want 5\", got)\n\t}\n}\n")
	return dir
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

type harness struct {
	st   *sqlite.Store
	svc  *runtime.Service
	ws   *tools.Workspace
	sb   tools.Sandbox
	jsnl bytes.Buffer
}

func newHarness(t *testing.T, dir string) *harness {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "state.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ws, err := tools.NewWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{st: st, svc: runtime.New(st, runtime.Options{ProjectDir: ws.Root}), ws: ws, sb: tools.DetectSandbox(ctx)}
	if c := tools.GoBuildCache(); c != "" {
		h.sb.Writable = []string{c}
	}
	t.Logf("sandbox: %s", h.sb.String())
	return h
}

func (h *harness) config(srv *fm.Server, workflow, task, testCmd string) agent.Config {
	ep, err := model.ParseEndpoint(srv.URL + "#fake-coder")
	if err != nil {
		panic(err)
	}
	return agent.Config{
		Service: h.svc, Store: h.st, Workflow: workflow, Task: task, Endpoint: ep,
		Tools:    &tools.Set{WS: h.ws, Sandbox: &h.sb, TestCommand: testCmd},
		MaxSteps: 30,
		Events:   events.NewStamper(events.NewJSONL(&h.jsnl), nil),
	}
}

func (h *harness) events(t *testing.T) []events.Event {
	t.Helper()
	var out []events.Event
	for _, line := range bytes.Split(bytes.TrimSpace(h.jsnl.Bytes()), []byte("\n")) {
		e, err := events.Decode(line)
		if err != nil {
			t.Fatalf("event line %s: %v", line, err)
		}
		out = append(out, e)
	}
	return out
}

func call(name string, in map[string]any) fm.Turn { return fm.Call(fm.Tool(name, in)) }

// TestRunBugfixOverChatCompletions drives the bundled bugfix workflow
// through the real runtime and store against the fake Chat Completions
// server: an edit while localizing is denied and not applied, a TESTS_PASS
// before any test run is refused by the guard, the fix lands in
// implementing, the test run in testing proves it, and the run completes.
func TestRunBugfixOverChatCompletions(t *testing.T) {
	dir := goFixture(t)
	h := newHarness(t, dir)
	fix := map[string]any{"path": "calc.go", "old_string": "return a - b", "new_string": "return a + b"}
	srv := fm.NewChatCompletions(fm.Script{Turns: []fm.Turn{
		call("edit_file", fix), // 0: denied in localizing
		call("read_file", map[string]any{"path": "calc.go"}),
		call("statewright_transition", map[string]any{"event": "LOCALIZED"}),
		call("statewright_transition", map[string]any{"event": "PLAN_READY"}),
		call("edit_file", fix), // 4: allowed in implementing
		call("statewright_transition", map[string]any{"event": "IMPLEMENTED"}),
		call("statewright_transition", map[string]any{"event": "TESTS_PASS"}), // 6: guard refuses, no test yet
		call("run_test", map[string]any{"command": "go test ./..."}),
		call("statewright_transition", map[string]any{"event": "TESTS_PASS"}),
	}}, fm.WithLog(t.Logf))
	defer srv.Close()

	res, err := agent.Run(context.Background(), h.config(srv, "bugfix", "Fix Add in calc.go; go test ./... must pass.", "go test ./..."))
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != events.OutcomeSuccess || res.FinalState != "done" || res.ExitCode() != 0 {
		t.Fatalf("result %+v\n%s", res, h.jsnl.String())
	}
	// The model was told the edit was denied, and the file was untouched then.
	reqs := srv.MainRequests()
	if len(reqs) != 9 {
		t.Fatalf("%d model requests, want 9\n%s", len(reqs), srv.Summary())
	}
	c1, err := reqs[1].Chat()
	if err != nil {
		t.Fatal(err)
	}
	last := c1.Messages[len(c1.Messages)-1]
	if last.Role != "tool" || !strings.Contains(last.Text(), "statewright denied this call") || !strings.Contains(last.Text(), "LOCALIZED") {
		t.Fatalf("the deny went back as %q", last.Text())
	}
	// localizing offered no edit tools.
	if c0, _ := reqs[0].Chat(); c0.HasTool("edit_file") || !c0.HasTool("read_file") || !c0.HasTool("statewright_transition") {
		t.Fatalf("localizing offered %v", c0.ToolNames())
	}
	if c4, _ := reqs[4].Chat(); !c4.HasTool("edit_file") {
		t.Fatalf("implementing offered %v", c4.ToolNames())
	}
	c7, _ := reqs[7].Chat()
	if txt := c7.Messages[len(c7.Messages)-1].Text(); !strings.Contains(txt, "refused") {
		t.Fatalf("TESTS_PASS before a test run answered %q", txt)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "calc.go"))
	if !strings.Contains(string(got), "return a + b") {
		t.Fatalf("calc.go not fixed:\n%s", got)
	}
	// The store agrees: completed in done, with the deny and the guard refusal in the log.
	run, err := h.st.Run(context.Background(), res.RunID)
	if err != nil || run.Status != store.StatusCompleted || run.State != "done" {
		t.Fatalf("run %+v %v", run, err)
	}
	evs, _ := h.st.Events(context.Background(), store.EventFilter{RunID: res.RunID})
	var denies, refused int
	for _, e := range evs {
		if e.Kind == store.KindDecision && e.Decision == "deny" && e.State == "localizing" && e.Tool == "Edit" {
			denies++
		}
		if e.Kind == store.KindTransition && strings.Contains(string(e.Data), `"refused":true`) {
			refused++
		}
	}
	if denies != 1 || refused != 1 {
		t.Fatalf("store log: %d localizing edit denies, %d refused transitions; want 1 and 1", denies, refused)
	}
	// The event stream has the run's shape and totals.
	es := h.events(t)
	if es[0].Type != events.TypeRunStart || es[len(es)-1].Type != events.TypeRunEnd {
		t.Fatalf("stream starts %s, ends %s", es[0].Type, es[len(es)-1].Type)
	}
	end := es[len(es)-1].RunEnd
	if end.Steps != 9 || end.Denials != 2 || end.Transitions != 4 || end.ToolCalls != 9 {
		t.Fatalf("totals %+v", end)
	}
}

// TestRunConfinesPaths: paths that leave the workspace — "..", absolute,
// and a symlink inside the workspace pointing out — are refused before
// anything is read, and the refusal is in the store's log.
func TestRunConfinesPaths(t *testing.T) {
	dir := goFixture(t)
	outside := t.TempDir()
	write(t, outside, "secret.txt", "TOP SECRET\n")
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, dir)
	srv := fm.NewChatCompletions(fm.Script{Turns: []fm.Turn{
		call("read_file", map[string]any{"path": "../" + filepath.Base(outside) + "/secret.txt"}),
		call("read_file", map[string]any{"path": filepath.Join(outside, "secret.txt")}),
		call("read_file", map[string]any{"path": "link/secret.txt"}),
		call("statewright_transition", map[string]any{"event": "FAIL"}),
	}})
	defer srv.Close()
	res, err := agent.Run(context.Background(), h.config(srv, "bugfix", "look around", ""))
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != events.OutcomeFailed || res.FinalState != "failed" || res.ExitCode() != 1 {
		t.Fatalf("result %+v", res)
	}
	for i, r := range srv.MainRequests()[1:4] {
		c, _ := r.Chat()
		txt := c.Messages[len(c.Messages)-1].Text()
		if strings.Contains(txt, "TOP SECRET") || !strings.Contains(txt, "outside the workspace") {
			t.Fatalf("read %d answered %q", i, txt)
		}
	}
	evs, _ := h.st.Events(context.Background(), store.EventFilter{RunID: res.RunID, Kinds: []store.EventKind{store.KindDecision}})
	n := 0
	for _, e := range evs {
		if e.Rule == "runner:outside-workspace" {
			n++
		}
	}
	if n != 3 {
		t.Fatalf("%d outside-workspace denies in the log, want 3", n)
	}
}
