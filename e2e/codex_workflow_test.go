//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/internal/fakemodel"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/sqlite"
)

// codexToolOutput returns what Codex told the model about call id.
func codexToolOutput(t *testing.T, srv *fakemodel.Server, id string) string {
	t.Helper()
	res, ok := srv.ToolResult(id)
	if !ok {
		t.Fatalf("the model never received an output for %s\n%s", id, srv.Summary())
	}
	return res.Content
}

// TestCodexWorkflow drives the real Codex CLI (`codex exec`), with the hooks
// `statewright init codex` installs, through the Claude Code scenario: the
// workflow starts at SessionStart (--default-workflow), a shell write and a
// patch are denied in the read-only phase with the files untouched on
// disk, a person moves the run on, the same patch is allowed and lands, and
// the store's history holds every decision.
func TestCodexWorkflow(t *testing.T) {
	p := newCodexProject(t)
	svc, closeSvc := p.service(t)
	defer closeSvc()
	ctx := context.Background()
	x := p.path("x.txt")

	// Phase localizing: a shell write and a patch are denied and teach.
	srv := fakemodel.NewResponses(script(
		fakemodel.Call(
			tool("call_heredoc", "exec_command", map[string]any{"cmd": "cat > " + x + " <<'EOF'\nsneaky\nEOF"}),
			tool("call_patch1", "apply_patch", patch("main.txt", "old line", "new line")),
		),
		fakemodel.Say("I cannot edit yet."),
	), fakemodel.WithLog(t.Logf))
	r := p.run(t, srv, "Fix the bug.", "")
	srv.Close()
	thread := threadID(t, r)
	session := "codex:" + thread
	if _, err := os.Stat(x); !os.IsNotExist(err) {
		t.Errorf("x.txt exists (stat err %v): the heredoc write was not denied\n%s", err, r)
	}
	if b, _ := os.ReadFile(p.path("main.txt")); string(b) != "old line\n" {
		t.Errorf("main.txt = %q: the patch was not denied\n%s", b, r)
	}
	for _, id := range []string{"call_heredoc", "call_patch1"} {
		out := codexToolOutput(t, srv, id)
		if !strings.Contains(out, "blocked by PreToolUse hook") || !strings.Contains(out, "localizing") ||
			!strings.Contains(out, "LOCALIZED") || !strings.Contains(out, "Read") {
			t.Errorf("%s: output %q; want Codex's hook block naming the phase, the allowed tools and the next event", id, out)
		}
		// Codex puts a period after the reason: the reason has none of its own.
		if reason, _, _ := strings.Cut(out, " Command: "); strings.Contains(reason, "..") {
			t.Errorf("%s: the model read a double period: %q", id, out)
		}
	}
	// SessionStart / UserPromptSubmit put the phase into the model's context.
	if reqs := srv.MainRequests(); len(reqs) == 0 || !strings.Contains(string(reqs[0].Body), `phase: localizing`) ||
		!strings.Contains(string(reqs[0].Body), `Allowed tools: Read, Grep, Glob, exec_command`) {
		t.Errorf("the first model request does not carry the phase context\n%s", srv.Summary())
	}
	// The Stop hook kept the agent working once (non-final phase).
	var sawStopBlock bool
	for _, q := range srv.MainRequests() {
		if strings.Contains(string(q.Body), "which is not final") {
			sawStopBlock = true
		}
	}
	if !sawStopBlock {
		t.Errorf("the model was never told that the phase is not final (Stop hook)\n%s", srv.Summary())
	}
	if v, err := svc.Status(ctx, session); err != nil || v.Run.State != "localizing" {
		t.Fatalf("status after run 1: %+v, %v; want localizing", v, err)
	}

	// A person moves the run on; the same patch is now allowed and lands.
	p.cli(t, "transition", thread, "LOCALIZED", "--harness", "codex")
	srv = fakemodel.NewResponses(script(
		fakemodel.Call(tool("call_patch2", "apply_patch", patch("main.txt", "old line", "new line"))),
		fakemodel.Say("Fixed."),
	), fakemodel.WithLog(t.Logf))
	r = p.run(t, srv, "Go on.", thread)
	srv.Close()
	if out := codexToolOutput(t, srv, "call_patch2"); strings.Contains(out, "blocked") {
		t.Errorf("patch in phase fixing: %q; want it applied\n%s", out, r)
	}
	if b, _ := os.ReadFile(p.path("main.txt")); string(b) != "new line\n" {
		t.Errorf("main.txt = %q after the allowed patch, want \"new line\\n\"\n%s", b, r)
	}
	if v, err := svc.Status(ctx, session); err != nil || v.Run.State != "fixing" {
		t.Errorf("status after run 2: %+v, %v; want fixing (the resumed session keeps its run)", v, err)
	}

	// The audit trail, as `statewright history` shows it.
	var evs []store.Event
	if err := json.Unmarshal([]byte(p.cli(t, "history", thread, "--harness", "codex", "--json")), &evs); err != nil {
		t.Fatalf("history --json: %v", err)
	}
	decisions := map[string]string{}
	var states []string
	for _, e := range evs {
		switch e.Kind {
		case store.KindDecision:
			decisions[e.ToolUseID] = e.Decision
		case store.KindTransition:
			states = append(states, e.State)
		}
	}
	for id, want := range map[string]string{"call_heredoc": "deny", "call_patch1": "deny", "call_patch2": "allow"} {
		if decisions[id] != want {
			t.Errorf("history: decision for %s = %q, want %q (all: %v)", id, decisions[id], want, decisions)
		}
	}
	if len(states) < 1 || !strings.Contains(strings.Join(states, " "), "fixing") {
		t.Errorf("history transitions %v; want the move to fixing", states)
	}
}

