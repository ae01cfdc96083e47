//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The test binary doubles as the PreToolUse hook the harness runs:
//
//	<test binary> e2e-hook LOGFILE [context]
//
// It appends {"stdin": <hook input>, "env": {...}} to LOGFILE. With
// "context", SessionStart and UserPromptSubmit answer additionalContext
// (ctxSessionStart, ctxPrompt) and Stop blocks once (stopReason, unless
// stop_hook_active). PermissionRequest allows files named "permit" and
// denies files named "refuse" (reasonRefuse). Other events exit 0. For
// PreToolUse it allows
// mcp__probe__* calls with updatedInput adding "stamp": <session_id>, and
// decides other calls by the base name of tool_input.file_path:
//
//	contains "blocked"   exit 2, reason on stderr
//	contains "jsondeny"  JSON permissionDecision "deny" with a reason
//	contains "ask"       JSON permissionDecision "ask"
//	contains "allow"     JSON permissionDecision "allow"
//	contains "crash"     exit 1, message on stderr (a broken hook)
//	contains "slow"      sleep 20 s, then exit 2 (outlives the hook timeout)
//	otherwise            exit 0, no output (the harness decides)
func TestMain(m *testing.M) {
	if len(os.Args) >= 3 && os.Args[1] == "e2e-hook" {
		context := len(os.Args) == 4 && os.Args[3] == "context"
		os.Exit(runHook(os.Args[2], context, os.Stdin, os.Stdout, os.Stderr))
	}
	if len(os.Args) == 3 && os.Args[1] == "e2e-mcp" {
		os.Exit(runMCPProbe(os.Args[2], os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}

// Reasons and context the test hook gives, which the model must be told.
const (
	reasonExit2     = "e2e-hook: files named blocked are forbidden in this phase"
	reasonJSON      = "e2e-hook: json deny for jsondeny files"
	ctxSessionStart = "e2e-hook: session context 5d1e"
	ctxPrompt       = "e2e-hook: phase is planning 9c2b"
	stopReason      = "e2e-hook: not final yet, transition first 77aa"
	reasonRefuse    = "e2e-hook: permission refused for refuse files"
)

// hookRecord is one line of the hook log.
type hookRecord struct {
	Stdin json.RawMessage   `json:"stdin"`
	Env   map[string]string `json:"env"`
}

// hookEnvKeys are the variables the hook records, to document what the
// harness hands a hook.
var hookEnvKeys = []string{"CLAUDE_PROJECT_DIR", "CLAUDE_CODE_SESSION_ID", "CLAUDE_SESSION_ID", "CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_ENV_FILE", "PWD"}

func runHook(logPath string, context bool, stdin io.Reader, stdout, stderr io.Writer) int {
	in, err := io.ReadAll(stdin)
	if err != nil {
		fmt.Fprintln(stderr, "e2e-hook: read stdin:", err)
		return 2
	}
	rec := hookRecord{Stdin: json.RawMessage(in), Env: map[string]string{}}
	if !json.Valid(in) {
		rec.Stdin, _ = json.Marshal(string(in))
	}
	for _, k := range hookEnvKeys {
		if v, ok := os.LookupEnv(k); ok {
			rec.Env[k] = v
		}
	}
	line, _ := json.Marshal(rec)
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(stderr, "e2e-hook: log:", err)
		return 2
	}
	_, werr := f.Write(append(line, '\n'))
	if cerr := f.Close(); werr != nil || cerr != nil {
		fmt.Fprintln(stderr, "e2e-hook: log write failed")
		return 2
	}

	var input struct {
		Event          string         `json:"hook_event_name"`
		StopHookActive bool           `json:"stop_hook_active"`
		SessionID      string         `json:"session_id"`
		ToolName       string         `json:"tool_name"`
		ToolInput      map[string]any `json:"tool_input"`
	}
	_ = json.Unmarshal(in, &input)
	filePath, _ := input.ToolInput["file_path"].(string)
	emit := func(v map[string]any) int {
		out, _ := json.Marshal(v)
		stdout.Write(out)
		return 0
	}
	switch {
	case input.Event == "PreToolUse":
	case input.Event == "PermissionRequest":
		fp, _ := input.ToolInput["file_path"].(string)
		switch name := filepath.Base(fp); {
		case strings.Contains(name, "permit"):
			return emit(map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": "PermissionRequest",
				"decision": map[string]any{"behavior": "allow"}}})
		case strings.Contains(name, "refuse"):
			return emit(map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": "PermissionRequest",
				"decision": map[string]any{"behavior": "deny", "message": reasonRefuse}}})
		}
		return 0
	case context && (input.Event == "SessionStart" || input.Event == "UserPromptSubmit"):
		ctx := map[string]string{"SessionStart": ctxSessionStart, "UserPromptSubmit": ctxPrompt}[input.Event]
		return emit(map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": input.Event, "additionalContext": ctx}})
	case context && input.Event == "Stop" && !input.StopHookActive:
		return emit(map[string]any{"decision": "block", "reason": stopReason})
	default:
		return 0
	}
	name := filepath.Base(filePath)
	decide := func(decision, reason string) int {
		out, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName": "PreToolUse", "permissionDecision": decision, "permissionDecisionReason": reason}})
		stdout.Write(out)
		return 0
	}
	switch {
	case strings.HasPrefix(input.ToolName, "mcp__probe__"):
		// Stamp the session into the call, as statewright's hook does for
		// its control tools.
		updated := map[string]any{}
		for k, v := range input.ToolInput {
			updated[k] = v
		}
		updated["stamp"] = input.SessionID
		out, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": updated}})
		stdout.Write(out)
		return 0
	case filePath == "":
		return 0
	case strings.Contains(name, "crash"):
		fmt.Fprintln(stderr, "e2e-hook: crashed on purpose")
		return 1
	case strings.Contains(name, "slow"):
		time.Sleep(20 * time.Second)
		fmt.Fprintln(stderr, "e2e-hook: slow deny")
		return 2
	case strings.Contains(name, "blocked"):
		fmt.Fprintln(stderr, reasonExit2)
		return 2
	case strings.Contains(name, "jsondeny"):
		return decide("deny", reasonJSON)
	case strings.Contains(name, "ask"):
		return decide("ask", "e2e-hook: asking about "+name)
	case strings.Contains(name, "allow"):
		return decide("allow", "e2e-hook: allowed "+name)
	}
	return 0
}

