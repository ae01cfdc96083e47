//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/internal/fakemodel"
)

// These tests pin the Claude Code behaviour statewright's hooks and MCP
// server rely on (docs/e2e.md). When the pinned version changes and one of
// them fails, the contract changed: update docs/e2e.md and the adapters.

// TestClaudeCodePermissionModes pins how the hook's decisions combine with
// each permission mode in -p mode. Files: plain.txt (hook silent: the
// harness decides), allow.txt (hook "allow"), ask.txt (hook "ask"),
// blocked.txt (hook exit 2).
func TestClaudeCodePermissionModes(t *testing.T) {
	files := []string{"plain.txt", "allow.txt", "ask.txt", "blocked.txt"}
	// For each file: "" when it must be written, else a substring of the
	// tool_result the model must get instead.
	const notGranted = "but you haven't granted it yet"
	cases := []struct {
		name     string
		args     []string
		hookMode string // permission_mode in the hook input
		want     map[string]string
	}{
		{"default", []string{"--permission-mode", "default"}, "default",
			map[string]string{"plain.txt": notGranted, "allow.txt": "", "ask.txt": "e2e-hook: asking about ask.txt", "blocked.txt": reasonExit2}},
		{"acceptEdits", []string{"--permission-mode", "acceptEdits"}, "acceptEdits",
			map[string]string{"plain.txt": "", "allow.txt": "", "ask.txt": "e2e-hook: asking about ask.txt", "blocked.txt": reasonExit2}},
		{"bypassPermissions", []string{"--permission-mode", "bypassPermissions"}, "bypassPermissions",
			map[string]string{"plain.txt": "", "allow.txt": "", "ask.txt": "e2e-hook: asking about ask.txt", "blocked.txt": reasonExit2}},
		{"dangerously-skip-permissions", []string{"--dangerously-skip-permissions"}, "bypassPermissions",
			map[string]string{"plain.txt": "", "allow.txt": "", "ask.txt": "e2e-hook: asking about ask.txt", "blocked.txt": reasonExit2}},
		{"dontAsk", []string{"--permission-mode", "dontAsk"}, "dontAsk",
			map[string]string{"plain.txt": "running in don't ask mode", "allow.txt": "", "ask.txt": "e2e-hook: asking about ask.txt", "blocked.txt": reasonExit2}},
		{"plan", []string{"--permission-mode", "plan"}, "plan",
			map[string]string{"plain.txt": "while in plan mode", "allow.txt": "while in plan mode", "ask.txt": "e2e-hook: asking about ask.txt", "blocked.txt": reasonExit2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newClaudeProject(t)
			srv := fakemodel.NewAnthropic(fakemodel.Script{Turns: p.writes(files...)})
			defer srv.Close()
			r := p.run(t, srv, "Write the files.", tc.args...)
			if r.ExitCode != 0 {
				t.Fatalf("claude failed:\n%s", r)
			}
			for i, f := range files {
				res, ok := srv.ToolResult(srv.ToolUseID(0, i))
				if !ok {
					t.Errorf("%s: no tool_result\n%s", f, srv.Summary())
					continue
				}
				want := tc.want[f]
				if want == "" {
					if !p.exists(f) || res.IsError {
						t.Errorf("%s: want written; exists=%v result=%+v", f, p.exists(f), res)
					}
					continue
				}
				if p.exists(f) {
					t.Errorf("%s: written, want denied with %q", f, want)
				}
				if !res.IsError || !strings.Contains(res.Content, want) {
					t.Errorf("%s: tool_result = %+v; want is_error with %q", f, res, want)
				}
			}
			// Hooks run in every mode, and are told the mode.
			recs := readHookLog(t, p.hookLog)
			if len(recs) != len(files) {
				t.Errorf("hook ran %d times, want %d", len(recs), len(files))
			}
			for _, rec := range recs {
				if rec["permission_mode"] != tc.hookMode {
					t.Errorf("hook permission_mode = %v, want %s", rec["permission_mode"], tc.hookMode)
				}
			}
		})
	}
}

