//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/statewright-go/statewright/internal/fakemodel"
)

// claudeTimeout bounds every Claude Code invocation.
const claudeTimeout = 90 * time.Second

// claudeProject is a temporary project with the test hook registered, and a
// HOME for Claude Code.
type claudeProject struct {
	bin, dir, home, hookLog string
	// env is appended to ClaudeEnv's environment for every run.
	env []string
}

// hookOpts says how the test hook is registered.
type hookOpts struct {
	// timeout is the hook's "timeout" field in seconds (0: 30).
	timeout int
	// failClosed appends "|| exit 2" to the hook command, the wrapper that
	// turns a crashing hook into a deny.
	failClosed bool
	// events are the hook events to register (none: PreToolUse).
	events []string
	// context makes the hook answer SessionStart and UserPromptSubmit with
	// additionalContext and block the first Stop.
	context bool
}

func newClaudeProject(t *testing.T) *claudeProject {
	return newClaudeProjectWith(t, hookOpts{})
}

func newClaudeProjectWith(t *testing.T, opts hookOpts) *claudeProject {
	t.Helper()
	bin, err := ClaudeBinary()
	if err != nil {
		t.Fatal(err)
	}
	// A short HOME: Claude Code's sockets live under it (see ClaudeHome).
	home, err := os.MkdirTemp("", "cc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	p := &claudeProject{bin: bin, dir: t.TempDir(), home: home}
	// Resolve symlinks so paths compare equal to what the harness reports.
	if p.dir, err = filepath.EvalSymlinks(p.dir); err != nil {
		t.Fatal(err)
	}
	p.hookLog = filepath.Join(t.TempDir(), "hook.jsonl")
	if opts.timeout == 0 {
		opts.timeout = 30
	}
	p.writeSettings(t, hookSettings(t, p.hookLog, opts))
	if err := ClaudeHome(p.home, p.dir); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeSettings writes the project's .claude/settings.json.
func (p *claudeProject) writeSettings(t *testing.T, settings map[string]any) {
	t.Helper()
	b, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(p.dir, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.dir, ".claude", "settings.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// run runs claude -p prompt with args against srv and fails the test if it
// timed out.
func (p *claudeProject) run(t *testing.T, srv *fakemodel.Server, prompt string, args ...string) *Run {
	t.Helper()
	argv := append([]string{"-p", prompt, "--output-format", "stream-json", "--verbose"}, args...)
	r, err := RunCommand(context.Background(), claudeTimeout, p.dir, ClaudeEnv(p.home, srv.URL, p.env...), p.bin, argv...)
	if err != nil {
		t.Fatalf("start claude: %v", err)
	}
	t.Logf("claude ran in %v (exit %d)", r.Elapsed.Round(time.Millisecond), r.ExitCode)
	if r.TimedOut {
		t.Fatalf("claude timed out after %v\n%s\nrequests:\n%s", claudeTimeout, r, srv.Summary())
	}
	return r
}

func (p *claudeProject) path(name string) string { return filepath.Join(p.dir, name) }

// writes returns a turn that Writes each named file in parallel, then a
// final text turn.
func (p *claudeProject) writes(names ...string) []fakemodel.Turn {
	var uses []fakemodel.ToolUse
	for _, n := range names {
		uses = append(uses, fakemodel.Tool("Write", map[string]any{"file_path": p.path(n), "content": n + "\n"}))
	}
	return []fakemodel.Turn{fakemodel.Call(uses...), fakemodel.Say("done")}
}

func (p *claudeProject) exists(name string) bool {
	_, err := os.Stat(p.path(name))
	return err == nil
}
