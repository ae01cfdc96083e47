//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/internal/fakemodel"
)

// The sub-workflow scenario: a parent whose writing phase invokes a
// read-only audit, and returns to a writing phase when the audit passes.
const (
	subflowParent = `{"id": "e2e-parent", "initial": "work", "states": {
  "work": {"instructions": "Write, then have it audited.", "allowed_tools": ["Read", "Write", "Edit", "Bash"],
           "on": {"CHECK": {"invoke": "audit", "on_complete": "ship", "on_fail": "work"}}},
  "ship": {"instructions": "Write the release note.", "allowed_tools": ["Read", "Write", "Edit", "Bash"], "on": {"DONE": "done"}},
  "done": {"type": "final"}}}`
	subflowAudit = `{"id": "audit", "initial": "look", "states": {
  "look": {"instructions": "Read only: audit the change.", "allowed_tools": ["Read", "Grep", "Glob"], "on": {"PASS": "passed", "REJECT": "failed"}},
  "passed": {"type": "final"},
  "failed": {"type": "final"}}}`
)

// writeSubflowWorkflows writes the parent and, next to it, the workflow it
// invokes, and returns the parent's path.
func writeSubflowWorkflows(t *testing.T, dir string) string {
	t.Helper()
	parent := filepath.Join(dir, "e2e-parent.json")
	for name, src := range map[string]string{parent: subflowParent, filepath.Join(dir, "audit.json"): subflowAudit} {
		if err := os.WriteFile(name, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return parent
}

// TestClaudeCodeSubWorkflow drives the real Claude Code through the hooks
// `statewright init claude-code` installs: while the invoked read-only
// audit is the phase, a Write is denied and nothing lands on disk; once
// the audit passes and the run is back in the parent, the same Write is
// allowed and lands.
func TestClaudeCodeSubWorkflow(t *testing.T) {
	p := newSWProject(t)
	parent := writeSubflowWorkflows(t, filepath.Dir(p.workflow))
	p.cli(t, "start", parent, "--session", e2eSession)
	if out := p.cli(t, "transition", e2eSession, "CHECK"); !strings.Contains(out, "work → look") {
		t.Fatalf("CHECK: %s", out)
	}
	status := p.cli(t, "status", "--session", e2eSession)
	if !strings.Contains(status, "in force:   audit (depth 1)") || !strings.Contains(status, "e2e-parent waits in work: invoked audit") {
		t.Fatalf("status does not show the stack:\n%s", status)
	}

	note := p.path("note.txt")
	write := func(id string) fakemodel.ToolUse {
		return tool(id, "Write", map[string]any{"file_path": note, "content": "released\n"})
	}
	srv := fakemodel.NewAnthropic(script(fakemodel.Call(write("toolu_write_audit")), fakemodel.Say("I may not write here.")), fakemodel.WithLog(t.Logf))
	r := p.claudeRun(t, srv, "--session-id", e2eSession)
	srv.Close()
	if _, err := os.Stat(note); !os.IsNotExist(err) {
		t.Fatalf("note.txt exists (stat err %v): the write went through while the read-only sub-workflow was the phase\n%s", err, r)
	}
	if res := toolResult(t, srv, "toolu_write_audit"); !res.IsError || !strings.Contains(res.Content, "phase 'look'") ||
		!strings.Contains(res.Content, `returns to \"e2e-parent\" at ship`) && !strings.Contains(res.Content, `returns to "e2e-parent" at ship`) {
		t.Errorf("Write in the audit: %+v; want a deny naming the sub-workflow's phase and where the run returns", res)
	}
	if reqs := srv.MainRequests(); len(reqs) == 0 || !strings.Contains(string(reqs[0].Body), `sub-workflow \"audit\"`) {
		t.Errorf("the phase context does not name the sub-workflow\n%s", srv.Summary())
	}

	// The audit passes: the run returns to the parent's ship phase.
	if out := p.cli(t, "transition", e2eSession, "PASS"); !strings.Contains(out, "→ ship") {
		t.Fatalf("PASS: %s", out)
	}
	srv = fakemodel.NewAnthropic(script(fakemodel.Call(write("toolu_write_ship")), fakemodel.Say("Released.")), fakemodel.WithLog(t.Logf))
	r = p.claudeRun(t, srv, "--resume", e2eSession)
	srv.Close()
	if res := toolResult(t, srv, "toolu_write_ship"); res.IsError {
		t.Errorf("Write back in the parent: %+v; want success\n%s", res, r)
	}
	if b, err := os.ReadFile(note); err != nil || string(b) != "released\n" {
		t.Errorf("note.txt = %q, %v after the sub-workflow returned; want the write on disk", b, err)
	}
	hist := p.cli(t, "history", e2eSession)
	for _, want := range []string{"entered sub-workflow audit (depth 1)", "sub-workflow audit completed, back at depth 0"} {
		if !strings.Contains(hist, want) {
			t.Errorf("history lacks %q:\n%s", want, hist)
		}
	}
}

// TestPiSubWorkflow drives the real Pi through the extension `statewright
// init pi` installs, in one session: the agent enters the read-only audit
// with the extension's own statewright_transition, its write is denied
// there and nothing lands on disk; it passes the audit, the run returns to
// the parent, and the same write is allowed and lands.
func TestPiSubWorkflow(t *testing.T) {
	p := newPluginProject(t, "pi")
	// The operator's default workflow (started for the new session) becomes
	// the parent; the workflow it invokes lies next to it.
	if err := os.WriteFile(p.wfPath, []byte(subflowParent), 0o644); err != nil {
		t.Fatal(err)
	}
	writeSubflowWorkflows(t, filepath.Dir(p.wfPath))
	note := p.path("note.txt")
	write := func(id, content string) fakemodel.ToolUse {
		return tool(id, "write", map[string]any{"path": note, "content": content})
	}
	srv := fakemodel.NewChatCompletions(chatScript(
		fakemodel.Call(tool("call_check", "statewright_transition", map[string]any{"event": "CHECK"})),
		fakemodel.Call(write("call_write_audit", "written during the audit\n")),
		fakemodel.Call(tool("call_pass", "statewright_transition", map[string]any{"event": "PASS"})),
		fakemodel.Call(write("call_write_ship", "released\n")),
		fakemodel.Say("Released."),
	), fakemodel.WithLog(t.Logf))
	r := p.piRun(t, srv)
	srv.Close()
	if res := mustResult(t, srv, "call_check", r); !strings.Contains(res.Content, "Sub-workflow audit runs now") || !strings.Contains(res.Content, `"sub_workflow": "audit"`) {
		t.Errorf("CHECK: the model was told %q; want the sub-workflow entered", res.Content)
	}
	if res := mustResult(t, srv, "call_write_audit", r); !strings.Contains(res.Content, "statewright") || !strings.Contains(res.Content, "phase 'look'") {
		t.Errorf("write in the audit: the model was told %q; want a deny naming the sub-workflow's phase", res.Content)
	}
	if res := mustResult(t, srv, "call_pass", r); !strings.Contains(res.Content, "Sub-workflow audit ended (completed)") {
		t.Errorf("PASS: the model was told %q; want the return to the parent", res.Content)
	}
	if res := mustResult(t, srv, "call_write_ship", r); strings.Contains(res.Content, "statewright") {
		t.Errorf("write back in the parent: the model was told %q; want success", res.Content)
	}
	if b, err := os.ReadFile(note); err != nil || string(b) != "released\n" {
		t.Errorf("note.txt = %q, %v; want the second write on disk and only it\n%s", b, err, r)
	}
	unknownRequests(t, srv)
	session, state := p.session(t)
	if state != "ship" {
		t.Errorf("the run is in %q; want ship", state)
	}
	decisions, _ := p.decisions(t, session)
	for id, want := range map[string]string{"call_check": "allow", "call_write_audit": "deny", "call_pass": "allow", "call_write_ship": "allow"} {
		if decisions[id] != want {
			t.Errorf("history: decision for %s = %q, want %q (all: %v)", id, decisions[id], want, decisions)
		}
	}
}