// TestClaudeCodeRootNeedsSandbox pins that root may not bypass permissions
// unless IS_SANDBOX=1 (which ClaudeEnv sets).
func TestClaudeCodeRootNeedsSandbox(t *testing.T) {
	p := newClaudeProject(t)
	p.env = []string{"IS_SANDBOX="}
	srv := fakemodel.NewAnthropic(fakemodel.Script{Turns: p.writes("plain.txt")})
	defer srv.Close()
	r := p.run(t, srv, "Write the file.", "--permission-mode", "bypassPermissions")
	if os.Geteuid() != 0 {
		if r.ExitCode != 0 || !p.exists("plain.txt") {
			t.Fatalf("as a normal user bypassPermissions should work without IS_SANDBOX:\n%s", r)
		}
		return
	}
	if r.ExitCode == 0 || !strings.Contains(string(r.Stderr), "cannot be used with root/sudo privileges") {
		t.Errorf("as root without IS_SANDBOX: want a refusal, got:\n%s", r)
	}
	if p.exists("plain.txt") || len(srv.Requests()) != 0 {
		t.Errorf("refused run still worked: file=%v requests:\n%s", p.exists("plain.txt"), srv.Summary())
	}
}

// TestClaudeCodeHookFailureFailsOpen pins that a hook that crashes (exit 1)
// or outlives its timeout lets the tool run, and that the "|| exit 2"
// wrapper turns a crash into a deny but does not help against a timeout:
// the hook needs its own deadline shorter than the harness's.
func TestClaudeCodeHookFailureFailsOpen(t *testing.T) {
	files := []string{"crash.txt", "slow.txt"}
	for _, tc := range []struct {
		name       string
		failClosed bool
		written    map[string]bool
	}{
		{"bare", false, map[string]bool{"crash.txt": true, "slow.txt": true}},
		{"wrapped", true, map[string]bool{"crash.txt": false, "slow.txt": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newClaudeProjectWith(t, hookOpts{timeout: 3, failClosed: tc.failClosed})
			srv := fakemodel.NewAnthropic(fakemodel.Script{Turns: p.writes(files...)})
			defer srv.Close()
			r := p.run(t, srv, "Write the files.", "--permission-mode", "bypassPermissions")
			if r.ExitCode != 0 {
				t.Fatalf("claude failed:\n%s", r)
			}
			for i, f := range files {
				res, _ := srv.ToolResult(srv.ToolUseID(0, i))
				if p.exists(f) != tc.written[f] {
					t.Errorf("%s: written=%v, want %v (tool_result %+v)", f, p.exists(f), tc.written[f], res)
				}
				if !tc.written[f] && (!res.IsError || !strings.Contains(res.Content, "e2e-hook: crashed on purpose")) {
					t.Errorf("%s: tool_result = %+v; want is_error with the hook's stderr", f, res)
				}
			}
		})
	}
}

// mcpRecord is one line of the probe MCP server's log.
type mcpRecord struct {
	Event  string            `json:"event"`
	Env    map[string]string `json:"env"`
	Cwd    string            `json:"cwd"`
	Params json.RawMessage   `json:"params"`
}

func readMCPLog(t *testing.T, path string) []mcpRecord {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("MCP log: %v (the server never started)", err)
	}
	var out []mcpRecord
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var rec mcpRecord
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("MCP log line %q: %v", line, err)
		}
		out = append(out, rec)
	}
	return out
}

