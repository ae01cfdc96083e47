//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/internal/fakemodel"
	"github.com/statewright-go/statewright/sandbox"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/sqlite"
)

// sandboxWorkflow: an implementing phase that lets Exec run inside the OS
// sandbox, then a testing phase.
const sandboxWorkflow = `{
  "id": "e2e-sandbox",
  "initial": "implementing",
  "states": {
    "implementing": {
      "allowed_tools": ["Read", "Edit", "Write", "Bash"],
      "sandbox": {"exec": true},
      "on": {"IMPLEMENTED": "testing"}
    },
    "testing": {
      "allowed_tools": ["Read", "Bash"],
      "allowed_commands": ["go test"],
      "on": {"TESTS_PASS": "done"}
    },
    "done": {"type": "final"}
  }
}`

// sandboxCache is a Go build cache shared by the e2e runs of the sandbox
// (the sandbox's own cache, never the user's), so that only the first run
// compiles the standard library.
func sandboxCacheHome(t *testing.T) string {
	d := filepath.Join(os.TempDir(), "statewright-e2e-sandbox-xdg-cache")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestClaudeCodeSandbox drives the real Claude Code with the hooks `init
// claude-code --sandbox` installs: every Bash call is rewritten to run
// under the phase's OS sandbox. In implementing, a python3 write to
// .claude/settings.local.json (spelled so the static law cannot see it) fails on
// disk, the operator token reads as nothing, while the same session's Write
// lands, a cd carries over to the next call, and go test passes.
func TestClaudeCodeSandbox(t *testing.T) {
	p := newSWProject(t, "--sandbox", "--require-workflow")
	wf := filepath.Join(filepath.Dir(p.workflow), "sandbox.json")
	if err := os.WriteFile(wf, []byte(sandboxWorkflow), 0o644); err != nil {
		t.Fatal(err)
	}
	settingsBefore, err := os.ReadFile(p.path(".claude/settings.local.json"))
	if err != nil {
		t.Fatal(err)
	}
	tokenDir := filepath.Join(p.home, ".config", "statewright")
	os.MkdirAll(tokenDir, 0o700)
	const token = "swop_e2e_sandbox_secret_token"
	if err := os.WriteFile(filepath.Join(tokenDir, "operator-token"), []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p.path("go.mod"), []byte("module calc\n\ngo 1.21\n"), 0o644)
	os.WriteFile(p.path("calc_test.go"), []byte("package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"Add(2, 3) != 5\")\n\t}\n}\n"), 0o644)
	p.cli(t, "start", wf, "--session", e2eSession)

	pyWrite := `python3 -c 'import os; open(os.path.join(".cla"+"ude", "settings.local.json"), "w").write("{}")'`
	pyToken := `python3 -c 'import os, glob; d = os.path.expanduser("~/.con" + "fig/state" + "wright"); print("entries:", os.listdir(d) if os.path.isdir(d) else "none"); [print(open(f).read()) for f in glob.glob(d + "/*")]'`
	srv := fakemodel.NewAnthropic(script(
		fakemodel.Call(tool("toolu_write", "Write", map[string]any{"file_path": p.path("calc.go"), "content": "package calc\n\nfunc Add(a, b int) int { return a + b }\n"})),
		fakemodel.Call(tool("toolu_py", "Bash", map[string]any{"command": pyWrite, "description": "write settings"})),
		fakemodel.Call(tool("toolu_tok", "Bash", map[string]any{"command": pyToken, "description": "read the token"})),
		fakemodel.Call(tool("toolu_cd", "Bash", map[string]any{"command": "mkdir -p sub && cd sub", "description": "cd"})),
		fakemodel.Call(tool("toolu_pwd", "Bash", map[string]any{"command": "pwd && echo \"go: $(command -v go)\" && echo \"sh-pid=$$\"", "description": "pwd"})),
		fakemodel.Call(tool("toolu_pipe", "Bash", map[string]any{"command": "grep PPid /proc/self/status | cat", "description": "pipeline"})),
		fakemodel.Call(tool("toolu_list", "Bash", map[string]any{"command": "cd .. && grep PPid /proc/self/status > ppid.txt 2>&1 && cat ppid.txt && cd sub", "description": "list"})),
		fakemodel.Call(tool("toolu_test", "Bash", map[string]any{"command": "cd .. && go test ./... 2>&1", "description": "test", "timeout": 600000})),
		fakemodel.Say("Done."),
	), fakemodel.WithLog(t.Logf))
	defer srv.Close()
	argv := []string{"-p", "Fix the bug.", "--output-format", "stream-json", "--verbose", "--permission-mode", "bypassPermissions", "--session-id", e2eSession}
	r, err := RunCommand(context.Background(), 3*claudeTimeout, p.dir, ClaudeEnv(p.home, srv.URL, "XDG_CACHE_HOME="+sandboxCacheHome(t), "PATH="+os.Getenv("PATH")), p.claude, argv...)
	if err != nil {
		t.Fatal(err)
	}
	if r.TimedOut {
		t.Fatalf("claude timed out\n%s\n%s", r, srv.Summary())
	}

	// On disk: the Write landed, the settings did not change.
	if b, _ := os.ReadFile(p.path("calc.go")); !strings.Contains(string(b), "a + b") {
		t.Errorf("calc.go = %q: the allowed Write did not land", b)
	}
	if b, _ := os.ReadFile(p.path(".claude/settings.local.json")); string(b) != string(settingsBefore) {
		t.Errorf(".claude/settings.local.json changed under the sandbox:\n%s", b)
	}
	py := toolResult(t, srv, "toolu_py")
	if !strings.Contains(py.Content, "Read-only file system") {
		t.Errorf("python3 write: %+v; want the sandbox's read-only error", py)
	}
	// The token never reaches the model.
	for _, req := range srv.MainRequests() {
		if strings.Contains(string(req.Body), token) {
			t.Fatalf("the operator token reached the model in request #%d", req.Seq)
		}
	}
	if tok := toolResult(t, srv, "toolu_tok"); !strings.Contains(tok.Content, "entries: []") {
		t.Errorf("token read: %+v; want an empty directory", tok)
	}
	// cd carries over between calls, which ran in the phase's sandbox (a
	// command with a bubblewrap of its own is PID 1 there).
	if pwd := toolResult(t, srv, "toolu_pwd"); !strings.Contains(pwd.Content, p.path("sub")) || !strings.Contains(pwd.Content, "sh-pid=") || strings.Contains(pwd.Content, "sh-pid=1\n") {
		t.Errorf("pwd after cd: %+v; want %s, run by the phase's sandbox", pwd, p.path("sub"))
	}
	// A pipeline of literal commands ran without the inner bash: the
	// hook recorded its elements and the phase's server ran the programs
	// itself, so grep's parent is the server (PID 1 of the sandbox), not
	// a bash (docs/sandbox.md, "Direct exec of literal pipelines").
	if pipe := toolResult(t, srv, "toolu_pipe"); pipe.IsError || !regexp.MustCompile(`PPid:\s+1\b`).MatchString(pipe.Content) {
		t.Errorf("grep PPid /proc/self/status | cat: %+v; want PPid 1 (run directly by the phase's server)", pipe)
	}
	// So did a list with cd and a redirection (docs/sandbox.md, "Direct
	// exec of literal lists"): the file is on disk, and the directory it
	// ended in (sub) carried over to the test's `cd ..`.
	if list := toolResult(t, srv, "toolu_list"); list.IsError || !regexp.MustCompile(`PPid:\s+1\b`).MatchString(list.Content) {
		t.Errorf("cd .. && grep … > ppid.txt && cat ppid.txt && cd sub: %+v; want PPid 1 (run directly by the phase's server)", list)
	}
	if b, _ := os.ReadFile(p.path("ppid.txt")); !regexp.MustCompile(`PPid:\s+1\b`).Match(b) {
		t.Errorf("ppid.txt = %q; want the redirection's output", b)
	}
	// The session's end stopped the phase's sandbox.
	root := filepath.Join(sandboxCacheHome(t), "statewright", "sandbox")
	if b, err := os.ReadFile(filepath.Join(sandbox.ServerDir(root), filepath.Base(sandbox.SessionDir(root, "claude-code:"+e2eSession))+".json")); err == nil {
		t.Errorf("the phase's sandbox still runs after the session ended: %s", b)
	}
	if res := toolResult(t, srv, "toolu_test"); res.IsError || !strings.Contains(res.Content, "ok") || !strings.Contains(res.Content, "calc") {
		t.Errorf("go test: %+v", res)
	}
	// The sandbox's refusal taught (PostToolUse context reaches the model).
	found := false
	for _, req := range srv.MainRequests() {
		if strings.Contains(string(req.Body), "OS sandbox keeps") && strings.Contains(string(req.Body), "read-only in every phase") {
			found = true
		}
	}
	if !found {
		t.Errorf("no sandbox lesson reached the model\n%s", srv.Summary())
	}

	// The store: the shell calls were decided as sandboxed.
	n := sandboxedDecisions(t, p.storePath)
	if n < 5 {
		t.Errorf("%d Bash decisions recorded as sandboxed, want 5", n)
	}
	t.Logf("claude:\n%s", r)
}

// sandboxedDecisions counts the Bash decisions of the e2e session's run
// that the store records as sandboxed.
func sandboxedDecisions(t *testing.T, storePath string) int {
	t.Helper()
	st, err := sqlite.Open(context.Background(), storePath, sqlite.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	evs, err := st.Events(context.Background(), store.EventFilter{SessionKey: "claude-code:" + e2eSession})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.Kind == store.KindDecision && e.Tool == "Bash" && strings.Contains(string(e.Data), `"sandboxed":true`) {
			n++
		}
	}
	return n
}
