//go:build e2e

package e2e

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/internal/fakemodel"
	"github.com/statewright-go/statewright/store"
)

// rulesWorkflow asks a person about one shell command (an ask rule in
// Claude Code's syntax) and leaves the default secret set on.
const rulesWorkflow = `{
  "id": "e2e-rules",
  "initial": "working",
  "permissions": {"ask": ["Bash(touch asked.txt)"]},
  "states": {
    "working": {"allowed_tools": ["Read", "Grep", "Write", "Bash"], "on": {"DONE": "done"}},
    "done": {"type": "final"}
  }
}`

// e2eEnvSecret is what the project's .env holds; no tool result may carry it.
const e2eEnvSecret = "sk-e2e-do-not-leak-4471"

// newRulesProject is a project under rulesWorkflow with a .env secret.
func newRulesProject(t *testing.T) *swProject {
	t.Helper()
	p := newSWProject(t)
	if err := os.WriteFile(p.workflow, []byte(rulesWorkflow), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.path(".env"), []byte("API_KEY="+e2eEnvSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p.cli(t, "start", p.workflow, "--session", e2eSession)
	return p
}

// ruleDecisions returns the decision of each tool_use_id in the session.
func ruleDecisions(t *testing.T, p *swProject) map[string]string {
	t.Helper()
	svc, done := p.service(t)
	defer done()
	evs, err := svc.History(context.Background(), "claude-code:"+e2eSession)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range evs {
		if e.Kind == store.KindDecision {
			out[e.ToolUseID] = e.Decision
		}
	}
	return out
}

// TestClaudeCodePermissionRulesAuto: in auto mode nobody answers a prompt,
// so the ask rule's command is denied with the command a person runs, and
// touch never ran; reads of the default secret .env, by the Read tool and
// by the shell, are denied and the secret reaches no tool result.
func TestClaudeCodePermissionRulesAuto(t *testing.T) {
	p := newRulesProject(t)
	srv := fakemodel.NewAnthropic(script(
		fakemodel.Call(tool("toolu_ask", "Bash", map[string]any{"command": "touch asked.txt"})),
		fakemodel.Call(tool("toolu_read", "Read", map[string]any{"file_path": p.path(".env")})),
		fakemodel.Call(tool("toolu_cat", "Bash", map[string]any{"command": "cat .env | head -1"})),
		fakemodel.Call(tool("toolu_grep", "Bash", map[string]any{"command": "grep -r API_KEY ."})),
		fakemodel.Say("Done."),
	), fakemodel.WithLog(t.Logf))
	defer srv.Close()
	argv := []string{"-p", "Work.", "--output-format", "stream-json", "--verbose",
		"--permission-mode", "auto", "--session-id", e2eSession}
	r, err := RunCommand(context.Background(), claudeTimeout, p.dir, ClaudeEnv(p.home, srv.URL), p.claude, argv...)
	if err != nil || r.TimedOut {
		t.Fatalf("claude: %v\n%v", err, r)
	}
	ask := toolResult(t, srv, "toolu_ask")
	if !ask.IsError || !strings.Contains(ask.Content, "statewright approve claude-code:"+e2eSession) ||
		!strings.Contains(ask.Content, "permission-ask") {
		t.Errorf("ask rule in auto mode: %+v; want a deny naming `statewright approve` and rule permission-ask", ask)
	}
	if _, err := os.Stat(p.path("asked.txt")); err == nil {
		t.Error("asked.txt exists: the ask rule's command ran without a person")
	}
	for _, id := range []string{"toolu_read", "toolu_cat", "toolu_grep"} {
		res := toolResult(t, srv, id)
		if !res.IsError || !strings.Contains(res.Content, ".env") {
			t.Errorf("%s: %+v; want a deny naming .env", id, res)
		}
	}
	for _, req := range srv.Requests() {
		if strings.Contains(string(req.Body), e2eEnvSecret) {
			t.Fatalf("the secret reached the model:\n%s", srv.Summary())
		}
	}
	want := map[string]string{"toolu_ask": "deny", "toolu_read": "deny", "toolu_cat": "deny", "toolu_grep": "deny"}
	got := ruleDecisions(t, p)
	for id, w := range want {
		if got[id] != w {
			t.Errorf("decision for %s = %q, want %q (all %v)", id, got[id], w, got)
		}
	}
}

// TestClaudeCodePermissionRulesPromptTUI: in default mode the ask rule's
// command makes the real Claude Code show its permission dialog with
// statewright's reason; after a person's yes, the command runs.
func TestClaudeCodePermissionRulesPromptTUI(t *testing.T) {
	p := newRulesProject(t)
	srv := fakemodel.NewAnthropic(script(
		fakemodel.Call(tool("toolu_ask", "Bash", map[string]any{"command": "touch asked.txt"})),
		fakemodel.Say("Turn over."),
	), fakemodel.WithLog(t.Logf))
	defer srv.Close()
	// --allowedTools Bash: Claude Code's own prompt for the shell is not
	// what this test is about; the dialog must come from the hook's ask.
	s := startClaudeTUI(t, p, srv.URL, "--permission-mode", "default", "--session-id", e2eSession, "--allowedTools", "Bash")
	tuiWait(t, s, "rules-start", "for shortcuts")
	tuiPrompt(s, "Touch the file.")
	scr := tuiWait(t, s, "rules-dialog", "Do you want to proceed?", "permission-ask")
	saveArtifact(t, "rules-dialog.txt", []byte(scr))
	if _, err := os.Stat(p.path("asked.txt")); err == nil {
		t.Fatal("asked.txt exists before the person answered")
	}
	tuiChoose(t, s, "1")
	scr = tuiWait(t, s, "rules-end", "Turn over.")
	saveArtifact(t, "rules-end.txt", []byte(scr))
	if _, err := os.Stat(p.path("asked.txt")); err != nil {
		t.Errorf("asked.txt: %v; want it made after the person's yes", err)
	}
	if got := ruleDecisions(t, p); got["toolu_ask"] != "ask" {
		t.Errorf("decision for toolu_ask = %q, want ask (all %v)", got["toolu_ask"], got)
	}
}