// TestClaudeCodeMCPServer pins how an MCP server is configured (--mcp-config
// with --strict-mcp-config, or the project's .mcp.json, which -p mode loads
// without asking) and what it gets: the session id in CLAUDE_CODE_SESSION_ID
// (equal to the hook's session_id), the config's env, the project as cwd,
// the tool-use id in the tools/call _meta (equal to the hook's tool_use_id),
// and the arguments as the PreToolUse hook rewrote them with updatedInput —
// the links between the hook and the MCP call.
func TestClaudeCodeMCPServer(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, variant := range []string{"mcp-config-flag", "dot-mcp-json"} {
		t.Run(variant, func(t *testing.T) {
			p := newClaudeProject(t)
			mcpLog := t.TempDir() + "/mcp.jsonl"
			cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"probe": map[string]any{
				"type": "stdio", "command": self, "args": []string{"e2e-mcp", mcpLog},
				"env": map[string]string{"PROBE_FROM_CONFIG": "yes"}}}})
			// Default mode: the hook's "allow" is what lets the MCP call run.
			args := []string{"--permission-mode", "default"}
			wantSource := "project"
			if variant == "mcp-config-flag" {
				f := t.TempDir() + "/mcp.json"
				if err := os.WriteFile(f, cfg, 0o644); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--mcp-config", f, "--strict-mcp-config")
				wantSource = "dynamic"
			} else if err := os.WriteFile(p.path(".mcp.json"), cfg, 0o644); err != nil {
				t.Fatal(err)
			}
			srv := fakemodel.NewAnthropic(fakemodel.Script{Turns: []fakemodel.Turn{
				fakemodel.Call(fakemodel.Tool("mcp__probe__echo", map[string]any{"text": "hi"})),
				fakemodel.Say("done"),
			}})
			defer srv.Close()
			r := p.run(t, srv, "Call the probe.", args...)
			if r.ExitCode != 0 {
				t.Fatalf("claude failed:\n%s", r)
			}
			id := srv.ToolUseID(0, 0)
			if res, ok := srv.ToolResult(id); !ok || res.IsError || res.Content != "echo: hi" {
				t.Errorf("MCP tool_result = %+v (found %v), want \"echo: hi\"", res, ok)
			}

			hooks := readHookLog(t, p.hookLog)
			if len(hooks) != 1 {
				t.Fatalf("hook ran %d times, want 1: %v", len(hooks), hooks)
			}
			h := hooks[0]
			server, _ := h["mcp_server"].(map[string]any)
			if h["tool_name"] != "mcp__probe__echo" || h["tool_use_id"] != id || server["name"] != "probe" || server["source"] != wantSource {
				t.Errorf("hook input for the MCP call: tool_name=%v tool_use_id=%v mcp_server=%v; want mcp__probe__echo, %s, probe/%s",
					h["tool_name"], h["tool_use_id"], h["mcp_server"], id, wantSource)
			}

			var start, call *mcpRecord
			recs := readMCPLog(t, mcpLog)
			for i := range recs {
				switch recs[i].Event {
				case "start":
					start = &recs[i]
				case "call":
					call = &recs[i]
				}
			}
			if start == nil || call == nil {
				t.Fatalf("MCP server: start=%v call=%v", start, call)
			}
			if start.Env["CLAUDE_CODE_SESSION_ID"] != h["session_id"] {
				t.Errorf("MCP server CLAUDE_CODE_SESSION_ID = %q, hook session_id = %v", start.Env["CLAUDE_CODE_SESSION_ID"], h["session_id"])
			}
			if start.Env["PROBE_FROM_CONFIG"] != "yes" || start.Env["CLAUDE_PROJECT_DIR"] != p.dir || start.Cwd != p.dir {
				t.Errorf("MCP server env/cwd = %v / %s; want PROBE_FROM_CONFIG=yes and the project %s", start.Env, start.Cwd, p.dir)
			}
			var params struct {
				Name      string         `json:"name"`
				Arguments map[string]any `json:"arguments"`
				Meta      map[string]any `json:"_meta"`
			}
			if err := json.Unmarshal(call.Params, &params); err != nil {
				t.Fatal(err)
			}
			if params.Name != "echo" || params.Meta["claudecode/toolUseId"] != id {
				t.Errorf("tools/call params = %s; want name echo and _meta claudecode/toolUseId %s", call.Params, id)
			}
			// The hook's updatedInput (allow + a "stamp" field the tool's
			// schema does not declare) reaches the server unchanged.
			if params.Arguments["stamp"] != h["session_id"] || params.Arguments["text"] != "hi" {
				t.Errorf("tools/call arguments = %v; want text hi and the hook's stamp %v", params.Arguments, h["session_id"])
			}
		})
	}
}

