//go:build e2e

package e2e

import (
	"os"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/internal/fakemodel"
)

// TestOpencodeWorkflow drives the real opencode, with the plugin and MCP
// server `statewright init opencode` installs, through the e2e workflow:
// a write and a shell write denied in the read-only phase with the files
// untouched on disk, a transition through statewright's MCP control tool
// (the plugin stamps the session into it), an allowed edit, and the
// store's history.
func TestOpencodeWorkflow(t *testing.T) {
	p := newPluginProject(t, "opencode")
	x, y := p.path("x.txt"), p.path("y.txt")

	// Run 1, phase localizing: both writes are denied and teach.
	srv := fakemodel.NewChatCompletions(chatScript(
		fakemodel.Call(
			tool("call_write1", "write", map[string]any{"filePath": x, "content": "sneaky"}),
			tool("call_bash1", "bash", map[string]any{"command": "cat > " + y + " <<'EOF'\nsneaky\nEOF", "description": "write y"}),
		),
		fakemodel.Say("I cannot edit yet."),
	), fakemodel.WithLog(t.Logf))
	r := p.opencodeRun(t, srv)
	srv.Close()
	noFile(t, x, "the write tool was not denied")
	noFile(t, y, "the shell heredoc write was not denied")
	if b, _ := os.ReadFile(p.path("main.txt")); string(b) != "old line\n" {
		t.Errorf("main.txt = %q", b)
	}
	for _, id := range []string{"call_write1", "call_bash1"} {
		res := mustResult(t, srv, id, r)
		if !strings.Contains(res.Content, "statewright") || !strings.Contains(res.Content, "localizing") ||
			!strings.Contains(res.Content, "LOCALIZED") || !strings.Contains(res.Content, "Allowed here: read, grep, glob, bash.") {
			t.Errorf("%s: the model was told %q; want a deny naming the phase, the allowed tools in the harness's own names and the next event", id, res.Content)
		}
	}
	// The plugin puts the phase into the system prompt (advisory context).
	if reqs := srv.MainRequests(); len(reqs) == 0 || !strings.Contains(string(reqs[0].Body), "phase: localizing") ||
		!strings.Contains(string(reqs[0].Body), "Allowed tools: read, grep, glob, bash.") {
		t.Errorf("the first model request does not carry the phase context\n%s", srv.Summary())
	}
	unknownRequests(t, srv)
	session, state := p.session(t)
	if state != "localizing" || !strings.HasPrefix(session, "ses_") {
		t.Fatalf("after run 1: session %q in %q; want an opencode ses_ id in localizing", session, state)
	}

	// Run 2, same session: the agent moves on through the MCP control tool,
	// then the same kind of edit is allowed and lands on disk.
	srv = fakemodel.NewChatCompletions(chatScript(
		fakemodel.Call(tool("call_tr", "statewright_statewright_transition",
			map[string]any{"event": "LOCALIZED", "data": map[string]any{"rationale": "found it"}})),
		fakemodel.Call(tool("call_edit2", "edit", map[string]any{"filePath": p.path("main.txt"), "oldString": "old line", "newString": "new line"})),
		fakemodel.Call(tool("call_ls", "bash", map[string]any{"command": "ls ./no-such-dir-statewright", "description": "list"})),
		fakemodel.Say("Fixed."),
	), fakemodel.WithLog(t.Logf))
	r = p.opencodeRun(t, srv, "--session", session)
	srv.Close()
	if res := mustResult(t, srv, "call_tr", r); !strings.Contains(res.Content, `"transitioned": true`) ||
		!strings.Contains(res.Content, "opencode:"+session) {
		t.Errorf("transition: the model was told %q; want the MCP server's transition for this session", res.Content)
	}
	if res := mustResult(t, srv, "call_edit2", r); strings.Contains(res.Content, "statewright") {
		t.Errorf("edit in phase fixing: %q; want success", res.Content)
	}
	if b, _ := os.ReadFile(p.path("main.txt")); string(b) != "new line\n" {
		t.Errorf("main.txt = %q after the allowed edit, want \"new line\\n\"\n%s", b, r)
	}
	unknownRequests(t, srv)
	if s2, state := p.session(t); s2 != session || state != "fixing" {
		t.Errorf("after run 2: %q in %q; want %q in fixing", s2, state, session)
	}

	// The store's history holds every decision and the transition.
	// The shell's exit status reached the store as evidence (ls exits 2).
	if code, ok := p.lastExit(t, session); !ok || code != 2 {
		t.Errorf("runtime.last_command.exit_code = %v (recorded %v); want 2 from the failed ls", code, ok)
	}

	decisions, transitions := p.decisions(t, session)
	for id, want := range map[string]string{"call_write1": "deny", "call_bash1": "deny", "call_tr": "allow", "call_edit2": "allow", "call_ls": "allow"} {
		if decisions[id] != want {
			t.Errorf("history: decision for %s = %q, want %q (all: %v)", id, decisions[id], want, decisions)
		}
	}
	if strings.Join(transitions, " ") != "localizing fixing" {
		t.Errorf("history transitions %v; want [localizing fixing] (the start, then LOCALIZED)", transitions)
	}
}

// TestOpencodeFailClosed checks that the real opencode blocks a call when
// the plugin cannot get an answer: the statewright binary is gone.
func TestOpencodeFailClosed(t *testing.T) {
	p := newPluginProject(t, "opencode")
	if err := os.Remove(p.bin); err != nil {
		t.Fatal(err)
	}
	x := p.path("x.txt")
	srv := fakemodel.NewChatCompletions(chatScript(
		fakemodel.Call(tool("call_write", "write", map[string]any{"filePath": x, "content": "x"})),
		fakemodel.Say("Blocked."),
	), fakemodel.WithLog(t.Logf))
	r := p.opencodeRun(t, srv)
	srv.Close()
	noFile(t, x, "the write ran although statewright could not be asked")
	if res := mustResult(t, srv, "call_write", r); !strings.Contains(res.Content, "fails closed") {
		t.Errorf("the model was told %q; want the fail-closed reason", res.Content)
	}
}
