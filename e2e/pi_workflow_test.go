//go:build e2e

package e2e

import (
	"os"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/internal/fakemodel"
)

// TestPiWorkflow drives the real Pi (pi -p), with the extension `statewright
// init pi` installs, through the e2e workflow: a write and a shell write
// denied in the read-only phase with the files untouched on disk, a
// transition through the extension's own statewright_transition tool, an
// allowed edit, and the store's history.
func TestPiWorkflow(t *testing.T) {
	p := newPluginProject(t, "pi")
	x, y := p.path("x.txt"), p.path("y.txt")

	// Run 1, phase localizing: both writes are denied and teach.
	srv := fakemodel.NewChatCompletions(chatScript(
		fakemodel.Call(
			tool("call_write1", "write", map[string]any{"path": x, "content": "sneaky"}),
			tool("call_bash1", "bash", map[string]any{"command": "cat > " + y + " <<'EOF'\nsneaky\nEOF"}),
		),
		fakemodel.Say("I cannot edit yet."),
	), fakemodel.WithLog(t.Logf))
	r := p.piRun(t, srv)
	srv.Close()
	noFile(t, x, "the write tool was not denied")
	noFile(t, y, "the shell heredoc write was not denied")
	if b, _ := os.ReadFile(p.path("main.txt")); string(b) != "old line\n" {
		t.Errorf("main.txt = %q", b)
	}
	for _, id := range []string{"call_write1", "call_bash1"} {
		res := mustResult(t, srv, id, r)
		if !strings.Contains(res.Content, "statewright") || !strings.Contains(res.Content, "localizing") ||
			!strings.Contains(res.Content, "LOCALIZED") || !strings.Contains(res.Content, "Allowed here: read, grep, find, bash.") {
			t.Errorf("%s: the model was told %q; want a deny naming the phase, the allowed tools in the harness's own names and the next event", id, res.Content)
		}
	}
	reqs := srv.MainRequests()
	if len(reqs) == 0 || !strings.Contains(string(reqs[0].Body), "phase: localizing") ||
		!strings.Contains(string(reqs[0].Body), "Allowed tools: read, grep, find, bash.") {
		t.Errorf("the first model request does not carry the phase context\n%s", srv.Summary())
	}
	// The extension offers the control tools, Pi having no MCP client.
	if c, err := reqs[0].Chat(); err != nil || !c.HasTool("statewright_transition") || !c.HasTool("statewright_get_state") {
		t.Errorf("the control tools are not offered to the model: %v", err)
	}
	unknownRequests(t, srv)
	session, state := p.session(t)
	if state != "localizing" {
		t.Fatalf("after run 1: session %q in %q; want localizing", session, state)
	}

	// Run 2, same session: the agent moves on with the extension's
	// statewright_transition, then the edit is allowed and lands on disk.
	srv = fakemodel.NewChatCompletions(chatScript(
		fakemodel.Call(tool("call_tr", "statewright_transition",
			map[string]any{"event": "LOCALIZED", "data": map[string]any{"rationale": "found it"}})),
		fakemodel.Call(tool("call_edit2", "edit", map[string]any{"path": p.path("main.txt"), "oldText": "old line", "newText": "new line"})),
		fakemodel.Call(tool("call_ls", "bash", map[string]any{"command": "ls ./no-such-dir-statewright"})),
		fakemodel.Say("Fixed."),
	), fakemodel.WithLog(t.Logf))
	r = p.piRun(t, srv, "--session", session)
	srv.Close()
	if res := mustResult(t, srv, "call_tr", r); !strings.Contains(res.Content, `"transitioned": true`) ||
		!strings.Contains(res.Content, "pi:"+session) {
		t.Errorf("transition: the model was told %q; want the transition for this session", res.Content)
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

// TestPiFailClosed checks that the real Pi blocks a call when the
// extension cannot get a well-formed allow: the binary gone, a binary that
// prints garbage, one that crashes, one that says allow but exits non-zero.
func TestPiFailClosed(t *testing.T) {
	for _, tc := range []struct {
		name, script string // script replaces the binary; "" removes it
	}{
		{"missing binary", ""},
		{"garbage answer", "#!/bin/sh\necho 'this is not JSON'\n"},
		{"crash", "#!/bin/sh\nkill -SEGV $$\n"},
		{"allow with a failing exit", "#!/bin/sh\necho '{\"decision\":\"allow\"}'\nexit 1\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPluginProject(t, "pi")
			if err := os.Remove(p.bin); err != nil {
				t.Fatal(err)
			}
			if tc.script != "" {
				if err := os.WriteFile(p.bin, []byte(tc.script), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			x := p.path("x.txt")
			srv := fakemodel.NewChatCompletions(chatScript(
				fakemodel.Call(tool("call_write", "write", map[string]any{"path": x, "content": "x"})),
				fakemodel.Say("Blocked."),
			), fakemodel.WithLog(t.Logf))
			r := p.piRun(t, srv)
			srv.Close()
			noFile(t, x, "the write ran although statewright gave no well-formed allow")
			if res := mustResult(t, srv, "call_write", r); !strings.Contains(res.Content, "fails closed") {
				t.Errorf("the model was told %q; want the fail-closed reason", res.Content)
			}
		})
	}
}