// TestClaudeCodeSessions pins session identity across runs: --session-id
// names the session (hook session_id, stream events, transcript), --resume
// keeps it and replays the history to the model, --fork-session makes a new
// one, and a used --session-id is refused.
func TestClaudeCodeSessions(t *testing.T) {
	p := newClaudeProject(t)
	const sid = "0f6c4a52-7b5e-4c8e-9d7a-3e2b1a0c9d8e"
	step := func(file string, args ...string) (*Run, *fakemodel.Server) {
		srv := fakemodel.NewAnthropic(fakemodel.Script{Turns: p.writes(file)})
		t.Cleanup(srv.Close)
		return p.run(t, srv, "Write "+file, append([]string{"--permission-mode", "acceptEdits"}, args...)...), srv
	}
	sessionOf := func(r *Run) string {
		res := r.Result()
		s, _ := res["session_id"].(string)
		return s
	}

	r1, _ := step("one.txt", "--session-id", sid)
	if r1.ExitCode != 0 || sessionOf(r1) != sid || !p.exists("one.txt") {
		t.Fatalf("--session-id: session %q, file %v\n%s", sessionOf(r1), p.exists("one.txt"), r1)
	}
	r2, srv2 := step("two.txt", "--resume", sid)
	if r2.ExitCode != 0 || sessionOf(r2) != sid || !p.exists("two.txt") {
		t.Fatalf("--resume: session %q, file %v\n%s", sessionOf(r2), p.exists("two.txt"), r2)
	}
	// The resumed conversation carries the first run's tool call and result.
	if res, ok := srv2.ToolResult(srv2.ToolUseID(0, 0)); !ok || res.IsError {
		t.Errorf("--resume: two.txt result %+v (found %v)", res, ok)
	}
	if first := srv2.MainRequests()[0]; !strings.Contains(string(first.Body), p.path("one.txt")) {
		t.Errorf("--resume: the first request does not carry the earlier history")
	}
	r3, _ := step("three.txt", "--resume", sid, "--fork-session")
	if forked := sessionOf(r3); r3.ExitCode != 0 || forked == "" || forked == sid {
		t.Errorf("--fork-session: session %q, want a new one\n%s", forked, r3)
	}
	r4, srv4 := step("four.txt", "--session-id", sid)
	if r4.ExitCode == 0 || !strings.Contains(string(r4.Stderr), "already in use") || len(srv4.Requests()) != 0 {
		t.Errorf("reused --session-id: want a refusal\n%s", r4)
	}

	var got []string
	for _, rec := range readHookLog(t, p.hookLog) {
		got = append(got, rec["session_id"].(string))
	}
	if len(got) != 3 || got[0] != sid || got[1] != sid || got[2] == sid {
		t.Errorf("hook session_ids = %v; want %s twice, then the fork's", got, sid)
	}
}

