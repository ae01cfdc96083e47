//go:build e2e

package e2e

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/statewright-go/statewright/internal/fakemodel"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/sqlite"
)

// mcpSessionUUID returns a random version-4 UUID, for claude --session-id.
func mcpSessionUUID(t *testing.T) string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// TestClaudeCodeMCPControl runs the real Claude Code with statewright
// installed by `statewright init claude-code` (its hooks and its MCP server
// on one store). The scripted model starts the bugfix workflow and moves it
// through the MCP control tools; the PreToolUse hook stamps the session into
// each call, so the run lands under claude-code:<session id> — the id Claude
// Code gave the hook — and the store shows it in the state the transitions
// reached. An unknown event comes back as a tool error that teaches.
func TestClaudeCodeMCPControl(t *testing.T) {
	claude, err := ClaudeBinary()
	if err != nil {
		t.Fatal(err)
	}
	sw := statewrightBinary(t)
	home, err := os.MkdirTemp("", "cc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := ClaudeHome(home, dir); err != nil {
		t.Fatal(err)
	}
	storePath := filepath.Join(t.TempDir(), "state.db")
	r, err := RunCommand(context.Background(), 60*time.Second, dir, append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME=", "CLAUDE_CONFIG_DIR="), sw,
		"init", "claude-code", "--project", dir, "--store", storePath, "--binary", sw)
	if err != nil || r.ExitCode != 0 {
		t.Fatalf("statewright init claude-code: %v\n%s", err, r)
	}

	const pre = "mcp__statewright__"
	srv := fakemodel.NewAnthropic(fakemodel.Script{Turns: []fakemodel.Turn{
		fakemodel.Call(fakemodel.Tool(pre+"statewright_start", map[string]any{"name": "bugfix"})),
		fakemodel.Call(fakemodel.Tool(pre+"statewright_transition", map[string]any{"event": "LOCALIZED", "data": map[string]any{"rationale": "found it"}})),
		fakemodel.Call(fakemodel.Tool(pre+"statewright_transition", map[string]any{"event": "NOPE"})),
		fakemodel.Call(fakemodel.Tool(pre+"statewright_get_state", map[string]any{})),
		fakemodel.Say("Planning now."),
		// The Stop hook may hold the agent once (the run is not final).
		fakemodel.Say("Stopping."),
	}}, fakemodel.WithLog(t.Logf))
	defer srv.Close()

	sid := mcpSessionUUID(t)
	p := &claudeProject{bin: claude, dir: dir, home: home}
	run := p.run(t, srv, "Fix the bug under statewright.", "--permission-mode", "default", "--session-id", sid)
	if run.ExitCode != 0 {
		t.Fatalf("claude failed:\n%s\nrequests:\n%s", run, srv.Summary())
	}
	if srv.Served() < 5 || srv.Overruns() != 0 {
		t.Errorf("served %d turns, %d overruns; want at least 5 and none\n%s", srv.Served(), srv.Overruns(), srv.Summary())
	}

	// What the model was told.
	result := func(turn int) fakemodel.ToolResult {
		t.Helper()
		res, ok := srv.ToolResult(srv.ToolUseID(turn, 0))
		if !ok {
			t.Fatalf("no tool_result for turn %d\n%s", turn, srv.Summary())
		}
		return res
	}
	// Claude Code hands the model the structuredContent (compact JSON)
	// of a successful call, the text of a failed one.
	decode := func(turn int) map[string]any {
		t.Helper()
		res := result(turn)
		var m map[string]any
		if res.IsError || json.Unmarshal([]byte(res.Content), &m) != nil {
			t.Errorf("turn %d: tool_result = %+v; want a JSON success", turn, res)
		}
		return m
	}
	snap := func(m map[string]any) map[string]any { s, _ := m["state_snapshot"].(map[string]any); return s }
	if m := decode(0); m["initial_state"] != "localizing" || snap(m)["session"] != "claude-code:"+sid {
		t.Errorf("start result = %v; want the run in localizing under claude-code:%s", m, sid)
	}
	if m := decode(1); m["transitioned"] != true || m["to"] != "planning" {
		t.Errorf("LOCALIZED result = %v; want a move to planning", m)
	}
	if res := result(2); !res.IsError || !strings.Contains(res.Content, "no transition for event 'NOPE' in state 'planning'") ||
		!strings.Contains(res.Content, "PLAN_READY") {
		t.Errorf("NOPE result = %+v; want a tool error listing the valid events", res)
	}
	if m := decode(3); m["state"] != "planning" || m["session"] != "claude-code:"+sid {
		t.Errorf("get_state result = %v; want planning", m)
	}

	// What the store holds: the run under the hook's session, in planning,
	// moved by the agent through the MCP channel.
	st, err := sqlite.Open(context.Background(), storePath, sqlite.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	key := "claude-code:" + sid
	live, err := st.LiveRun(context.Background(), key)
	if err != nil {
		runs, _ := st.Runs(context.Background(), store.RunFilter{})
		t.Fatalf("no live run for %s: %v (runs: %+v)", key, err, runs)
	}
	if live.State != "planning" || live.Status != store.StatusActive || !strings.Contains(live.WorkflowSource, "bugfix") {
		t.Errorf("stored run = %+v; want bugfix in planning, active", live)
	}
	evs, err := st.Events(context.Background(), store.EventFilter{SessionKey: key, Kinds: []store.EventKind{store.KindTransition}})
	if err != nil {
		t.Fatal(err)
	}
	var moved bool
	for _, e := range evs {
		var d struct {
			From, To string
			Actor    struct{ Kind, Channel string }
		}
		if json.Unmarshal(e.Data, &d) == nil && d.From == "localizing" && d.To == "planning" {
			moved = d.Actor.Kind == "agent" && d.Actor.Channel == "mcp"
		}
	}
	if !moved {
		t.Errorf("no localizing → planning transition by the agent over mcp in %+v", evs)
	}
}

// TestClaudeCodeMCPUnstamped registers statewright's MCP server without its
// hooks: nothing stamps the calls, so the server denies them although
// Claude Code hands it CLAUDE_CODE_SESSION_ID (which it ignores unless
// started with --trust-env-session), and no run is created.
func TestClaudeCodeMCPUnstamped(t *testing.T) {
	claude, err := ClaudeBinary()
	if err != nil {
		t.Fatal(err)
	}
	sw := statewrightBinary(t)
	home, err := os.MkdirTemp("", "cc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := ClaudeHome(home, dir); err != nil {
		t.Fatal(err)
	}
	storePath := filepath.Join(t.TempDir(), "state.db")
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"statewright": map[string]any{
		"type": "stdio", "command": sw, "args": []string{"mcp", "--store", storePath}}}})
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	srv := fakemodel.NewAnthropic(fakemodel.Script{Turns: []fakemodel.Turn{
		fakemodel.Call(fakemodel.Tool("mcp__statewright__statewright_start", map[string]any{"name": "bugfix"})),
		fakemodel.Say("Could not start."),
	}}, fakemodel.WithLog(t.Logf))
	defer srv.Close()
	p := &claudeProject{bin: claude, dir: dir, home: home}
	// No hook decides, so let the harness run the call without asking.
	run := p.run(t, srv, "Start a workflow.", "--permission-mode", "bypassPermissions")
	if run.ExitCode != 0 {
		t.Fatalf("claude failed:\n%s\nrequests:\n%s", run, srv.Summary())
	}
	res, ok := srv.ToolResult(srv.ToolUseID(0, 0))
	if !ok || !res.IsError || !strings.Contains(res.Content, "not tied to a session") {
		t.Errorf("start without a stamp: tool_result = %+v (found %v); want the server's denial", res, ok)
	}
	st, err := sqlite.Open(context.Background(), storePath, sqlite.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if runs, err := st.Runs(context.Background(), store.RunFilter{}); err != nil || len(runs) != 0 {
		t.Errorf("runs = %+v, %v; want none", runs, err)
	}
}
