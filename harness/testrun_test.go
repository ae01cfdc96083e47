package harness

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/testreport/testrun"
)

func allowed(reason string) runtime.DecideResult {
	return runtime.DecideResult{Decision: policy.Decision{Verdict: policy.Allow, Reason: reason}, Enforced: true, State: "testing"}
}

func input(command string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"command": command, "description": "run it"})
	return b
}

func commandOf(t *testing.T, in json.RawMessage) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(in, &m); err != nil {
		t.Fatalf("input %s: %v", in, err)
	}
	if m["description"] != "run it" {
		t.Errorf("the other arguments were lost: %s", in)
	}
	s, _ := m["command"].(string)
	return s
}

// TestRouteRewrite: outside the sandbox, only an allowed, enforced plain
// test command of the shell tool is rewritten to run through testrun.
func TestRouteRewrite(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	h := &Hook{}
	deny := allowed("")
	deny.Verdict = policy.Deny
	audit := allowed("")
	audit.Enforced = false
	for _, tc := range []struct {
		name    string
		command string
		shell   bool
		res     runtime.DecideResult
		rewrite bool
	}{
		{"go test", "go test ./...", true, allowed("allowed"), true},
		{"pytest with env and a wrapper", "PYTEST_ADDOPTS=-q timeout 60 pytest", true, allowed("allowed"), true},
		{"not a test command", "ls -la", true, allowed("allowed"), false},
		{"a piped test run", "go test ./... | tee log", true, allowed("allowed"), false},
		{"denied", "go test ./...", true, deny, false},
		{"audit-only", "go test ./...", true, audit, false},
		{"not the shell tool", "go test ./...", false, allowed("allowed"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tcall := runtime.ToolCall{Session: "pi:s1", Call: policy.ToolCall{Tool: "bash", ToolUseID: "call_" + strings.ReplaceAll(tc.name, " ", "_"), ProjectDir: "/p"}}
			r, why := h.RouteShell(&tcall, tc.shell)
			if why != "" || r == nil || tcall.Sandbox != nil {
				t.Fatalf("RouteShell = %v, %q, sandbox %v; want a route outside the sandbox", r, why, tcall.Sandbox)
			}
			out, reason, err := r.Rewrite(tc.res, input(tc.command))
			if err != nil {
				t.Fatal(err)
			}
			if !tc.rewrite {
				if out != nil {
					t.Fatalf("Rewrite = %s; want the call as it is", out)
				}
				return
			}
			got := commandOf(t, out)
			dir, _ := testCallDir(tcall.Session, tcall.Call.ToolUseID)
			bin, _ := selfPath()
			if want := testrun.Command(bin, dir, tc.command); got != want {
				t.Errorf("rewritten command %q; want %q", got, want)
			}
			if !strings.Contains(reason, "allowed") || !strings.Contains(reason, "structured report") {
				t.Errorf("reason %q", reason)
			}
			if cmd, _, marked := testrun.ReadCall(dir); !marked || cmd != tc.command {
				t.Errorf("the call's directory is marked %v with %q", marked, cmd)
			}
		})
	}
}

// TestTestRunAfter runs a real test command the way the rewritten call
// does (testrun.RunCall) and checks that the result event takes its
// evidence only when the harness ran the rewritten command.
func TestTestRunAfter(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	project := t.TempDir()
	os.WriteFile(filepath.Join(project, "test_a.py"), []byte("import unittest\n\nclass T(unittest.TestCase):\n    def test_a(self):\n        pass\n"), 0o644)
	t.Chdir(project)
	const command = "python3 -m unittest"
	run := func(t *testing.T, session, id string) (rewritten json.RawMessage) {
		t.Helper()
		tcall := runtime.ToolCall{Session: session, Call: policy.ToolCall{Tool: "bash", ToolUseID: id, ProjectDir: project}}
		r, _ := (&Hook{}).RouteShell(&tcall, true)
		out, _, err := r.Rewrite(allowed("ok"), input(command))
		if err != nil || out == nil {
			t.Fatalf("Rewrite = %s, %v", out, err)
		}
		dir, _ := testCallDir(session, id)
		var stdout, stderr bytes.Buffer
		if code := testrun.RunCall(dir, command, nil, &stdout, &stderr); code != 0 {
			t.Fatalf("RunCall exited %d\n%s%s", code, stdout.String(), stderr.String())
		}
		return out
	}

	t.Run("the rewritten command ran", func(t *testing.T) {
		out := run(t, "pi:s1", "call_1")
		tr := runtime.ToolResult{Session: "pi:s1", ToolUseID: "call_1", Call: policy.ToolCall{Input: out}}
		if !TestRunAfter(&tr, ShellKey) {
			t.Fatal("TestRunAfter: the call did not run through testrun")
		}
		if ev := tr.TestReport; ev == nil || !ev.Passed || ev.Counts.Run != 1 || ev.Narrowed {
			t.Fatalf("evidence %+v; want one test passed, not narrowed", tr.TestReport)
		}
		if got := commandOf(t, tr.Call.Input); got != command {
			t.Errorf("the result records %q; want the agent's own command", got)
		}
		if dir, _ := testCallDir("pi:s1", "call_1"); exists(dir) {
			t.Error("the call's directory is left behind")
		}
	})

	t.Run("a planted mark for a call that was not rewritten", func(t *testing.T) {
		// An earlier command leaves a mark and evidence in the directory
		// of a call id it predicts; that call then runs something else.
		run(t, "pi:s1", "call_2")
		tr := runtime.ToolResult{Session: "pi:s1", ToolUseID: "call_2", Call: policy.ToolCall{Input: input("echo ok")}}
		if TestRunAfter(&tr, ShellKey) || tr.TestReport != nil {
			t.Fatalf("evidence %+v taken for a call that ran %q", tr.TestReport, "echo ok")
		}
		if got := commandOf(t, tr.Call.Input); got != "echo ok" {
			t.Errorf("the result records %q; want what ran", got)
		}
	})

	t.Run("marking clears what an earlier command left", func(t *testing.T) {
		dir, _ := testCallDir("pi:s1", "call_3")
		os.MkdirAll(dir, 0o700)
		os.WriteFile(filepath.Join(dir, "test-evidence.json"), []byte(`{"passed":true}`), 0o600)
		tcall := runtime.ToolCall{Session: "pi:s1", Call: policy.ToolCall{Tool: "bash", ToolUseID: "call_3", ProjectDir: project}}
		r, _ := (&Hook{}).RouteShell(&tcall, true)
		out, _, _ := r.Rewrite(allowed("ok"), input(command))
		// The rewritten command never ran: no evidence.
		tr := runtime.ToolResult{Session: "pi:s1", ToolUseID: "call_3", Call: policy.ToolCall{Input: out}}
		if !TestRunAfter(&tr, ShellKey) || tr.TestReport != nil {
			t.Fatalf("evidence %+v; want none (the planted file is gone)", tr.TestReport)
		}
	})

	t.Run("a call never marked", func(t *testing.T) {
		tr := runtime.ToolResult{Session: "pi:s1", ToolUseID: "call_4", Call: policy.ToolCall{Input: input(command)}}
		if TestRunAfter(&tr, ShellKey) || tr.TestReport != nil {
			t.Fatalf("TestRunAfter took evidence %+v for an unmarked call", tr.TestReport)
		}
	})
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