// TestClaudeCodeHookEvents pins the lifecycle events a -p run sends to
// command hooks and their fields, and that a call denied at PreToolUse gets
// neither PostToolUse nor PostToolUseFailure: whatever PreToolUse reserved
// for a denied call must be settled there, not in a later hook.
func TestClaudeCodeHookEvents(t *testing.T) {
	events := []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop", "SessionEnd"}
	p := newClaudeProjectWith(t, hookOpts{events: events})
	srv := fakemodel.NewAnthropic(fakemodel.Script{Turns: []fakemodel.Turn{
		fakemodel.Call(
			fakemodel.Tool("Write", map[string]any{"file_path": p.path("allow.txt"), "content": "x\n"}),
			fakemodel.Tool("Write", map[string]any{"file_path": p.path("blocked.txt"), "content": "x\n"}),
			fakemodel.Tool("Read", map[string]any{"file_path": p.path("missing.txt")}),
		),
		fakemodel.Say("done"),
	}})
	defer srv.Close()
	const prompt = "Write and read."
	r := p.run(t, srv, prompt, "--permission-mode", "default")
	if r.ExitCode != 0 {
		t.Fatalf("claude failed:\n%s", r)
	}
	recs := readHookLog(t, p.hookLog)
	var order []string
	perCall := map[string][]string{} // tool_use_id -> events
	byEvent := map[string]map[string]any{}
	sid, _ := recs[0]["session_id"].(string)
	for _, rec := range recs {
		ev, _ := rec["hook_event_name"].(string)
		order = append(order, ev)
		if id, ok := rec["tool_use_id"].(string); ok {
			perCall[id] = append(perCall[id], ev)
		}
		if byEvent[ev] == nil {
			byEvent[ev] = rec
		}
		if rec["session_id"] != sid || sid == "" {
			t.Errorf("%s: session_id %v, want %s", ev, rec["session_id"], sid)
		}
	}
	t.Logf("events: %v", order)
	if len(order) < 2 || order[0] != "SessionStart" || order[1] != "UserPromptSubmit" ||
		order[len(order)-2] != "Stop" || order[len(order)-1] != "SessionEnd" {
		t.Errorf("event order %v; want SessionStart, UserPromptSubmit, … tool events …, Stop, SessionEnd", order)
	}
	want := map[string]string{
		srv.ToolUseID(0, 0): "PreToolUse PostToolUse",
		srv.ToolUseID(0, 1): "PreToolUse",
		srv.ToolUseID(0, 2): "PreToolUse PostToolUseFailure",
	}
	for id, w := range want {
		if got := strings.Join(perCall[id], " "); got != w {
			t.Errorf("events for %s: %q, want %q", id, got, w)
		}
	}

	ss := byEvent["SessionStart"]
	if env, _ := ss["_env"].(map[string]any); ss["source"] != "startup" || env["CLAUDE_ENV_FILE"] == nil {
		t.Errorf("SessionStart = %v; want source startup and CLAUDE_ENV_FILE in its env", ss)
	}
	if ups := byEvent["UserPromptSubmit"]; ups["prompt"] != prompt || ups["permission_mode"] != "default" {
		t.Errorf("UserPromptSubmit = %v; want prompt %q", ups, prompt)
	}
	if post := byEvent["PostToolUse"]; post != nil {
		resp, _ := post["tool_response"].(map[string]any)
		if resp["filePath"] != p.path("allow.txt") {
			t.Errorf("PostToolUse tool_response = %v", post["tool_response"])
		}
	}
	if fail := byEvent["PostToolUseFailure"]; fail != nil {
		if msg, _ := fail["error"].(string); !strings.Contains(msg, "does not exist") {
			t.Errorf("PostToolUseFailure error = %v", fail["error"])
		}
	}
	if stop := byEvent["Stop"]; stop["stop_hook_active"] != false || stop["last_assistant_message"] != "done" {
		t.Errorf("Stop = %v; want stop_hook_active false and last_assistant_message", stop)
	}
}

