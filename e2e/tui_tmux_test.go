//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/statewright-go/statewright/internal/fakemodel"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/sqlite"
)

// The workflow the TUI and dashboard tests run: planning, implementing,
// and an approval gate before the final state.
const surfaceWorkflow = `{
  "id": "surfaces",
  "initial": "planning",
  "states": {
    "planning": {
      "instructions": "Plan the change. Do not edit.",
      "allowed_tools": ["Read", "Grep", "Glob"],
      "on": {"PLANNED": "implementing"}
    },
    "implementing": {
      "instructions": "Make the change.",
      "allowed_tools": ["Read", "Edit", "Write", "Bash"],
      "on": {"SHIP": {"target": "done", "requires_approval": true, "approval_message": "ship the change?"}}
    },
    "done": {"type": "final"}
  }
}`

// tmuxSession is a TUI running in a detached tmux session on a private
// tmux server (its own socket, no user configuration).
type tmuxSession struct {
	t      *testing.T
	socket string
}

// startTmux runs command in a new detached tmux session of size w×h.
// tmux must be installed (.ci/run installs Debian's tmux): without it the
// test fails.
func startTmux(t *testing.T, w, h int, command string) *tmuxSession {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatalf("tmux is not installed (apt-get install tmux; .ci/run does): %v", err)
	}
	s := &tmuxSession{t: t, socket: fmt.Sprintf("sw-e2e-%d-%d", os.Getpid(), time.Now().UnixNano())}
	s.run("-f", "/dev/null", "new-session", "-d", "-s", "sw", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), command)
	t.Cleanup(func() { exec.Command("tmux", "-L", s.socket, "kill-server").Run() })
	return s
}

