//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/statewright-go/statewright/internal/fakemodel"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/sqlite"
)

// The workflow of the Claude Code gateway test. The hook decides the
// proxied tools by their Claude Code names (mcp__gw__…), which planning
// lists; the gateway decides them by what they do (a Write of a path),
// which planning does not allow.
const ccGatewayWorkflow = `{
  "id": "cc-gateway",
  "initial": "planning",
  "states": {
    "planning": {
      "allowed_tools": ["Read", "mcp__gw__fs__read_text_file", "mcp__gw__fs__write_file"],
      "on": {"PLAN_READY": "implementing"}
    },
    "implementing": {
      "allowed_tools": ["Read", "Write", "mcp__gw__fs__read_text_file", "mcp__gw__fs__write_file"],
      "on": {"DONE": "done"}
    },
    "done": {"type": "final"}
  }
}`

// TestClaudeCodeThroughGateway runs the real Claude Code with statewright's
// hooks and the gateway as a second MCP server ("gw", the filesystem
// server behind it, the session from CLAUDE_CODE_SESSION_ID). In planning
// the gateway does not offer write_file (it would be a Write), so the
// model's call finds no such tool and the file is not created; its
// read_text_file goes through. After the transition (through statewright's
// own control server) the gateway announces its new tool list and the
// write goes through, decided as a Write.
func TestClaudeCodeThroughGateway(t *testing.T) {
	claude, err := ClaudeBinary()
	if err != nil {
		t.Fatal(err)
	}
	sw := statewrightBinary(t)
	fs := MCPServerBinary(t, "mcp-server-filesystem")
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
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("the plan\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	storePath := filepath.Join(state, "state.db")
	r, err := RunCommand(context.Background(), 60*time.Second, dir, append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME=", "CLAUDE_CONFIG_DIR="), sw,
		"init", "claude-code", "--project", dir, "--store", storePath, "--binary", sw)
	if err != nil || r.ExitCode != 0 {
		t.Fatalf("statewright init claude-code: %v\n%s", err, r)
	}
	// Register the gateway in the project's .mcp.json (statewright's own
	// control server is in the project's local scope, where init put it),
	// and let Claude Code start it without asking.
	mcpCfg := map[string]any{"mcpServers": map[string]any{"gw": map[string]any{"command": sw, "args": []string{"mcp", "--store", storePath,
		"--trust-env-session", "--project-dir", dir, "--poll", "50ms", "--upstream", "fs=" + fs + " " + dir}}}}
	b, _ := json.MarshalIndent(mcpCfg, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	settingsPath := filepath.Join(dir, ".claude", "settings.local.json")
	var settings map[string]any
	b, err = os.ReadFile(settingsPath)
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(b, &settings)
	settings["enabledMcpjsonServers"] = []any{"gw"}
	b, _ = json.MarshalIndent(settings, "", "  ")
	os.WriteFile(settingsPath, b, 0o644)

	// The operator starts the run for the session Claude Code will use.
	sid := mcpSessionUUID(t)
	wf := filepath.Join(state, "cc-gateway.json")
	os.WriteFile(wf, []byte(ccGatewayWorkflow), 0o644)
	r, err = RunCommand(context.Background(), 30*time.Second, dir, os.Environ(), sw, "start", wf, "--session", sid, "--store", storePath)
	if err != nil || r.ExitCode != 0 {
		t.Fatalf("statewright start: %v\n%s", err, r)
	}

	early := filepath.Join(dir, "too-early.txt")
	target := filepath.Join(dir, "plan-output.txt")
	srv := fakemodel.NewAnthropic(fakemodel.Script{Turns: []fakemodel.Turn{
		fakemodel.Call(fakemodel.Tool("mcp__gw__fs__write_file", map[string]any{"path": early, "content": "too early\n"})),
		fakemodel.Call(fakemodel.Tool("mcp__gw__fs__read_text_file", map[string]any{"path": filepath.Join(dir, "notes.txt")})),
		fakemodel.Call(fakemodel.Tool("mcp__statewright__statewright_transition", map[string]any{"event": "PLAN_READY"})),
		fakemodel.Call(fakemodel.Tool("Read", map[string]any{"file_path": filepath.Join(dir, "notes.txt")})),
		fakemodel.Call(fakemodel.Tool("mcp__gw__fs__write_file", map[string]any{"path": target, "content": "now\n"})),
		fakemodel.Say("Planned."),
		fakemodel.Say("Stopping."),
	}}, fakemodel.WithLog(t.Logf))
	defer srv.Close()
	p := &claudeProject{bin: claude, dir: dir, home: home}
	run := p.run(t, srv, "Plan the work.", "--permission-mode", "bypassPermissions", "--session-id", sid)
	if run.ExitCode != 0 {
		t.Fatalf("claude failed:\n%s\nrequests:\n%s", run, srv.Summary())
	}
	// planning: the gateway does not offer write_file, so Claude Code has
	// no such tool; nothing is written.
	res, ok := srv.ToolResult(srv.ToolUseID(0, 0))
	if !ok {
		t.Fatalf("no tool_result for the write\n%s", srv.Summary())
	}
	if !res.IsError || !strings.Contains(res.Content, "mcp__gw__fs__write_file") {
		t.Fatalf("write through the gateway in planning: %+v", res)
	}
	if _, err := os.Stat(early); !os.IsNotExist(err) {
		t.Fatalf("the write through the gateway in planning reached the disk (%v)", err)
	}
	res, ok = srv.ToolResult(srv.ToolUseID(1, 0))
	if !ok || res.IsError || !strings.Contains(res.Content, "the plan") {
		t.Fatalf("read through the gateway: %+v", res)
	}
	if res, ok = srv.ToolResult(srv.ToolUseID(2, 0)); !ok || res.IsError {
		t.Fatalf("transition: %+v", res)
	}
	// implementing: the gateway announced its new tool list
	// (list_changed), Claude Code took it, and the write goes through.
	res, ok = srv.ToolResult(srv.ToolUseID(4, 0))
	if !ok || res.IsError {
		t.Fatalf("write through the gateway in implementing: %+v\n%s", res, srv.Summary())
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "now\n" {
		t.Fatalf("written file: %q %v", b, err)
	}
	// The store holds the gateway's decisions under the Claude Code session.
	st, err := sqlite.Open(context.Background(), storePath, sqlite.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	evs, err := st.Events(context.Background(), store.EventFilter{SessionKey: "claude-code:" + sid, Kinds: []store.EventKind{store.KindDecision}})
	if err != nil {
		t.Fatal(err)
	}
	var gwAllow bool
	for _, e := range evs {
		if e.Tool == "Write" && e.Decision == "allow" && e.State == "implementing" {
			gwAllow = true
		}
	}
	if !gwAllow {
		t.Fatalf("no Write decision by the gateway in implementing in the store: %+v", evs)
	}
}