// TestClaudeCodeSubagent pins that a subagent's tool calls go through the
// same PreToolUse hook, with the parent's session_id plus agent_id and
// agent_type, and that the hook's deny holds there too. Claude Code runs
// the Agent tool in the background by default, so the subagent's requests
// interleave with the parent's: the script gives the subagent a thread of
// its own, matched by a marker in its prompt.
func TestClaudeCodeSubagent(t *testing.T) {
	p := newClaudeProject(t)
	const marker = "SUBAGENT-7f3a"
	srv := fakemodel.NewAnthropic(fakemodel.Script{
		Turns: []fakemodel.Turn{
			fakemodel.Call(fakemodel.Tool("Agent", map[string]any{
				"description": "write files", "prompt": marker + ": write the files", "subagent_type": "general-purpose"})),
			fakemodel.Say("waiting for the agent"),
			fakemodel.Say("done"),
		},
		Threads: []fakemodel.Thread{{
			Name:  "sub",
			Match: fakemodel.AnthropicFirstUserContains(marker),
			Turns: []fakemodel.Turn{
				fakemodel.Call(
					fakemodel.Tool("Write", map[string]any{"file_path": p.path("blocked-sub.txt"), "content": "x\n"}),
					fakemodel.Tool("Write", map[string]any{"file_path": p.path("allow-sub.txt"), "content": "x\n"}),
				),
				fakemodel.Say("sub done"),
			},
		}},
	}, fakemodel.WithLog(t.Logf))
	defer srv.Close()
	r := p.run(t, srv, "Delegate the writing.", "--permission-mode", "default")
	if r.ExitCode != 0 {
		t.Fatalf("claude failed:\n%s", r)
	}
	if !p.exists("allow-sub.txt") || p.exists("blocked-sub.txt") {
		t.Errorf("allow-sub.txt exists=%v (want true), blocked-sub.txt exists=%v (want false)", p.exists("allow-sub.txt"), p.exists("blocked-sub.txt"))
	}
	if srv.ServedThread("sub") != 2 {
		t.Errorf("subagent got %d turns, want 2\n%s", srv.ServedThread("sub"), srv.Summary())
	}
	if res, ok := srv.ToolResult(srv.ThreadToolUseID("sub", 0, 0)); !ok || !res.IsError || !strings.Contains(res.Content, reasonExit2) {
		t.Errorf("subagent's denied call: tool_result %+v (found %v)", res, ok)
	}

	recs := readHookLog(t, p.hookLog)
	parent, _ := recs[0]["session_id"].(string)
	if recs[0]["tool_name"] != "Agent" || recs[0]["agent_id"] != nil {
		t.Errorf("first hook call = %v; want the parent's Agent call without agent_id", recs[0])
	}
	subCalls := 0
	for _, rec := range recs[1:] {
		if rec["tool_name"] != "Write" {
			continue
		}
		subCalls++
		if rec["session_id"] != parent || rec["agent_type"] != "general-purpose" {
			t.Errorf("subagent hook input: session_id=%v agent_type=%v; want the parent's %s and general-purpose", rec["session_id"], rec["agent_type"], parent)
		}
		if id, _ := rec["agent_id"].(string); id == "" {
			t.Errorf("subagent hook input has no agent_id: %v", rec)
		}
	}
	if subCalls != 2 {
		t.Errorf("hook saw %d subagent Writes, want 2", subCalls)
	}
}

// TestClaudeCodeHooksAreSnapshotted pins that hooks are read once at start:
// an agent that overwrites .claude/settings.json mid-run (here allowed, in
// bypassPermissions mode with a hook that does not guard it) does not switch
// the hook off for the rest of the run. A later run would load the new file,
// which is why statewright's self-protection denies writes to it.
func TestClaudeCodeHooksAreSnapshotted(t *testing.T) {
	p := newClaudeProject(t)
	settings := p.path(".claude/settings.json")
	srv := fakemodel.NewAnthropic(fakemodel.Script{Turns: []fakemodel.Turn{
		fakemodel.Call(fakemodel.Tool("Write", map[string]any{"file_path": settings, "content": "{}\n"})),
		fakemodel.Call(fakemodel.Tool("Write", map[string]any{"file_path": p.path("blocked.txt"), "content": "x\n"})),
		fakemodel.Say("done"),
	}})
	defer srv.Close()
	r := p.run(t, srv, "Rewrite the settings, then write.", "--permission-mode", "bypassPermissions")
	if r.ExitCode != 0 {
		t.Fatalf("claude failed:\n%s", r)
	}
	if b, err := os.ReadFile(settings); err != nil || string(b) != "{}\n" {
		t.Fatalf("settings.json = %q, %v: the agent's overwrite did not happen", b, err)
	}
	if p.exists("blocked.txt") {
		t.Error("blocked.txt written: the hook was dropped when settings.json changed mid-run")
	}
	if res, ok := srv.ToolResult(srv.ToolUseID(1, 0)); !ok || !strings.Contains(res.Content, reasonExit2) {
		t.Errorf("tool_result after the overwrite = %+v (found %v); want the hook's deny", res, ok)
	}
}

