package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/statewright-go/statewright/agent/eval"
	"github.com/statewright-go/statewright/agent/events"
	fm "github.com/statewright-go/statewright/internal/fakemodel"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/sqlite"
)

// copyRepo copies an eval fixture's repository into a fresh directory.
func copyRepo(t *testing.T, task eval.Task) string {
	t.Helper()
	dir := t.TempDir()
	err := filepath.WalkDir(task.Repo, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(task.Repo, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func suiteTask(t *testing.T, id string) (*eval.Suite, eval.Task, fm.Oracle) {
	t.Helper()
	s, err := eval.Load("../../agent/testdata/eval")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range s.Tasks {
		if task.ID == id {
			var o fm.Oracle
			if err := json.Unmarshal(task.Oracle, &o); err != nil {
				t.Fatal(err)
			}
			o.Task, o.TestCommand = task.Task, task.TestCommand
			return s, task, o
		}
	}
	t.Fatalf("no task %s", id)
	return nil, eval.Task{}, fm.Oracle{}
}

// lastPhase is the phase the runner last announced in a request.
func lastPhase(r *fm.Request) string {
	c, err := r.Conversation()
	if err != nil {
		return ""
	}
	phase := ""
	for _, m := range c.Messages {
		if i := strings.Index(m.Text, "[statewright] Phase: "); i >= 0 && m.Role == "user" {
			phase = strings.Fields(m.Text[i+len("[statewright] Phase: "):])[0]
		}
	}
	return phase
}

// streamReader collects a JSONL event stream from a process's stdout.
type streamReader struct {
	mu  sync.Mutex
	evs []events.Event
	bad []string
}

func (s *streamReader) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		e, err := events.Decode(sc.Bytes())
		s.mu.Lock()
		if err != nil {
			s.bad = append(s.bad, sc.Text())
		} else {
			s.evs = append(s.evs, e)
		}
		s.mu.Unlock()
	}
}

func (s *streamReader) first(typ events.Type) (events.Event, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.evs {
		if e.Type == typ {
			return e, true
		}
	}
	return events.Event{}, false
}

// TestAgentResumeAfterSIGKILL kills a real `statewright agent` process with
// SIGKILL in the middle of a run (the model request of its implementing
// phase is in flight) and resumes it with --resume RUN: the run continues
// from the store, in implementing, and completes with the fix proven by
// the tests.
func TestAgentResumeAfterSIGKILL(t *testing.T) {
	suite, task, oracle := suiteTask(t, "py-mean")
	ws := copyRepo(t, task)
	storePath := filepath.Join(t.TempDir(), "state.db")

	policy := fm.Flailing([]fm.Oracle{oracle})
	inImplementing := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	srv := fm.NewChatCompletions(fm.Script{Respond: func(r *fm.Request) fm.Turn {
		if lastPhase(r) == "implementing" {
			paused := false
			once.Do(func() { paused = true })
			if paused {
				close(inImplementing)
				<-release // the process is killed meanwhile
				return fm.Say("too late")
			}
		}
		return policy(r)
	}})
	defer srv.Close()
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()

	model := srv.URL + "#flailing-coder"
	cmd := exec.Command("statewright", "agent", "--store", storePath, "--workflow", suite.Workflow, "--task", task.Task,
		"--model", model, "--workspace", ws, "--test-cmd", task.TestCommand, "--events", "jsonl")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var first streamReader
	done := make(chan struct{})
	go func() { first.read(stdout); close(done) }()
	select {
	case <-inImplementing:
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("the run never reached implementing\n%s", stderr.String())
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	werr := cmd.Wait()
	<-done
	var ee *exec.ExitError
	if !errors.As(werr, &ee) || ee.ExitCode() != -1 {
		t.Fatalf("the process was not killed: %v", werr)
	}
	close(release)
	start, ok := first.first(events.TypeRunStart)
	if !ok {
		t.Fatalf("no run_start in the stream\n%s", stderr.String())
	}
	if _, ended := first.first(events.TypeRunEnd); ended {
		t.Fatal("the killed run wrote run_end")
	}
	runID := start.RunID

	// The store holds the run where the process died.
	st, err := sqlite.Open(context.Background(), storePath, sqlite.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	run, err := st.Run(context.Background(), runID)
	st.Close()
	if err != nil || run.Status != store.StatusActive || run.State != "implementing" {
		t.Fatalf("after the kill: %+v %v", run, err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, oracle.File)); !strings.Contains(string(b), oracle.Old) {
		t.Fatal("the bug was fixed before the kill; the test proves nothing")
	}

	// Resume: nothing but the run id (and the store).
	res := exec.Command("statewright", "agent", "--store", storePath, "--resume", runID, "--events", "jsonl")
	out, err := res.Output()
	if err != nil {
		var ee *exec.ExitError
		errors.As(err, &ee)
		t.Fatalf("resume: %v\n%s\n%s", err, out, ee.Stderr)
	}
	var second streamReader
	second.read(bytes.NewReader(out))
	rs, ok := second.first(events.TypeRunStart)
	if !ok || !rs.RunStart.Resumed || rs.RunID != runID || rs.State != "implementing" {
		t.Fatalf("resumed run_start %+v", rs)
	}
	end, ok := second.first(events.TypeRunEnd)
	if !ok || end.RunEnd.Outcome != events.OutcomeSuccess || end.RunEnd.FinalState != "done" {
		t.Fatalf("resumed run ended %+v", end.RunEnd)
	}
	st, err = sqlite.Open(context.Background(), storePath, sqlite.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run, err = st.Run(context.Background(), runID)
	if err != nil || run.Status != store.StatusCompleted || run.State != "done" {
		t.Fatalf("after resume: %+v %v", run, err)
	}
	b, _ := os.ReadFile(filepath.Join(ws, oracle.File))
	if !strings.Contains(string(b), oracle.New) {
		t.Fatalf("not fixed:\n%s", b)
	}
	if len(first.bad)+len(second.bad) > 0 {
		t.Fatalf("undecodable event lines: %q %q", first.bad, second.bad)
	}
}

// TestAgentApprovalGate: a transition that needs a person's approval is
// never passed by the runner. The run stops with exit 4, parked; the
// model's later wishes change nothing; a person approves with the
// operator token; --resume continues to the end.
func TestAgentApprovalGate(t *testing.T) {
	dir := t.TempDir()
	wf := filepath.Join(dir, "gated.json")
	if err := os.WriteFile(wf, []byte(`{
  "id": "gated",
  "initial": "working",
  "states": {
    "working": {
      "allowed_tools": ["Read", "Write"],
      "on": { "SHIP": { "target": "shipped", "requires_approval": true, "approval_message": "ship it?" }, "FAIL": "failed" }
    },
    "shipped": { "allowed_tools": ["Write"], "on": { "DONE": "done" } },
    "done": { "type": "final" },
    "failed": { "type": "final" }
  }
}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	storePath := filepath.Join(dir, "state.db")
	srv := fm.NewChatCompletions(fm.Script{Turns: []fm.Turn{
		fm.Call(fm.Tool("statewright_transition", map[string]any{"event": "SHIP"})),
		// after a person approves and the run resumes, in shipped:
		fm.Call(fm.Tool("write_file", map[string]any{"path": "SHIPPED", "content": "yes\n"})),
		fm.Call(fm.Tool("statewright_transition", map[string]any{"event": "DONE"})),
	}})
	defer srv.Close()
	run := func(args ...string) ([]byte, int) {
		cmd := exec.Command("statewright", args...)
		cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(dir, "cfg"))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if stderr.Len() > 0 {
			t.Logf("statewright %s: %s", args[0], stderr.String())
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return out, ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out, 0
	}
	out, code := run("agent", "--store", storePath, "--workflow", wf, "--task", "ship", "--model", srv.URL+"#m", "--workspace", ws, "--events", "jsonl")
	if code != 4 {
		t.Fatalf("exit %d, want 4\n%s", code, out)
	}
	var s streamReader
	s.read(bytes.NewReader(out))
	wait, ok := s.first(events.TypeApprovalWait)
	if !ok || wait.ApprovalWait.To != "shipped" || wait.ApprovalWait.Message != "ship it?" {
		t.Fatalf("approval_wait %+v", wait)
	}
	// Resuming without an approval stops again at once, still parked, no model call.
	before := srv.Served()
	if _, code := run("agent", "--store", storePath, "--resume", wait.RunID, "--events", "jsonl"); code != 4 || srv.Served() != before {
		t.Fatalf("resume while parked: exit %d, %d model calls", code, srv.Served()-before)
	}
	if _, err := os.Stat(filepath.Join(ws, "SHIPPED")); err == nil {
		t.Fatal("work of the gated phase happened before the approval")
	}
	tok, code := run("token", "create")
	if code != 0 {
		t.Fatal("token create failed")
	}
	if out, code := run("approve", wait.Session, "--store", storePath, "--id", wait.ApprovalWait.ApprovalID, "--token", strings.TrimSpace(string(tok))); code != 0 {
		t.Fatalf("approve: exit %d %s", code, out)
	}
	if out, code := run("agent", "--store", storePath, "--resume", wait.RunID, "--events", "jsonl"); code != 0 {
		t.Fatalf("resume after approval: exit %d\n%s", code, out)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "SHIPPED")); err != nil || string(b) != "yes\n" {
		t.Fatalf("SHIPPED: %q %v", b, err)
	}
}

// TestAgentBudgetExit3: a model that never finishes runs out of --max-steps;
// the exit status says so (3) and the run stays live in the store.
func TestAgentBudgetExit3(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	n := 0
	var mu sync.Mutex
	srv := fm.NewChatCompletions(fm.Script{Respond: func(*fm.Request) fm.Turn {
		mu.Lock()
		defer mu.Unlock()
		n++
		return fm.Call(fm.Tool("list_dir", map[string]any{"path": "."}))
	}})
	defer srv.Close()
	storePath := filepath.Join(t.TempDir(), "state.db")
	out, stderr, code := runSW(t, "agent", "--store", storePath, "--workflow", "bugfix", "--task", "never done", "--model", srv.URL+"#m",
		"--workspace", ws, "--max-steps", "3", "--events", "jsonl")
	if code != 3 {
		t.Fatalf("exit %d, want 3\n%s", code, stderr)
	}
	var s streamReader
	s.read(strings.NewReader(out))
	end, ok := s.first(events.TypeRunEnd)
	if !ok || end.RunEnd.Outcome != events.OutcomeBudget || end.RunEnd.Steps != 3 || n != 3 {
		t.Fatalf("run_end %+v after %d model calls", end.RunEnd, n)
	}
	st, err := sqlite.Open(context.Background(), storePath, sqlite.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if run, err := st.Run(context.Background(), end.RunID); err != nil || run.Status != store.StatusActive {
		t.Fatalf("run %+v %v", run, err)
	}
}
