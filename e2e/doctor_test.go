//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/statewright-go/statewright/internal/fakemodel"
	"github.com/statewright-go/statewright/store"
)

// doctor runs `statewright doctor --project dir args...` with env added to
// the test's environment, and returns its stdout and exit code.
func doctor(t *testing.T, bin, dir string, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"doctor", "--project", dir}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("statewright doctor: %v", err)
	}
	t.Logf("doctor (exit %d):\n%s%s", code, stdout.String(), stderr.String())
	return stdout.String(), code
}

// hasLine reports whether out has a line matching the regular expression.
func hasLine(out, re string) bool {
	return regexp.MustCompile(`(?m)` + re).MatchString(out)
}

// TestDoctorClaudeCodePermissionMode checks the permission mode doctor
// says a Claude Code session starts in against the mode the real Claude
// Code reports to the hooks: with no defaultMode in any settings file
// (doctor must not claim default as certain: a gated auto default exists),
// then with the user's settings saying plan and the project's shared
// settings saying acceptEdits (the project's wins).
func TestDoctorClaudeCodePermissionMode(t *testing.T) {
	p := newSWProject(t)
	if out, err := p.initCommand("init", "claude-code", "--project", p.dir, "--store", p.storePath, "--no-mcp",
		"--default-workflow", p.workflow).CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	env := []string{"HOME=" + p.home, "XDG_CONFIG_HOME=", "CLAUDE_CONFIG_DIR=", "CODEX_HOME=" + filepath.Join(p.home, ".codex")}
	// reported runs claude -p (no --permission-mode) with one Read, and
	// returns the permission mode its PreToolUse hook input carried, as
	// the store recorded it with the decision.
	reported := func() string {
		t.Helper()
		srv := fakemodel.NewAnthropic(script(
			fakemodel.Call(tool("call_read", "Read", map[string]any{"file_path": p.path("main.txt")})),
			fakemodel.Say("Done."),
		), fakemodel.WithLog(t.Logf))
		defer srv.Close()
		argv := []string{"-p", "Look at main.txt.", "--output-format", "stream-json", "--verbose"}
		r, err := RunCommand(t.Context(), claudeTimeout, p.dir, ClaudeEnv(p.home, srv.URL), p.claude, argv...)
		if err != nil || r.TimedOut {
			t.Fatalf("claude: %v\n%v", err, r)
		}
		var evs []store.Event
		if err := json.Unmarshal([]byte(p.cli(t, "history", "--json", sessionOf(t, r))), &evs); err != nil {
			t.Fatalf("history --json: %v", err)
		}
		for _, e := range evs {
			var d struct {
				PermissionMode string `json:"permission_mode"`
			}
			if e.Kind == store.KindDecision && e.ToolUseID == "call_read" && json.Unmarshal(e.Data, &d) == nil {
				return d.PermissionMode
			}
		}
		t.Fatalf("no decision recorded for call_read\n%s", r)
		return ""
	}

	out, _ := doctor(t, p.bin, p.dir, env, "--claude", p.claude)
	if !hasLine(out, `^ok    claude +Claude Code `+regexp.QuoteMeta(ClaudeCodeVersion)) || !hasLine(out, `^ok    canary +.*rule self-protect`) ||
		!hasLine(out, `^warn  permission +no settings file sets permissions.defaultMode: Claude Code `+regexp.QuoteMeta(ClaudeCodeVersion)+
			` starts in mode default, .*unless Claude Code's gated auto-mode default is on`) {
		t.Fatalf("doctor: want Claude Code's version, a passing canary and the mode a session starts in, with its caveat\n%s", out)
	}
	if mode := reported(); mode != "default" {
		t.Errorf("with no defaultMode set, Claude Code reported %q to the hook; doctor says default", mode)
	}

	// The user's settings say plan, the project's shared settings
	// acceptEdits: the project's win, in doctor and in Claude Code.
	writeJSON := func(path string, v any) {
		t.Helper()
		b, _ := json.Marshal(v)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeJSON(filepath.Join(p.home, ".claude", "settings.json"), map[string]any{"permissions": map[string]any{"defaultMode": "plan"}})
	writeJSON(p.path(filepath.Join(".claude", "settings.json")), map[string]any{"permissions": map[string]any{"defaultMode": "acceptEdits"}})
	out, _ = doctor(t, p.bin, p.dir, env, "--claude", p.claude)
	if !hasLine(out, `^ok    permission +sessions start in mode acceptEdits \(permissions.defaultMode in `+regexp.QuoteMeta(p.path(".claude/settings.json"))+`\)`) {
		t.Fatalf("doctor: want mode acceptEdits from the project's settings\n%s", out)
	}
	if mode := reported(); mode != "acceptEdits" {
		t.Errorf("Claude Code reported %q to the hook; doctor says acceptEdits", mode)
	}
}

// sessionOf returns the session id a Claude Code stream-json run reported.
func sessionOf(t *testing.T, r *Run) string {
	t.Helper()
	for _, ev := range r.Events() {
		if id, ok := ev["session_id"].(string); ok && id != "" {
			return id
		}
	}
	t.Fatalf("claude reported no session id\n%s", r)
	return ""
}
