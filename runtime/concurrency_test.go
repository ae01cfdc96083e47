package runtime

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/sqlite"
)

// helperEnv selects a helper mode when the test binary re-executes itself.
const helperEnv = "STATEWRIGHT_RUNTIME_HELPER"

// TestMain runs the helper modes the multi-process tests start.
func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "decide" {
		if err := helperDecide(); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// helperDecide decides HELPER_N allowed calls with ids HELPER_PREFIX-i on
// HELPER_SESSION of the store HELPER_STORE, like a hook process would.
func helperDecide() error {
	n, err := strconv.Atoi(os.Getenv("HELPER_N"))
	if err != nil {
		return err
	}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, os.Getenv("HELPER_STORE"), sqlite.Options{MustExist: true, BusyTimeout: time.Minute})
	if err != nil {
		return err
	}
	defer st.Close()
	svc := New(st, Options{ProjectDir: os.Getenv("HELPER_DIR")})
	prefix := os.Getenv("HELPER_PREFIX")
	for i := range n {
		r, err := svc.Decide(ctx, ToolCall{Session: os.Getenv("HELPER_SESSION"), Actor: Actor{Kind: ActorAgent, Channel: "helper"},
			Call: policy.ToolCall{Tool: "Read", Input: []byte(`{"file_path":"a.go"}`), ToolUseID: fmt.Sprintf("%s-%d", prefix, i)}})
		if err != nil {
			return err
		}
		if r.Verdict != policy.Allow || r.Replayed {
			return fmt.Errorf("call %d: %+v", i, r)
		}
	}
	return nil
}

// unlimitedWorkflow allows reads without an iteration limit.
const unlimitedWorkflow = `{"id": "u", "initial": "work", "states": {
  "work": {"allowed_tools": ["Read"], "on": {"DONE": "done"}},
  "done": {"type": "final"}}}`

func TestConcurrentProcesses(t *testing.T) {
	const procs, perProc = 16, 10
	f := newFixture(t, Options{})
	ctx := context.Background()
	if _, err := f.svc.Start(ctx, "claude-code:multi", f.workflowFile("u.json", unlimitedWorkflow), human); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmds := make([]*exec.Cmd, procs)
	for p := range procs {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"=decide", "HELPER_N="+strconv.Itoa(perProc),
			"HELPER_STORE="+f.path, "HELPER_SESSION=claude-code:multi", "HELPER_DIR="+f.dir,
			fmt.Sprintf("HELPER_PREFIX=p%d", p))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatalf("start helper %d: %v", p, err)
		}
		cmds[p] = cmd
	}
	for p, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("helper %d: %v", p, err)
		}
	}
	run := f.live("claude-code:multi")
	if run.Iterations != procs*perProc {
		t.Errorf("iterations = %d, want %d", run.Iterations, procs*perProc)
	}
	evs := f.events("claude-code:multi", store.KindDecision)
	if len(evs) != procs*perProc {
		t.Errorf("decision events = %d, want %d", len(evs), procs*perProc)
	}
	seen := map[string]bool{}
	for _, e := range evs {
		if seen[e.ToolUseID] {
			t.Errorf("two decision events for %s", e.ToolUseID)
		}
		seen[e.ToolUseID] = true
	}
	calls, err := f.st.Calls(ctx, run.ID)
	if err != nil || len(calls) != procs*perProc {
		t.Errorf("call records = %d, %v; want %d", len(calls), err, procs*perProc)
	}
	cs, err := f.st.VerifyChain(ctx)
	if err != nil {
		t.Fatalf("chain: %v", err)
	}
	// 2 events from Start, one per decision.
	if cs.Events != procs*perProc+2 {
		t.Errorf("chain events = %d, want %d", cs.Events, procs*perProc+2)
	}
}
