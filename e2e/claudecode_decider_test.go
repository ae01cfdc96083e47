//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/internal/fakemodel"
)

// hookClientBinary builds cmd/statewright-hook once per test process.
func hookClientBinary(t *testing.T) string {
	t.Helper()
	return hookClientBuild.get(t, "./cmd/statewright-hook", "statewright-hook")
}

// TestClaudeCodeThinClient drives the real Claude Code through hooks that
// `statewright init claude-code` wrote with the thin client installed
// beside the binary: the first hook finds no decider and is decided by the
// full binary, which the client starts one for; the rest go through the
// decider. What the law decides is the same: a denied Edit and a denied
// shell write leave nothing on disk and teach, an allowed Read runs, the
// Stop hook keeps the agent working, and every call is in the store.
func TestClaudeCodeThinClient(t *testing.T) {
	p := newSWProject(t)
	client := filepath.Join(filepath.Dir(p.bin), "statewright-hook")
	src, err := os.ReadFile(hookClientBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(client, src, 0o755); err != nil {
		t.Fatal(err)
	}
	// init again, as the operator whose HOME Claude Code runs with: the
	// hooks now run the client, and the key lands where the client and
	// the decider look.
	env := append(os.Environ(), "HOME="+p.home, "XDG_CONFIG_HOME=")
	cmd := exec.Command(p.bin, "init", "claude-code", "--project", p.dir, "--store", p.storePath, "--no-mcp")
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	settings, err := os.ReadFile(p.path(".claude/settings.local.json"))
	if err != nil {
		settings, err = os.ReadFile(p.path(".claude/settings.json"))
	}
	if err != nil || !strings.Contains(string(settings), "'"+client+"' hook claude-code pre-tool-use") ||
		strings.Contains(string(settings), "'"+p.bin+"' hook claude-code") {
		t.Fatalf("init did not write the thin client into every hook (%v):\n%s", err, settings)
	}
	deciderCmd := func(args ...string) *exec.Cmd {
		c := exec.Command(p.bin, append([]string{"decider"}, args...)...)
		c.Env = env
		return c
	}
	defer func() {
		if out, err := deciderCmd("status").Output(); err == nil {
			var st struct{ Pid int }
			if json.Unmarshal(out, &st) == nil && st.Pid > 0 {
				killPid(st.Pid)
			}
		}
	}()

	p.cli(t, "start", p.workflow, "--session", e2eSession)
	x := p.path("x.txt")
	srv := fakemodel.NewAnthropic(script(
		fakemodel.Call(tool("toolu_read", "Read", map[string]any{"file_path": p.path("main.txt")})),
		fakemodel.Call(
			tool("toolu_shellwrite", "Bash", map[string]any{"command": "echo sneaky > " + x, "description": "write x"}),
			tool("toolu_edit", "Edit", map[string]any{"file_path": p.path("main.txt"), "old_string": "old line", "new_string": "new line"}),
		),
		fakemodel.Say("I cannot edit yet."),
	), fakemodel.WithLog(t.Logf))
	r := p.claudeRun(t, srv, "--session-id", e2eSession)
	srv.Close()

	if res := toolResult(t, srv, "toolu_read"); res.IsError || !strings.Contains(res.Content, "old line") {
		t.Errorf("the allowed Read: %+v\n%s", res, r)
	}
	if _, err := os.Stat(x); !os.IsNotExist(err) {
		t.Errorf("x.txt exists (stat err %v): the shell write was not denied", err)
	}
	if b, _ := os.ReadFile(p.path("main.txt")); string(b) != "old line\n" {
		t.Errorf("main.txt = %q: the Edit was not denied", b)
	}
	for _, id := range []string{"toolu_shellwrite", "toolu_edit"} {
		if res := toolResult(t, srv, id); !res.IsError || !strings.Contains(res.Content, "localizing") || !strings.Contains(res.Content, "LOCALIZED") {
			t.Errorf("%s: %+v; want a deny naming the phase and the next event", id, res)
		}
	}
	var sawStopBlock bool
	for _, q := range srv.MainRequests() {
		if strings.Contains(string(q.Body), "which is not final") {
			sawStopBlock = true
		}
	}
	if !sawStopBlock {
		t.Errorf("the Stop hook did not keep the agent working\n%s", srv.Summary())
	}

	// The decider answered the hooks after the first, and outlived the
	// session's process group.
	out, err := deciderCmd("status").Output()
	if err != nil {
		t.Fatalf("no decider runs after the session: %v", err)
	}
	var st struct {
		Requests int64
		Binary   string
	}
	if err := json.Unmarshal(out, &st); err != nil || st.Requests < 4 || st.Binary != p.bin {
		t.Errorf("decider status %s (%v): want at least 4 hooks answered by a decider of %s", out, err, p.bin)
	}

	// Every tool call is in the audit trail, decided as the law says.
	var evs []struct {
		Kind      string `json:"kind"`
		ToolUseID string `json:"tool_use_id"`
		Decision  string `json:"decision"`
	}
	if err := json.Unmarshal([]byte(p.cli(t, "history", e2eSession, "--json")), &evs); err != nil {
		t.Fatal(err)
	}
	decisions := map[string]string{}
	for _, e := range evs {
		if e.Kind == "decision" {
			decisions[e.ToolUseID] = e.Decision
		}
	}
	for id, want := range map[string]string{"toolu_read": "allow", "toolu_shellwrite": "deny", "toolu_edit": "deny"} {
		if decisions[id] != want {
			t.Errorf("history: %s decided %q, want %q (%v)", id, decisions[id], want, decisions)
		}
	}
}
