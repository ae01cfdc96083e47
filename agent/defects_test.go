package agent_test

// The reference runner's defects (reference/statewright-agent.md §12) that
// this runner must not have, each a test. Where a defect is covered by a
// test elsewhere, the list says where:
//
//   - exit status always 0 (#1): cmd/statewright TestAgentBudgetExit3,
//     TestAgentApprovalGate (4), TestAgentResumeAfterSIGKILL (0),
//     testdata/script/agent_usage.txtar (1, 2);
//   - approvals passed automatically, invokes ignored (#10):
//     TestAgentApprovalGate, TestOrchestrateInvokeAndFork;
//   - invoke input never reaching the child (#9): TestOrchestrateInvokeAndFork;
//   - event lines mixed with human lines (#11): TestAgentResumeAfterSIGKILL
//     decodes every stdout line;
//   - edit of every identical match (#16): tools.TestEditFile;
//   - no sandbox, the runner's environment in commands (#21):
//     tools.TestSandboxConfines;
//   - a hard-coded escalation host (#19): model.TestParseEndpoint (no
//     endpoint is ever guessed);
//   - path traversal in list_dir and grep, grep patterns read as options,
//     model text interpolated into a helper script (#20, #21): below.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/agent"
	"github.com/statewright-go/statewright/agent/events"
	fm "github.com/statewright-go/statewright/internal/fakemodel"
	"github.com/statewright-go/statewright/store"
)

func TestDefectTraversalAndInjection(t *testing.T) {
	dir := goFixture(t)
	outside := t.TempDir()
	write(t, outside, "secret.txt", "TOP SECRET\n")
	write(t, dir, "notes.txt", "--help\n-e\n$(touch pwned)\n")
	h := newHarness(t, dir)
	rel := "../" + filepath.Base(outside)
	srv := fm.NewChatCompletions(fm.Script{Turns: []fm.Turn{
		call("list_dir", map[string]any{"path": rel}),                                  // 0
		call("grep", map[string]any{"pattern": "SECRET", "path": rel}),                 // 1
		call("grep", map[string]any{"pattern": "--help"}),                              // 2: a pattern, not an option
		call("grep", map[string]any{"pattern": "-e", "path": "notes.txt"}),             // 3
		call("grep", map[string]any{"pattern": "$(touch pwned)", "path": "notes.txt"}), // 4: a (bad) regexp, never a shell
		call("read_file", map[string]any{"path": "$(touch pwned2).go"}),                // 5: just a missing file
		call("statewright_transition", map[string]any{"event": "FAIL"}),
	}})
	defer srv.Close()
	res, err := agent.Run(context.Background(), h.config(srv, "bugfix", "look", ""))
	if err != nil {
		t.Fatal(err)
	}
	if res.FinalState != "failed" {
		t.Fatalf("result %+v", res)
	}
	answers := map[int]string{}
	for i, r := range srv.MainRequests()[1:] {
		c, _ := r.Chat()
		answers[i] = c.Messages[len(c.Messages)-1].Text()
	}
	for _, i := range []int{0, 1} {
		if !strings.Contains(answers[i], "outside the workspace") || strings.Contains(answers[i], "SECRET") {
			t.Errorf("call %d answered %q", i, answers[i])
		}
	}
	if !strings.Contains(answers[2], "notes.txt:1: --help") {
		t.Errorf("grep --help answered %q", answers[2])
	}
	if strings.TrimSpace(answers[3]) != "notes.txt:2: -e" {
		t.Errorf("grep -e answered %q", answers[3])
	}
	for _, f := range []string{"pwned", "pwned2"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("model text ran as a command: %s exists", f)
		}
	}
}

// TestMaxIterationsDenies: at a state's max_iterations the runtime denies
// further calls (it never lets them through unchecked) and the model is
// told to transition.
func TestMaxIterationsDenies(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.txt", "a\n")
	write(t, dir, "wf.json", `{"id": "capped", "initial": "look",
  "states": {"look": {"allowed_tools": ["Read"], "max_iterations": 2, "on": {"DONE": "done", "FAIL": "failed"}},
             "done": {"type": "final"}, "failed": {"type": "final"}}}`)
	h := newHarness(t, dir)
	srv := fm.NewChatCompletions(fm.Script{Turns: []fm.Turn{
		call("read_file", map[string]any{"path": "a.txt", "start_line": 1}),
		call("read_file", map[string]any{"path": "a.txt", "start_line": 2}),
		call("read_file", map[string]any{"path": "a.txt", "start_line": 3}),
		call("statewright_transition", map[string]any{"event": "DONE"}),
	}})
	defer srv.Close()
	res, err := agent.Run(context.Background(), h.config(srv, filepath.Join(dir, "wf.json"), "read", ""))
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != events.OutcomeSuccess || res.Denials != 1 {
		t.Fatalf("result %+v", res)
	}
	evs, _ := h.st.Events(context.Background(), store.EventFilter{RunID: res.RunID, Kinds: []store.EventKind{store.KindDecision}})
	found := false
	for _, e := range evs {
		found = found || e.Rule == "max-iterations" && e.Decision == "deny"
	}
	if !found {
		t.Fatal("no max-iterations deny in the log")
	}
}
