//go:build e2e

package e2e

import (
	"os"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/internal/fakemodel"
)

// TestClaudeCodeDenyIsTheLesson checks what the model reads when the hooks
// `statewright init claude-code` installs deny a call (issue 18 item 3):
// the lesson, word for word, as the tool's error result, and nothing of the
// hook's machinery: not the hook command line (binary, store, store id)
// that Claude Code quotes after an exit-2 deny, not the wrapper's "hook
// failed … crash" text, which made a lesson look like a malfunction. It
// asserts on the tool results the fake model server received.
func TestClaudeCodeDenyIsTheLesson(t *testing.T) {
	p := newSWProject(t)
	p.cli(t, "start", p.workflow, "--session", e2eSession)
	x := p.path("x.txt")
	srv := fakemodel.NewAnthropic(script(
		fakemodel.Call(
			tool("toolu_write", "Write", map[string]any{"file_path": x, "content": "too early\n"}),
			tool("toolu_heredoc", "Bash", map[string]any{"command": "cat > " + x + " <<'EOF'\nsneaky\nEOF", "description": "write x"}),
		),
		fakemodel.Say("I will localize first."),
	), fakemodel.WithLog(t.Logf))
	r := p.claudeRun(t, srv, "--session-id", e2eSession)
	srv.Close()
	if _, err := os.Stat(x); !os.IsNotExist(err) {
		t.Fatalf("x.txt exists (stat err %v): the calls were not denied\n%s", err, r)
	}
	machinery := []string{
		"hook failed", "crash", "fail closed", "exit 2", "exit $c", // the wrapper's words
		p.bin, p.storePath, "--store", "--deadline", " hook claude-code ", "st_", // the hook command line
	}
	for id, lesson := range map[string]string{
		"toolu_write":   "statewright: Denied in phase 'localizing': Write is not allowed here (rule tool-not-allowed).",
		"toolu_heredoc": "statewright: Denied in phase 'localizing':",
	} {
		res := toolResult(t, srv, id)
		// Claude Code 2.1.332 puts its own fixed label before every
		// PreToolUse deny ("PreToolUse:Write hook error: "); the rest is
		// the lesson, and nothing else.
		text := res.Content
		if label := "PreToolUse:" + map[string]string{"toolu_write": "Write", "toolu_heredoc": "Bash"}[id] + " hook error: "; strings.HasPrefix(text, label) {
			text = strings.TrimPrefix(text, label)
		}
		if !res.IsError || !strings.HasPrefix(text, lesson) {
			t.Errorf("%s: the model read %q (is_error %v); want the lesson, starting %q", id, res.Content, res.IsError, lesson)
		}
		if !strings.Contains(res.Content, "LOCALIZED") {
			t.Errorf("%s: the lesson does not name the event that leads on: %q", id, res.Content)
		}
		for _, m := range machinery {
			if strings.Contains(res.Content, m) {
				t.Errorf("%s: the model read %q, which holds the hook's machinery %q", id, res.Content, m)
			}
		}
	}
}
