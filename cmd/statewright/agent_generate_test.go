package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	fm "github.com/statewright-go/statewright/internal/fakemodel"
)

const draftInvalid = `{"id": "fix", "initial": "nowhere", "states": {"work": {"allowed_tools": ["Read"], "on": {"DONE": "done"}}, "done": {"type": "final"}}}`

const draftValid = "Here it is:\n```json\n" + `{
  "id": "fix-it",
  "initial": "localizing",
  "states": {
    "localizing": { "allowed_tools": ["Read", "Grep"], "on": { "LOCALIZED": "fixing", "FAIL": "failed" } },
    "fixing": { "allowed_tools": ["Read", "Edit"], "on": { "FIXED": "done", "FAIL": "failed" } },
    "done": { "type": "final" },
    "failed": { "type": "final" }
  }
}` + "\n```\n"

func runSW(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command("statewright", args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

// TestGenerateFeedsErrorsBack: the model's first draft is invalid; the
// validation errors go back to it; its second draft is valid, written, and
// drawn as a graph.
func TestGenerateFeedsErrorsBack(t *testing.T) {
	srv := fm.NewChatCompletions(fm.Script{Turns: []fm.Turn{fm.Say(draftInvalid), fm.Say(draftValid)}, IsMain: func(*fm.Request) bool { return true }})
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "wf.json")
	stdout, stderr, code := runSW(t, "generate", "--task", "fix the failing test", "--model", srv.URL+"#drafter", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "round 1:") || !strings.Contains(stderr, "round 2: valid") {
		t.Fatalf("stderr:\n%s", stderr)
	}
	if !strings.Contains(stdout, "stateDiagram") || !strings.Contains(stdout, "localizing") {
		t.Fatalf("graph:\n%s", stdout)
	}
	reqs := srv.MainRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	c, _ := reqs[1].Chat()
	fb := c.Messages[len(c.Messages)-1].Text()
	if !strings.Contains(fb, "invalid") || !strings.Contains(fb, "nowhere") || !strings.Contains(fb, `"failed"`) {
		t.Fatalf("feedback %q", fb)
	}
	if _, stderr, code := runSW(t, "workflows", "validate", out); code != 0 {
		t.Fatalf("the written workflow does not validate: %s", stderr)
	}
}

// TestGenerateGivesUpAfterThreeRounds: three invalid drafts, exit 1, no file.
func TestGenerateGivesUpAfterThreeRounds(t *testing.T) {
	srv := fm.NewChatCompletions(fm.Script{Turns: []fm.Turn{fm.Say(draftInvalid), fm.Say("no JSON here"), fm.Say(draftInvalid), fm.Say(draftValid)}, IsMain: func(*fm.Request) bool { return true }})
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "wf.json")
	_, stderr, code := runSW(t, "generate", "--task", "x", "--model", srv.URL+"#drafter", "--out", out)
	if code != 1 || srv.Served() != 3 {
		t.Fatalf("exit %d after %d rounds\n%s", code, srv.Served(), stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("an invalid workflow was written")
	}
}