// TestClaudeCodeHookContext pins how hooks talk to the model without a
// tool call: SessionStart's and UserPromptSubmit's additionalContext reach
// the first model request, and a Stop hook's "block" makes Claude Code
// continue with the reason (then marks the next Stop stop_hook_active).
func TestClaudeCodeHookContext(t *testing.T) {
	p := newClaudeProjectWith(t, hookOpts{events: []string{"SessionStart", "UserPromptSubmit", "Stop"}, context: true})
	srv := fakemodel.NewAnthropic(fakemodel.Script{Turns: []fakemodel.Turn{
		fakemodel.Say("first answer"),
		fakemodel.Say("second answer"),
	}})
	defer srv.Close()
	r := p.run(t, srv, "Plan the work.", "--permission-mode", "default")
	if r.ExitCode != 0 {
		t.Fatalf("claude failed:\n%s", r)
	}
	reqs := srv.MainRequests()
	if len(reqs) != 2 || srv.Overruns() != 0 {
		t.Fatalf("%d main requests, %d overruns; want 2, 0\n%s", len(reqs), srv.Overruns(), srv.Summary())
	}
	for _, ctx := range []string{ctxSessionStart, ctxPrompt} {
		if !strings.Contains(string(reqs[0].Body), ctx) {
			t.Errorf("first request lacks the hook's additionalContext %q", ctx)
		}
	}
	if strings.Contains(string(reqs[0].Body), stopReason) || !strings.Contains(string(reqs[1].Body), stopReason) {
		t.Errorf("the Stop hook's reason should reach the second request only")
	}
	if res := r.Result(); res == nil || res["result"] != "second answer" {
		t.Errorf("final result = %v, want the second answer", res)
	}
	var stops []any
	for _, rec := range readHookLog(t, p.hookLog) {
		if rec["hook_event_name"] == "Stop" {
			stops = append(stops, rec["stop_hook_active"])
		}
	}
	if len(stops) != 2 || stops[0] != false || stops[1] != true {
		t.Errorf("Stop hooks' stop_hook_active = %v, want [false true]", stops)
	}
}

// TestClaudeCodePermissionRequest pins that in -p default mode a call the
// PreToolUse hook leaves to the harness, and that needs permission, goes to
// the PermissionRequest hook (whose input has no tool_use_id), which can
// allow or deny it.
func TestClaudeCodePermissionRequest(t *testing.T) {
	p := newClaudeProjectWith(t, hookOpts{events: []string{"PreToolUse", "PermissionRequest"}})
	files := []string{"permit.txt", "refuse.txt", "plain.txt"}
	srv := fakemodel.NewAnthropic(fakemodel.Script{Turns: p.writes(files...)})
	defer srv.Close()
	r := p.run(t, srv, "Write the files.", "--permission-mode", "default")
	if r.ExitCode != 0 {
		t.Fatalf("claude failed:\n%s", r)
	}
	want := map[string]string{"permit.txt": "", "refuse.txt": reasonRefuse, "plain.txt": "but you haven't granted it yet"}
	for i, f := range files {
		res, _ := srv.ToolResult(srv.ToolUseID(0, i))
		if w := want[f]; w == "" {
			if !p.exists(f) || res.IsError {
				t.Errorf("%s: want written; exists=%v result=%+v", f, p.exists(f), res)
			}
		} else if p.exists(f) || !res.IsError || !strings.Contains(res.Content, w) {
			t.Errorf("%s: exists=%v result=%+v; want denied with %q", f, p.exists(f), res, w)
		}
	}
	var perms int
	for _, rec := range readHookLog(t, p.hookLog) {
		if rec["hook_event_name"] != "PermissionRequest" {
			continue
		}
		perms++
		if _, ok := rec["tool_use_id"]; ok || rec["tool_name"] != "Write" || rec["permission_suggestions"] == nil {
			t.Errorf("PermissionRequest input = %v; want tool_name, tool_input, permission_suggestions and no tool_use_id", rec)
		}
	}
	if perms != len(files) {
		t.Errorf("%d PermissionRequest hooks, want %d", perms, len(files))
	}
}
