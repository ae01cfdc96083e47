//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
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

// TestClaudeCodeSmoke drives the real Claude Code through three scripted
// turns in the default permission mode: a Write the hook allows, then two
// parallel Writes the hook denies (one by exit code 2, one by JSON), then a
// final text. It asserts the files on disk, what the model was told, and the
// hook input.
func TestClaudeCodeSmoke(t *testing.T) {
	p := newClaudeProject(t)
	allowed, blocked, jsondeny := p.path("allowed.txt"), p.path("blocked.txt"), p.path("jsondeny.txt")
	srv := fakemodel.NewAnthropic(fakemodel.Script{Turns: []fakemodel.Turn{
		fakemodel.Call(fakemodel.Tool("Write", map[string]any{"file_path": allowed, "content": "written through the hook\n"})),
		fakemodel.Call(
			fakemodel.Tool("Write", map[string]any{"file_path": blocked, "content": "must not exist\n"}),
			fakemodel.Tool("Write", map[string]any{"file_path": jsondeny, "content": "must not exist\n"}),
		),
		fakemodel.Say("All done."),
	}}, fakemodel.WithLog(t.Logf))
	defer srv.Close()

	r := p.run(t, srv, "Write the three files.", "--permission-mode", "default")
	if r.ExitCode != 0 {
		t.Fatalf("claude failed:\n%s", r)
	}

	// On disk: the allowed write happened, the denied ones did not.
	got, err := os.ReadFile(allowed)
	if err != nil || string(got) != "written through the hook\n" {
		t.Errorf("allowed.txt = %q, %v; want the scripted content", got, err)
	}
	for _, f := range []string{blocked, jsondeny} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("%s exists (stat err %v): the hook's deny was not enforced", filepath.Base(f), err)
		}
	}

	// The model: every turn served, and told why each denied call failed.
	if srv.Served() != 3 || srv.Overruns() != 0 {
		t.Errorf("served %d turns, %d overruns; want 3, 0\n%s", srv.Served(), srv.Overruns(), srv.Summary())
	}
	if res, ok := srv.ToolResult(srv.ToolUseID(0, 0)); !ok || res.IsError {
		t.Errorf("allowed Write result = %+v, found %v; want a success", res, ok)
	}
	for i, reason := range []string{reasonExit2, reasonJSON} {
		res, ok := srv.ToolResult(srv.ToolUseID(1, i))
		if !ok {
			t.Errorf("no tool_result for denied call %d\n%s", i, srv.Summary())
			continue
		}
		if !res.IsError || !strings.Contains(res.Content, reason) {
			t.Errorf("denied call %d: tool_result = %+v; want is_error and the hook's reason %q", i, res, reason)
		}
	}
	if res := r.Result(); res == nil || res["result"] != "All done." || res["is_error"] == true {
		t.Errorf("final result event = %v; want result \"All done.\"\n%s", res, r)
	}

	// The hook: documented PreToolUse input, once per call.
	recs := readHookLog(t, p.hookLog)
	if len(recs) != 3 {
		t.Fatalf("hook ran %d times, want 3: %v", len(recs), recs)
	}
	byPath := map[string]map[string]any{}
	for _, rec := range recs {
		in, _ := rec["tool_input"].(map[string]any)
		fp, _ := in["file_path"].(string)
		byPath[fp] = rec
	}
	first := byPath[allowed]
	if first == nil {
		t.Fatalf("no hook call for allowed.txt: %v", recs)
	}
	sid, _ := first["session_id"].(string)
	if sid == "" {
		t.Errorf("hook input has no session_id: %v", first)
	}
	for fp, rec := range byPath {
		want := map[string]any{"hook_event_name": "PreToolUse", "tool_name": "Write", "cwd": p.dir,
			"permission_mode": "default", "session_id": sid}
		for k, v := range want {
			if rec[k] != v {
				t.Errorf("hook input for %s: %s = %v, want %v", filepath.Base(fp), k, rec[k], v)
			}
		}
		if tp, _ := rec["transcript_path"].(string); !strings.HasSuffix(tp, sid+".jsonl") {
			t.Errorf("hook input transcript_path = %q, want …/%s.jsonl", tp, sid)
		}
	}
	for i, fp := range []string{allowed, blocked, jsondeny} {
		turn, idx := 0, 0
		if i > 0 {
			turn, idx = 1, i-1
		}
		if got := byPath[fp]["tool_use_id"]; got != srv.ToolUseID(turn, idx) {
			t.Errorf("hook tool_use_id for %s = %v, want %s", filepath.Base(fp), got, srv.ToolUseID(turn, idx))
		}
	}
	// The model requests carry the same session id (metadata.user_id).
	for _, req := range srv.MainRequests() {
		a, err := req.Anthropic()
		if err != nil || a.SessionID() != sid {
			t.Errorf("request #%d session = %q (%v), want the hook's %s", req.Seq, a.SessionID(), err, sid)
		}
	}
	// The hook's environment names the project and the session.
	env, _ := first["_env"].(map[string]any)
	if env["CLAUDE_PROJECT_DIR"] != p.dir || env["CLAUDE_CODE_SESSION_ID"] != sid {
		t.Errorf("hook env = %v; want CLAUDE_PROJECT_DIR=%s and CLAUDE_CODE_SESSION_ID=%s", env, p.dir, sid)
	}
}

// TestClaudeCodeVersion checks that the binary under test is the pinned
// version the contract tests describe.
func TestClaudeCodeVersion(t *testing.T) {
	bin, err := ClaudeBinary()
	if err != nil {
		t.Fatal(err)
	}
	home, err := os.MkdirTemp("", "cc")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(home)
	if err := ClaudeHome(home); err != nil {
		t.Fatal(err)
	}
	r, err := RunCommand(context.Background(), 30*time.Second, home, ClaudeEnv(home, "http://127.0.0.1:9"), bin, "--version")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(r.Stdout)); r.ExitCode != 0 || !strings.HasPrefix(got, ClaudeCodeVersion+" ") {
		t.Fatalf("claude --version = %q (exit %d), want %s: run scripts/install-harnesses.sh", got, r.ExitCode, ClaudeCodeVersion)
	}
}
