package e2e

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The helpers' own tests: they need no harness and run in every go test.

func TestInstallScriptPinsClaudeCodeVersion(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "scripts", "install-harnesses.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^CLAUDE_CODE_VERSION=(\S+)$`).FindSubmatch(b)
	if m == nil || string(m[1]) != ClaudeCodeVersion {
		t.Fatalf("install-harnesses.sh pins %q, e2e.ClaudeCodeVersion is %q: keep them equal", m, ClaudeCodeVersion)
	}
}

func TestClaudeEnvDoesNotLeakTheCallersEnvironment(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "real-secret")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "real-token")
	t.Setenv("CLAUDE_CODE_SESSION_ID", "outer-session")
	env := ClaudeEnv("/h", "http://127.0.0.1:1", "EXTRA=1", "IS_SANDBOX=")
	got := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		got[k] = v // later entries win, as with exec.Cmd
	}
	if got["ANTHROPIC_API_KEY"] != "fakemodel" || got["ANTHROPIC_BASE_URL"] != "http://127.0.0.1:1" || got["HOME"] != "/h" || got["TMPDIR"] != "/h/tmp" {
		t.Errorf("env %v", got)
	}
	if _, ok := got["ANTHROPIC_AUTH_TOKEN"]; ok {
		t.Error("ANTHROPIC_AUTH_TOKEN leaked")
	}
	if _, ok := got["CLAUDE_CODE_SESSION_ID"]; ok {
		t.Error("CLAUDE_CODE_SESSION_ID leaked")
	}
	if got["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] != "1" || got["EXTRA"] != "1" || got["IS_SANDBOX"] != "" {
		t.Errorf("env %v", got)
	}
}

func TestClaudeHomeSkipsOnboarding(t *testing.T) {
	home := t.TempDir()
	if err := ClaudeHome(home, "/proj"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(home, ".claude.json"))
	if err != nil || !strings.Contains(string(b), `"hasCompletedOnboarding": true`) || !strings.Contains(string(b), `"/proj"`) {
		t.Errorf(".claude.json = %s, %v", b, err)
	}
	if fi, err := os.Stat(filepath.Join(home, "tmp")); err != nil || !fi.IsDir() {
		t.Errorf("home/tmp: %v", err)
	}
}

// TestRunCommandKillsTheGroupOnTimeout starts a shell that leaves a
// background child; at the deadline both must be gone.
func TestRunCommandKillsTheGroupOnTimeout(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	start := time.Now()
	r, err := RunCommand(context.Background(), time.Second, dir, []string{"PATH=/usr/bin:/bin"},
		"/bin/sh", "-c", "sleep 60 & echo $! > "+pidFile+"; echo started; wait")
	if err != nil {
		t.Fatal(err)
	}
	if !r.TimedOut || r.ExitCode != -1 || time.Since(start) > 20*time.Second {
		t.Errorf("run = timed out %v, exit %d, after %v", r.TimedOut, r.ExitCode, time.Since(start))
	}
	if !strings.Contains(string(r.Stdout), "started") {
		t.Errorf("stdout %q", r.Stdout)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	deadline := time.Now().Add(5 * time.Second)
	for processExists(pid) {
		// A killed child may linger as a zombie until init reaps it; check
		// its state rather than its existence.
		if st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil && strings.Contains(string(st), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("background child %d survived the timeout", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestRunCommandReportsExitCodeAndEvents(t *testing.T) {
	r, err := RunCommand(context.Background(), 10*time.Second, t.TempDir(), []string{"PATH=/usr/bin:/bin"},
		"/bin/sh", "-c", `echo '{"type":"system"}'; echo 'not json'; echo '{"type":"result","result":"ok"}'; echo oops >&2; exit 3`)
	if err != nil {
		t.Fatal(err)
	}
	if r.ExitCode != 3 || r.TimedOut || strings.TrimSpace(string(r.Stderr)) != "oops" {
		t.Errorf("run %+v", r)
	}
	if evs := r.Events(); len(evs) != 2 {
		t.Errorf("events %v", evs)
	}
	if res := r.Result(); res["result"] != "ok" {
		t.Errorf("result %v", res)
	}
	if _, err := RunCommand(context.Background(), time.Second, t.TempDir(), nil, "/nonexistent/binary"); err == nil {
		t.Error("starting a missing binary gave no error")
	}
}