// TestCodexMCPTransition has the agent move its own run on through the MCP
// server init registers: the PreToolUse hook stamps the session into the
// call (Codex honours updatedInput with an allow), overwriting the model's
// forged value; the server transitions that session's run, and the patch
// denied before is allowed after.
func TestCodexMCPTransition(t *testing.T) {
	p := newCodexProject(t)
	svc, closeSvc := p.service(t)
	defer closeSvc()
	ctx := context.Background()
	// Another session's run, which the forged stamp names.
	const otherID = "00000000-0000-4000-8000-000000000000"
	other := "codex:" + otherID
	if _, err := svc.Start(ctx, other, p.workflow, human); err != nil {
		t.Fatalf("start other: %v", err)
	}
	srv := fakemodel.NewResponses(script(
		fakemodel.Call(tool("call_patch_early", "apply_patch", patch("main.txt", "old line", "new line"))),
		fakemodel.Call(tool("call_transition", "mcp__statewright__statewright_transition",
			map[string]any{"event": "LOCALIZED", "data": map[string]any{"rationale": "found it"}, "statewright_session": otherID})),
		fakemodel.Call(tool("call_patch_late", "apply_patch", patch("main.txt", "old line", "new line"))),
		fakemodel.Say("Fixed."),
	), fakemodel.WithLog(t.Logf))
	r := p.run(t, srv, "Fix the bug.", "")
	srv.Close()
	thread := threadID(t, r)
	if q := srv.MainRequests(); len(q) > 0 {
		req, _ := q[0].Responses()
		var names []string
		for _, tl := range req.Tools {
			names = append(names, tl.Type+":"+tl.Name)
		}
		t.Logf("tools offered: %v", names)
	}
	if out := codexToolOutput(t, srv, "call_patch_early"); !strings.Contains(out, "blocked by PreToolUse hook") {
		t.Errorf("patch before the transition: %q; want a deny", out)
	}
	if out := codexToolOutput(t, srv, "call_transition"); !strings.Contains(out, "fixing") {
		t.Fatalf("transition through MCP: %q; want the move to fixing\n%s", out, r)
	}
	if out := codexToolOutput(t, srv, "call_patch_late"); strings.Contains(out, "blocked") {
		t.Errorf("patch after the transition: %q; want it applied", out)
	}
	if b, _ := os.ReadFile(p.path("main.txt")); string(b) != "new line\n" {
		t.Errorf("main.txt = %q, want the patch applied", b)
	}
	if v, err := svc.Status(ctx, "codex:"+thread); err != nil || v.Run.State != "fixing" {
		t.Errorf("this session's run: %+v, %v; want fixing", v, err)
	}
	if v, err := svc.Status(ctx, other); err != nil || v.Run.State != "localizing" {
		t.Errorf("the other session's run: %+v, %v; want it untouched (the forged stamp was trusted)", v, err)
	}
}