func (s *tmuxSession) run(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", s.socket}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// screen is the pane's text now.
func (s *tmuxSession) screen() string { return s.run("capture-pane", "-p", "-t", "sw") }

// keys sends tmux key names (Enter, Down, a, ...).
func (s *tmuxSession) keys(keys ...string) {
	s.run(append([]string{"send-keys", "-t", "sw"}, keys...)...)
}

// typeText sends literal text.
func (s *tmuxSession) typeText(text string) { s.run("send-keys", "-t", "sw", "-l", text) }

// waitFor polls the screen until every want is on it; it fails the test
// with the last screen after 2 minutes. The screen is there in seconds on an
// idle machine; the margin is for a loaded one, where the agent's sandboxed
// `go test ./...` (a fresh build cache) had not finished 30 s after the
// test started (TestTUIRendersTheRealAgentStream, CI at load 22).
func (s *tmuxSession) waitFor(want ...string) string {
	s.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	var scr string
	for {
		scr = s.screen()
		missing := ""
		for _, w := range want {
			if !strings.Contains(scr, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return scr
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the screen never showed %q; last screen:\n%s", missing, scr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// saveArtifact writes data under $STATEWRIGHT_ARTIFACTS (or a temp dir
// kept after the test) and logs where.
func saveArtifact(t *testing.T, name string, data []byte) string {
	t.Helper()
	dir := os.Getenv("STATEWRIGHT_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "statewright-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("artifact: %s", p)
	return p
}

// surfaceStore is a store with one run of surfaceWorkflow, and the CLI
// to drive it from other processes.
type surfaceStore struct {
	bin, dir, db, session string
}

func newSurfaceStore(t *testing.T) *surfaceStore {
	t.Helper()
	s := &surfaceStore{bin: statewrightBinary(t), dir: t.TempDir(), session: "e2e-surfaces"}
	s.db = filepath.Join(s.dir, "state.db")
	wf := filepath.Join(s.dir, "surfaces.json")
	if err := os.WriteFile(wf, []byte(surfaceWorkflow), 0o644); err != nil {
		t.Fatal(err)
	}
	s.cli(t, "start", wf, "--session", s.session)
	return s
}

// cli runs the statewright binary on the store in a process of its own.
func (s *surfaceStore) cli(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(s.bin, append(args, "--store", s.db)...)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(s.dir, "config"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("statewright %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// decide records agent tool calls through the runtime, as the hooks do.
func (s *surfaceStore) decide(t *testing.T, calls ...[2]string) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), s.db, sqlite.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := runtime.New(st, runtime.Options{ProjectDir: s.dir})
	for i, c := range calls {
		_, err := svc.Decide(context.Background(), runtime.ToolCall{Session: "claude-code:" + s.session,
			Call: policy.ToolCall{Tool: c[0], Input: json.RawMessage(c[1]), Cwd: s.dir, ToolUseID: fmt.Sprintf("toolu_%d_%d", time.Now().UnixNano(), i)}})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// run reads the session's newest run and its events from the store.
func (s *surfaceStore) run(t *testing.T) (*store.Run, []store.Event) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), s.db, sqlite.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(context.Background(), store.RunFilter{SessionKey: "claude-code:" + s.session})
	if err != nil || len(runs) == 0 {
		t.Fatalf("runs: %v %v", runs, err)
	}
	evs, err := st.Events(context.Background(), store.EventFilter{RunID: runs[0].ID})
	if err != nil {
		t.Fatal(err)
	}
	return runs[0], evs
}

// approvalGrantedBy returns the channel of the actor who granted an
// approval in evs ("" when none was granted).
func approvalGrantedBy(evs []store.Event) string {
	for _, e := range evs {
		if e.Kind != store.KindApproval {
			continue
		}
		var d struct {
			Action string `json:"action"`
			Actor  struct {
				Kind    string `json:"kind"`
				Channel string `json:"channel"`
			} `json:"actor"`
		}
		if json.Unmarshal(e.Data, &d) == nil && d.Action == "granted" {
			return d.Actor.Kind + "/" + d.Actor.Channel
		}
	}
	return ""
}

func TestTUIFollowsTheStoreAndApproves(t *testing.T) {
	s := newSurfaceStore(t)
	s.decide(t, [2]string{"Edit", `{"file_path":"main.go","old_string":"a","new_string":"b"}`}, [2]string{"Read", `{"file_path":"main.go"}`})

	tm := startTmux(t, 130, 45, fmt.Sprintf("%s tui --store %s; sleep 600", s.bin, s.db))
	tm.waitFor("statewright · runs (1)", "claude-code:e2e-surfaces", "planning")
	tm.keys("Enter")
	scr := tm.waitFor("▶ planning", "PLANNED → implementing", "allowed tools: Read, Grep, Glob", "DENY  Edit", "ALLOW Read")
	t.Logf("detail:\n%s", scr)

	// Another process moves the run on; the TUI follows.
	s.cli(t, "transition", s.session, "PLANNED")
	tm.waitFor("▶ implementing", "state implementing", "planning → implementing (event PLANNED) by human via cli",
		"allowed tools: Read, Edit, Write, Bash")

	// The agent asks to ship: the run parks on an approval.
	out := s.cli(t, "transition", s.session, "SHIP")
	if !strings.Contains(out, "awaiting approval") {
		t.Fatalf("SHIP did not park: %s", out)
	}
	r, _ := s.run(t)
	id := r.PendingApproval.ID
	tm.waitFor("Pending approval "+id+": implementing → done", "ship the change?", "[a] approve  [r] reject")

	// A wrong confirmation changes nothing.
	tm.keys("a")
	tm.waitFor("Type yes")
	tm.typeText("no")
	tm.keys("Enter")
	tm.waitFor("not confirmed; nothing changed")
	if r, _ := s.run(t); r.State != "implementing" || r.PendingApproval == nil {
		t.Fatalf("a wrong confirmation moved the run: %s %s", r.State, r.Status)
	}

	// The person presses a and types yes: the run moves on, in the store.
	ansi := tm.run("capture-pane", "-p", "-e", "-t", "sw")
	saveArtifact(t, "tui-approval.ansi", []byte(ansi))
	tm.keys("a")
	tm.waitFor("Type yes")
	tm.typeText("yes")
	tm.keys("Enter")
	tm.waitFor("approved "+id+": implementing → done", "▶ done", "status completed")
	r, evs := s.run(t)
	if r.State != "done" || r.Status != store.StatusCompleted {
		t.Fatalf("after approving in the TUI the store says %s / %s", r.State, r.Status)
	}
	if by := approvalGrantedBy(evs); by != "human/tui" {
		t.Fatalf("approval granted by %q, want human/tui", by)
	}
	tm.keys("Escape")
	tm.waitFor("claude-code:e2e-surfaces", "completed")
}

func TestTUIRendersALiveAgentStream(t *testing.T) {
	bin := statewrightBinary(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "events")
	if err := mkfifo(fifo); err != nil {
		t.Fatal(err)
	}
	tm := startTmux(t, 130, 45, fmt.Sprintf("%s tui - < %s; sleep 600", bin, fifo))
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	send := func(lines ...string) {
		for _, l := range lines {
			if _, err := w.WriteString(l + "\n"); err != nil {
				t.Fatal(err)
			}
		}
	}
	send(`{"v":1,"seq":1,"time":"2026-12-02T20:00:00Z","type":"run_start","run_id":"run_e2e","state":"localizing","run_start":{"workflow":"bugfix","task":"fix calc","model":"qwen2.5-coder"}}`,
		`{"v":1,"seq":2,"time":"2026-12-02T20:00:01Z","type":"tool_call","state":"localizing","step":1,"tool_call":{"id":"c1","name":"edit_file","args":{"path":"calc.go"}}}`,
		`{"v":1,"seq":3,"time":"2026-12-02T20:00:01Z","type":"decision","state":"localizing","step":1,"decision":{"id":"c1","name":"edit_file","verdict":"deny","rule":"tool-not-allowed","reason":"Denied in phase 'localizing'"}}`)
	tm.waitFor("agent · bugfix (run_e2e)", "task: fix calc", "▶ localizing", "DENY  edit_file (tool-not-allowed)", "denied 1")

	send(`{"v":1,"seq":4,"type":"transition","state":"planning","step":2,"transition":{"event":"LOCALIZED","from":"localizing","to":"planning"}}`,
		`{"v":1,"seq":5,"type":"some_future_event","step":2,"some_future_event":{"detail":"kept"}}`)
	tm.waitFor("▶ planning", "localizing → planning (event LOCALIZED)", "some_future_event detail=kept")

	send(`{"v":1,"seq":6,"type":"run_end","state":"done","run_end":{"outcome":"success","final_state":"done","steps":2,"tool_calls":1,"denials":1}}`)
	w.Close()
	tm.waitFor("run ended: success in done", "end of stream")
	tm.keys("q")
}

// TestTUIRendersTheRealAgentStream pipes the real `statewright agent
// --events jsonl` (driven by the fake Chat Completions server through the
// bundled bugfix workflow) into `statewright tui -`, as the README shows.
func TestTUIRendersTheRealAgentStream(t *testing.T) {
	bin := statewrightBinary(t)
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(ws, 0o755)
	for name, body := range map[string]string{
		"go.mod":       "module calc\n\ngo 1.21\n",
		"calc.go":      "package calc\n\n// Add returns a+b.\nfunc Add(a, b int) int {\n\treturn a - b\n}\n",
		"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Fatalf(\"Add(2, 3) = %d, want 5\", got)\n\t}\n}\n",
	} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	call := func(name string, in map[string]any) fakemodel.Turn { return fakemodel.Call(fakemodel.Tool(name, in)) }
	fix := map[string]any{"path": "calc.go", "old_string": "return a - b", "new_string": "return a + b"}
	srv := fakemodel.NewChatCompletions(fakemodel.Script{Turns: []fakemodel.Turn{
		call("edit_file", fix), // denied while localizing
		call("read_file", map[string]any{"path": "calc.go"}),
		call("statewright_transition", map[string]any{"event": "LOCALIZED"}),
		call("statewright_transition", map[string]any{"event": "PLAN_READY"}),
		call("edit_file", fix),
		call("statewright_transition", map[string]any{"event": "IMPLEMENTED"}),
		call("run_test", map[string]any{"command": "go test ./..."}),
		call("statewright_transition", map[string]any{"event": "TESTS_PASS"}),
	}}, fakemodel.WithLog(t.Logf))
	defer srv.Close()

	db := filepath.Join(dir, "state.db")
	pipeline := fmt.Sprintf("%s agent --workflow bugfix --task 'Fix Add in calc.go' --model '%s/v1#fake' --workspace %s --test-cmd 'go test ./...' --events jsonl --store %s 2>%s | %s tui -; sleep 600",
		bin, srv.URL, ws, db, filepath.Join(dir, "agent.stderr"), bin)
	tm := startTmux(t, 140, 50, pipeline)
	scr := tm.waitFor("agent · bugfix", "task: Fix Add in calc.go", "tool calls 8 · allowed 7 · denied 1 · transitions 4", "localizing → planning (event LOCALIZED)",
		"testing → done (event TESTS_PASS)", "run ended: success in done", "▶ done", "end of stream")
	t.Logf("screen:\n%s", scr)
	saveArtifact(t, "tui-agent-stream.txt", []byte(scr))
	got, _ := os.ReadFile(filepath.Join(ws, "calc.go"))
	if !strings.Contains(string(got), "return a + b") {
		t.Fatalf("the agent run did not fix calc.go:\n%s", got)
	}
	tm.keys("q")
}