// hookSettings returns .claude/settings.json content registering the test
// binary as the hook for opts.events (PreToolUse when none) and every tool,
// logging to logPath.
func hookSettings(t *testing.T, logPath string, opts hookOpts) map[string]any {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := fmt.Sprintf("'%s' e2e-hook '%s'", self, logPath)
	if opts.context {
		cmd += " context"
	}
	if opts.failClosed {
		cmd += " || exit 2"
	}
	events := opts.events
	if len(events) == 0 {
		events = []string{"PreToolUse"}
	}
	hooks := map[string]any{}
	for _, ev := range events {
		hooks[ev] = []any{map[string]any{"matcher": "*", "hooks": []any{
			map[string]any{"type": "command", "command": cmd, "timeout": opts.timeout}}}}
	}
	return map[string]any{"hooks": hooks}
}

// readHookLog returns the hook inputs from the log, in order, each with the
// recorded environment under the key "_env".
func readHookLog(t *testing.T, logPath string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatalf("hook log: %v (the hook never ran)", err)
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var rec hookRecord
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("hook log line %q: %v", line, err)
		}
		var in map[string]any
		if err := json.Unmarshal(rec.Stdin, &in); err != nil {
			t.Fatalf("hook stdin is not a JSON object: %s", rec.Stdin)
		}
		env := map[string]any{}
		for k, v := range rec.Env {
			env[k] = v
		}
		in["_env"] = env
		out = append(out, in)
	}
	return out
}