// TestCodexFailClosed checks that the real Codex blocks a shell write and a
// patch when the hook cannot decide: the store deleted, recreated or not a
// database, the binary missing, or the hook crashing (init's wrapper turns those into
// exit 2, the one failure Codex treats as a deny).
func TestCodexFailClosed(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		breakIt    func(t *testing.T, p *codexProject)
	}{
		{"deleted store", "no store", func(t *testing.T, p *codexProject) {
			for _, suffix := range []string{"", "-wal", "-shm"} {
				os.Remove(p.storePath + suffix)
			}
		}},
		{"recreated store", "store id mismatch", func(t *testing.T, p *codexProject) {
			for _, suffix := range []string{"", "-wal", "-shm"} {
				os.Remove(p.storePath + suffix)
			}
			st, err := sqlite.Open(context.Background(), p.storePath, sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			st.Close()
		}},
		{"unreadable store", "corrupt or unknown store", func(t *testing.T, p *codexProject) {
			for _, suffix := range []string{"-wal", "-shm"} {
				os.Remove(p.storePath + suffix)
			}
			if err := os.WriteFile(p.storePath, []byte(strings.Repeat("not a database\n", 512)), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"missing binary", "fail closed", func(t *testing.T, p *codexProject) {
			if err := os.Remove(p.bin); err != nil {
				t.Fatal(err)
			}
		}},
		{"crashing hook", "fail closed", func(t *testing.T, p *codexProject) {
			if err := os.WriteFile(p.bin, []byte("#!/bin/sh\nkill -SEGV $$\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newCodexProject(t)
			tc.breakIt(t, p)
			shellTarget, patchTarget := p.path("shell.txt"), p.path("patched.txt")
			srv := fakemodel.NewResponses(script(
				fakemodel.Call(
					tool("call_write", "exec_command", map[string]any{"cmd": "echo must-not-exist > " + shellTarget}),
					tool("call_add", "apply_patch", map[string]any{"input": "*** Begin Patch\n*** Add File: patched.txt\n+must not exist\n*** End Patch\n"}),
				),
				fakemodel.Say("Blocked."),
			), fakemodel.WithLog(t.Logf))
			r := p.run(t, srv, "Fix the bug.", "")
			srv.Close()
			for _, f := range []string{shellTarget, patchTarget} {
				if _, err := os.Stat(f); !os.IsNotExist(err) {
					t.Errorf("%s exists (stat err %v): the call went through\n%s", f, err, r)
				}
			}
			for _, id := range []string{"call_write", "call_add"} {
				if out := codexToolOutput(t, srv, id); !strings.Contains(out, "blocked by PreToolUse hook") || !strings.Contains(out, tc.want) {
					t.Errorf("%s: output %q; want Codex's hook block containing %q", id, out, tc.want)
				}
			}
			// The prompt reached the model and the run ended normally.
			if reqs := srv.MainRequests(); r.ExitCode != 0 || len(reqs) == 0 || !strings.Contains(string(reqs[0].Body), "Fix the bug.") {
				t.Errorf("exit %d, %d model requests; want exit 0 and the prompt delivered\n%s", r.ExitCode, len(reqs), srv.Summary())
			}
		})
	}
}

// TestCodexWriteStdinIsNotHooked pins an enforcement gap of Codex 0.169.0
// (docs/codex.md): input written to a running process with write_stdin
// never reaches the PreToolUse hook, so statewright never decides it. The
// shell call that started the process is decided; the write_stdin call is
// not, and runs. If a Codex upgrade starts hooking write_stdin this test
// fails: update docs/codex.md and the matrix.
func TestCodexWriteStdinIsNotHooked(t *testing.T) {
	p := newCodexProject(t)
	var stdinSession string
	srv := fakemodel.NewResponses(fakemodel.Script{ExhaustedText: "Stopping now.", Respond: func(r *fakemodel.Request) fakemodel.Turn {
		q, err := r.Responses()
		if err != nil {
			return fakemodel.Say("bad request")
		}
		outputs := map[string]string{}
		for _, it := range q.Input {
			if it.Type == "function_call_output" {
				outputs[it.CallID] = it.Text()
			}
		}
		execOut, execDone := outputs["call_exec"]
		_, stdinDone := outputs["call_stdin"]
		switch {
		case !execDone:
			return fakemodel.Call(tool("call_exec", "exec_command", map[string]any{"cmd": "cat", "tty": true, "yield_time_ms": 1000}))
		case !stdinDone:
			// "Process running with session ID N"
			if _, rest, ok := strings.Cut(execOut, "session ID "); ok {
				stdinSession = strings.Fields(rest)[0]
			}
			n := 0
			fmt.Sscan(stdinSession, &n)
			return fakemodel.Call(tool("call_stdin", "write_stdin", map[string]any{"session_id": n, "chars": "typed-into-cat\n", "yield_time_ms": 1000}))
		}
		return fakemodel.Say("Done.")
	}}, fakemodel.WithLog(t.Logf))
	r := p.run(t, srv, "Fix the bug.", "")
	srv.Close()
	thread := threadID(t, r)
	if stdinSession == "" {
		t.Fatalf("exec_command reported no session id: %q\n%s", codexToolOutput(t, srv, "call_exec"), r)
	}
	if out := codexToolOutput(t, srv, "call_stdin"); !strings.Contains(out, "typed-into-cat") {
		t.Errorf("write_stdin output %q; want the process to echo what was typed (the call ran)", out)
	}
	var evs []store.Event
	if err := json.Unmarshal([]byte(p.cli(t, "history", thread, "--harness", "codex", "--json")), &evs); err != nil {
		t.Fatalf("history --json: %v", err)
	}
	decided := map[string]string{}
	for _, e := range evs {
		if e.Kind == store.KindDecision {
			decided[e.ToolUseID] = e.Decision
		}
	}
	if decided["call_exec"] != "allow" {
		t.Errorf("exec_command: decision %q, want allow (all %v)", decided["call_exec"], decided)
	}
	if d, ok := decided["call_stdin"]; ok {
		t.Errorf("write_stdin was decided (%q): Codex now hooks it; update docs/codex.md's enforcement gaps and the matrix", d)
	}
}
