package matrix

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/harness"
	"github.com/statewright-go/statewright/harness/adapters"
	"github.com/statewright-go/statewright/harness/internal/wire"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store/sqlite"
)

// winProject is the project of the Windows contract: the hook input of a
// harness on Windows names it with a drive letter and backslashes.
const winProject = `C:\Users\me\proj`

// winCalls are calls that change the law or read a secret, spelled as
// Claude Code and Codex send them on Windows. Each must be denied in the
// harness's own convention, with no run (dormant) and in a phase that may
// edit and run commands.
var winCalls = []struct {
	what    string
	harness policy.Harness
	tool    string
	input   map[string]any
}{
	{"Write, absolute", policy.ClaudeCode, "Write", map[string]any{"file_path": winProject + `\.claude\settings.json`, "content": "{}"}},
	{"Edit, relative", policy.ClaudeCode, "Edit", map[string]any{"file_path": `.claude\settings.local.json`, "old_string": "a", "new_string": "b"}},
	{"Write, other case", policy.ClaudeCode, "Write", map[string]any{"file_path": `c:\USERS\ME\PROJ\.CLAUDE\Settings.JSON`, "content": "{}"}},
	{"Write, short name", policy.ClaudeCode, "Write", map[string]any{"file_path": winProject + `\CLAUDE~1\settings.json`, "content": "{}"}},
	{"Read, a key", policy.ClaudeCode, "Read", map[string]any{"file_path": `C:\Users\me\.ssh\id_ed25519`}},
	{"Bash, redirect", policy.ClaudeCode, "Bash", map[string]any{"command": `echo {} > .claude\settings.json`}},
	{"apply_patch, relative", policy.Codex, "apply_patch", map[string]any{"command": "*** Begin Patch\n*** Add File: .codex\\config.toml\n+x\n*** End Patch\n"}},
	{"apply_patch, absolute", policy.Codex, "apply_patch", map[string]any{"command": "*** Begin Patch\n*** Update File: " + winProject + "\\.claude\\settings.json\n@@\n-a\n+b\n*** End Patch\n"}},
	{"Bash, PowerShell", policy.Codex, "Bash", map[string]any{"command": `Set-Content -Path .claude\settings.json -Value x`}},
	{"Bash, type a key", policy.Codex, "Bash", map[string]any{"command": `type C:\Users\me\.ssh\id_rsa`}},
}

// TestWindowsHookContract feeds Claude Code's and Codex's PreToolUse input
// as they send it on Windows (a C:\ working directory, backslashed paths)
// through each adapter and the runtime, and checks that every call that
// would change the law or read a secret is denied in the harness's own
// convention (exit 2, the lesson on stderr). The answers are golden
// (testdata/windows.txt; -update rewrites it).
func TestWindowsHookContract(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	wf := filepath.Join(dir, "wf.json")
	if err := os.WriteFile(wf, []byte(workflowJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(dir, "state.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := runtime.New(st, runtime.Options{ProjectDir: winProject})
	hook := &harness.Hook{Open: func(context.Context, string, ...string) (*runtime.Service, error) { return svc, nil }}

	var b strings.Builder
	for _, phase := range []string{"dormant", "fixing"} {
		for i, c := range winCalls {
			session := fmt.Sprintf("win-%s-%d", phase, i)
			key := string(c.harness) + ":" + session
			if phase != "dormant" {
				human := runtime.Actor{Kind: runtime.ActorHuman, Channel: "test", Name: "test"}
				if _, err := svc.Start(ctx, key, wf, human); err != nil {
					t.Fatal(err)
				}
				if _, err := svc.Transition(ctx, key, "LOCALIZED", map[string]any{"rationale": "found"}, runtime.Actor{Kind: runtime.ActorAgent, Channel: "test"}); err != nil {
					t.Fatal(err)
				}
			}
			data, err := json.Marshal(map[string]any{"session_id": session, "cwd": winProject, "permission_mode": "default",
				"hook_event_name": "PreToolUse", "tool_name": c.tool, "tool_input": c.input, "tool_use_id": fmt.Sprintf("call_%d", i)})
			if err != nil {
				t.Fatal(err)
			}
			a := adapters.Find(string(c.harness)).Respond(ctx, hook, "pre-tool-use", data)
			// Claude Code's deny is its JSON answer (exit 0, permissionDecision
			// "deny" and the lesson); Codex's is exit 2 with the lesson on stderr.
			jsonDeny := c.harness == policy.ClaudeCode
			if jsonDeny && (a.Exit != wire.ExitOK || !strings.Contains(string(a.Stdout), `"permissionDecision":"deny"`) || len(a.Stderr) != 0) ||
				!jsonDeny && (a.Exit != wire.ExitBlock || len(a.Stdout) != 0 || len(a.Stderr) == 0) {
				t.Errorf("%s %s (%s): exit %d, stdout %q, stderr %q; want a deny in the harness's convention", c.harness, c.what, phase, a.Exit, a.Stdout, a.Stderr)
			}
			fmt.Fprintf(&b, "== %s: %s (%s)\nexit %d\n-- stdout --\n%s-- stderr --\n%s\n", c.harness, c.what, phase, a.Exit, a.Stdout, a.Stderr)
		}
	}
	checkGolden(t, "windows.txt", b.String(), "the Windows contract changed; if that is intended, run go test ./harness/matrix -update")
}
