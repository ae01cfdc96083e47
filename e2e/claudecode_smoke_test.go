//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/statewright-go/statewright/internal/fakemodel"
)

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
	for fp, id := range map[string]string{allowed: srv.ToolUseID(0, 0), blocked: srv.ToolUseID(1, 0), jsondeny: srv.ToolUseID(1, 1)} {
		if got := byPath[fp]["tool_use_id"]; got != id {
			t.Errorf("hook tool_use_id for %s = %v, want %s", filepath.Base(fp), got, id)
		}
	}
	if in, _ := first["tool_input"].(map[string]any); in["content"] != "written through the hook\n" {
		t.Errorf("hook tool_input = %v, want the scripted input", first["tool_input"])
	}
	// The model requests carry the same session id (metadata.user_id).
	for _, req := range srv.MainRequests() {
		a, err := req.Anthropic()
		if err != nil {
			t.Fatal(err)
		}
		if a.SessionID() != sid {
			t.Errorf("request #%d session = %q, want the hook's %s", req.Seq, a.SessionID(), sid)
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
