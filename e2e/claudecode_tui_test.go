//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/statewright-go/statewright/internal/fakemodel"
	"github.com/statewright-go/statewright/store"
)

// Claude Code's interactive TUI, driven under tmux: the only place a person
// answers its permission prompts (docs/runtime.md, approvals) and the only way
// to reach /clear.

// shq quotes s for sh.
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// startClaudeTUI starts the interactive Claude Code in p's project under a
// private tmux server, offline against baseURL, with exactly ClaudeEnv's
// environment (plus TERM). It pre-approves what a first interactive start
// would ask about: the API key from the environment and the project's
// .mcp.json server.
func startClaudeTUI(t *testing.T, p *swProject, baseURL string, args ...string) *tmuxSession {
	t.Helper()
	cfgPath := filepath.Join(p.home, ".claude.json")
	b, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["customApiKeyResponses"] = map[string]any{"approved": []string{"fakemodel"}, "rejected": []string{}}
	if projects, ok := cfg["projects"].(map[string]any); ok {
		if proj, ok := projects[p.dir].(map[string]any); ok {
			proj["enabledMcpjsonServers"] = []string{"statewright"}
			proj["hasCompletedProjectOnboarding"] = true
		}
	}
	if b, err = json.MarshalIndent(cfg, "", "  "); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfgPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	sb.WriteString("#!/bin/sh\ncd " + shq(p.dir) + " || exit 1\nexec env -i")
	for _, e := range ClaudeEnv(p.home, baseURL, "TERM=xterm-256color", "COLORTERM=") {
		sb.WriteString(" " + shq(e))
	}
	sb.WriteString(" " + shq(p.claude))
	for _, a := range args {
		sb.WriteString(" " + shq(a))
	}
	sb.WriteString("\n")
	launcher := filepath.Join(t.TempDir(), "claude-tui.sh")
	if err := os.WriteFile(launcher, []byte(sb.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	s := startTmux(t, 200, 60, launcher)
	// The pane's process is claude itself (the launcher execs it), the
	// leader of the pane's process group. Before the tmux server goes
	// (cleanups run last-registered first), kill the group and wait, so
	// that nothing writes into the test's directories while they are
	// removed.
	var pid int
	if _, err := fmt.Sscan(s.run("display-message", "-p", "-t", "sw", "#{pane_pid}"), &pid); err != nil || pid <= 1 {
		t.Fatalf("tmux pane pid: %v", err)
	}
	t.Cleanup(func() {
		_ = signalGroup(pid, syscall.SIGKILL)
		_ = killPid(pid)
		for i := 0; i < 100 && processExists(pid); i++ {
			time.Sleep(50 * time.Millisecond)
		}
	})
	return s
}

// tuiWait waits up to 90 s (a loaded machine starts Claude Code slowly)
// for every want on the screen; on failure it saves the screen as an
// artifact and fails the test.
func tuiWait(t *testing.T, s *tmuxSession, name string, want ...string) string {
	t.Helper()
	scr, ok := waitScreen(s, 90*time.Second, func(scr string) bool {
		for _, w := range want {
			if !strings.Contains(scr, w) {
				return false
			}
		}
		return true
	})
	if !ok {
		saveArtifact(t, name+".txt", []byte(scr))
		t.Fatalf("the screen never showed %q; last screen:\n%s", want, scr)
	}
	return scr
}

// tuiPrompt types text into Claude Code's prompt and submits it.
func tuiPrompt(s *tmuxSession, text string) {
	s.typeText(text)
	time.Sleep(300 * time.Millisecond) // let the input box take the paste before Enter
	s.keys("Enter")
}

// tuiChoose answers Claude Code's permission dialog with key. A key sent
// while the dialog is still settling can be lost (seen under load), so the
// key is sent again while the dialog stays on screen.
func tuiChoose(t *testing.T, s *tmuxSession, key string) {
	t.Helper()
	for try := 0; try < 4; try++ {
		time.Sleep(500 * time.Millisecond)
		s.keys(key)
		if _, gone := waitScreen(s, 8*time.Second, func(scr string) bool {
			return !strings.Contains(scr, "Do you want to proceed?")
		}); gone {
			return
		}
	}
	scr := s.screen()
	saveArtifact(t, "dialog-stuck.txt", []byte(scr))
	t.Fatalf("the permission dialog did not take %q:\n%s", key, scr)
}

// TestClaudeCodeAskPromptTUI drives the interactive Claude Code in its
// default permission mode, where a person answers its prompts. The run
// awaits approval to leave the read-only phase; the agent asks for that
// transition again, the hook answers "ask", and Claude Code shows the
// person statewright's question.
//
//   - yes: the MCP call runs, its PostToolUse (same tool_use_id) grants the
//     approval as a human on the prompt's channel, the run moves on, and
//     the agent's edit lands in main.txt;
//   - no: the call does not run, no PostToolUse comes, nothing is granted;
//     the agent's next edit is denied and main.txt is untouched.
func TestClaudeCodeAskPromptTUI(t *testing.T) {
	for _, answer := range []string{"yes", "no"} {
		t.Run(answer, func(t *testing.T) {
			p := newAskProject(t)
			const pre = "mcp__statewright__statewright_"
			edit := map[string]any{"file_path": p.path("main.txt"), "old_string": "old line", "new_string": "new line"}
			turns := []fakemodel.Turn{
				fakemodel.Call(tool("toolu_park", pre+"transition", map[string]any{"event": "LOCALIZED", "data": map[string]any{"rationale": "found it"}})),
				fakemodel.Call(tool("toolu_ask", pre+"transition", map[string]any{"event": "LOCALIZED"})),
				// "no" ends the turn; the person then prompts again.
				fakemodel.Call(tool("toolu_edit", "Edit", edit)),
				fakemodel.Say("Turn over."),
			}
			srv := fakemodel.NewAnthropic(script(turns...), fakemodel.WithLog(t.Logf))
			defer srv.Close()
			// --allowedTools Edit: Claude Code's own prompt for the edit is
			// not what this test is about; statewright still decides it.
			s := startClaudeTUI(t, p, srv.URL, "--permission-mode", "default", "--session-id", e2eSession, "--allowedTools", "Edit")
			tuiWait(t, s, "ask-"+answer+"-start", "for shortcuts")
			tuiPrompt(s, "Fix the bug.")
			scr := tuiWait(t, s, "ask-"+answer+"-dialog", "Do you want to proceed?", "Answer yes to approve it now")
			saveArtifact(t, "ask-"+answer+"-dialog.txt", []byte(scr))
			if answer == "yes" {
				tuiChoose(t, s, "1")
			} else {
				tuiChoose(t, s, "3")
				tuiWait(t, s, "ask-no-after", "for shortcuts")
				tuiPrompt(s, "Edit main.txt anyway.")
			}
			scr = tuiWait(t, s, "ask-"+answer+"-end", "Turn over.")
			saveArtifact(t, "ask-"+answer+"-end.txt", []byte(scr))

			svc, done := p.service(t)
			defer done()
			ctx := context.Background()
			key := "claude-code:" + e2eSession
			evs, err := svc.History(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			var decisions = map[string]string{}
			var grants, humanApprovals []map[string]any
			askResult, askResults := false, 0
			for _, e := range evs {
				var d map[string]any
				json.Unmarshal(e.Data, &d)
				switch {
				case e.Kind == store.KindDecision:
					decisions[e.ToolUseID] = e.Decision
				case e.Kind == store.KindResult && e.ToolUseID == "toolu_ask":
					askResult = d["failed"] != true
					askResults++
				case e.Kind == store.KindApproval && e.Rule == "prompt-grant":
					d["tool_use_id"] = e.ToolUseID
					grants = append(grants, d)
				case e.Kind == store.KindApproval && d["action"] == "granted":
					humanApprovals = append(humanApprovals, d)
				}
			}
			if decisions["toolu_ask"] != "ask" {
				t.Errorf("decision on toolu_ask = %q, want ask (all %v)", decisions["toolu_ask"], decisions)
			}
			b, _ := os.ReadFile(p.path("main.txt"))
			runs, err := svc.Runs(ctx, store.RunFilter{SessionKey: key, Limit: 1})
			if err != nil || len(runs) != 1 {
				t.Fatalf("runs: %v %v", runs, err)
			}
			run := runs[0]
			if answer == "yes" {
				if !askResult || len(grants) != 1 || grants[0]["op"] != "approve" || grants[0]["performed"] != true ||
					grants[0]["tool_use_id"] != "toolu_ask" || grants[0]["permission_mode"] != "default" {
					t.Errorf("grants = %v (PostToolUse ok: %v); want one performed approve grant for toolu_ask", grants, askResult)
				}
				if len(humanApprovals) != 1 {
					t.Fatalf("granted approvals = %v; want one", humanApprovals)
				}
				if a, _ := humanApprovals[0]["actor"].(map[string]any); a["kind"] != "human" || a["channel"] != "prompt:claude-code" {
					t.Errorf("approval granted by %v; want a human via prompt:claude-code", a)
				}
				if run.State != "fixing" || run.Status != store.StatusActive {
					t.Errorf("run = %s %s; want fixing, active", run.State, run.Status)
				}
				if decisions["toolu_edit"] != "allow" || string(b) != "new line\n" {
					t.Errorf("edit decided %q, main.txt = %q; want allowed and applied", decisions["toolu_edit"], b)
				}
				return
			}
			if askResults != 0 || len(grants) != 0 || len(humanApprovals) != 0 {
				t.Errorf("after no: %d results for toolu_ask, grants %v, approvals %v; want none", askResults, grants, humanApprovals)
			}
			if run.State != "localizing" || run.Status != store.StatusAwaitingApproval {
				t.Errorf("run = %s %s; want localizing, awaiting approval", run.State, run.Status)
			}
			if decisions["toolu_edit"] != "deny" || string(b) != "old line\n" {
				t.Errorf("edit decided %q, main.txt = %q; want denied and untouched", decisions["toolu_edit"], b)
			}
		})
	}
}

// mcpServerSessionEnv returns CLAUDE_CODE_SESSION_ID from the environment
// of each running `BIN mcp ...` process (the MCP servers Claude Code
// started with this test's binary).
func mcpServerSessionEnv(t *testing.T, bin string) []string {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range dirs {
		cmd, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil {
			continue
		}
		argv := strings.Split(strings.TrimRight(string(cmd), "\x00"), "\x00")
		if len(argv) < 2 || argv[0] != bin || argv[1] != "mcp" {
			continue
		}
		env, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil {
			continue
		}
		for _, kv := range strings.Split(string(env), "\x00") {
			if v, ok := strings.CutPrefix(kv, "CLAUDE_CODE_SESSION_ID="); ok {
				out = append(out, v)
			}
		}
	}
	return out
}

// TestClaudeCodeClearTUI: after /clear, Claude Code gives the hooks a new
// session_id while the MCP server it started keeps the old one in
// CLAUDE_CODE_SESSION_ID. The agent starts a workflow before /clear and
// again after it: the PreToolUse hook stamps each call with the hook's
// session, the server trusts the stamp, and the store shows the second
// start as a new run under the new session — the first session's run is
// untouched and the stale id is never used.
func TestClaudeCodeClearTUI(t *testing.T) {
	p := newSWProject(t)
	if out, err := p.initCommand("init", "claude-code", "--project", p.dir, "--store", p.storePath).CombinedOutput(); err != nil {
		t.Fatalf("init with MCP: %v\n%s", err, out)
	}
	const pre = "mcp__statewright__statewright_"
	srv := fakemodel.NewAnthropic(fakemodel.Script{Turns: []fakemodel.Turn{
		fakemodel.Call(tool("toolu_start1", pre+"start", map[string]any{"name": "bugfix"})),
		fakemodel.Say("Started once."),
		fakemodel.Say("Waiting."), // the Stop hook holds the agent once (non-final phase)
		fakemodel.Call(tool("toolu_start2", pre+"start", map[string]any{"name": "bugfix"})),
		fakemodel.Call(tool("toolu_state2", pre+"get_state", map[string]any{})),
		fakemodel.Say("Started twice."),
	}, ExhaustedText: "Stopping now."}, fakemodel.WithLog(t.Logf))
	defer srv.Close()
	s := startClaudeTUI(t, p, srv.URL, "--permission-mode", "default", "--session-id", e2eSession)
	tuiWait(t, s, "clear-start", "for shortcuts")
	tuiPrompt(s, "Start the bugfix workflow.")
	tuiWait(t, s, "clear-first", "Waiting.")
	before := mcpServerSessionEnv(t, p.bin)

	s.typeText("/clear")
	time.Sleep(500 * time.Millisecond)
	s.keys("Enter")
	scr, ok := waitScreen(s, 60*time.Second, func(scr string) bool {
		return !strings.Contains(scr, "Waiting.") && strings.Contains(scr, "for shortcuts")
	})
	if !ok {
		saveArtifact(t, "clear-after.txt", []byte(scr))
		t.Fatalf("/clear did not clear the screen:\n%s", scr)
	}
	tuiPrompt(s, "Start it again.")
	tuiWait(t, s, "clear-second", "Started twice.")
	after := mcpServerSessionEnv(t, p.bin)

	svc, done := p.service(t)
	defer done()
	ctx := context.Background()
	runs, err := svc.Runs(ctx, store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	old := "claude-code:" + e2eSession
	var newKey string
	for _, r := range runs {
		if r.SessionKey != old {
			newKey = r.SessionKey
		}
	}
	if len(runs) != 2 || newKey == "" {
		t.Fatalf("runs = %+v; want two, the second under the session /clear began", runs)
	}
	newID := strings.TrimPrefix(newKey, "claude-code:")
	t.Logf("session before /clear %s, after %s; CLAUDE_CODE_SESSION_ID of the MCP server before %v, after %v", e2eSession, newID, before, after)
	// The MCP server kept the stale id: this is the case the stamp is for.
	if len(before) != 1 || before[0] != e2eSession || len(after) != 1 || after[0] != e2eSession {
		t.Errorf("MCP server CLAUDE_CODE_SESSION_ID before %v, after %v; want the first session's id both times (one server)", before, after)
	}
	for _, r := range runs {
		if r.Status != store.StatusActive || r.State != "localizing" {
			t.Errorf("run %s (%s) = %s %s; want active in localizing", r.ID, r.SessionKey, r.State, r.Status)
		}
	}
	// Each start (and the state read after /clear) is recorded under the
	// session whose hook stamped it.
	where := map[string]string{}
	for _, key := range []string{old, newKey} {
		evs, err := svc.History(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if e.Kind == store.KindDecision && e.ToolUseID != "" {
				where[e.ToolUseID] = key
			}
		}
	}
	for id, want := range map[string]string{"toolu_start1": old, "toolu_start2": newKey, "toolu_state2": newKey} {
		if where[id] != want {
			t.Errorf("%s decided under %q, want %q", id, where[id], want)
		}
	}
	// What the model was told after /clear: a fresh start, under the new session.
	if res := toolResult(t, srv, "toolu_start2"); res.IsError || !strings.Contains(res.Content, newKey) {
		t.Errorf("start after /clear: %+v; want a new run under %s", res, newKey)
	}
	if res := toolResult(t, srv, "toolu_state2"); res.IsError || !strings.Contains(res.Content, newKey) || strings.Contains(res.Content, old) {
		t.Errorf("get_state after /clear: %+v; want the new session's run", res)
	}
}

// waitScreen polls s until cond holds for the screen, up to d; it returns
// the last screen and whether cond held.
func waitScreen(s *tmuxSession, d time.Duration, cond func(string) bool) (string, bool) {
	deadline := time.Now().Add(d)
	for {
		scr := s.screen()
		if cond(scr) {
			return scr, true
		}
		if time.Now().After(deadline) {
			return scr, false
		}
		time.Sleep(150 * time.Millisecond)
	}
}
