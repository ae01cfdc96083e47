package claudecode

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/harness/internal/wire"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/sqlite"
)

func TestToolCallCarriesPermissionMode(t *testing.T) {
	for mode, prompt := range map[string]bool{"default": true, "acceptEdits": false, "bypassPermissions": false,
		"plan": false, "dontAsk": false, "auto": false, "": false} {
		tc := ToolCall(&Input{HookInput: wire.HookInput{SessionID: "s", ToolName: "Read", PermissionMode: mode}}, "")
		if tc.PermissionMode != mode || tc.HumanPrompt != prompt {
			t.Errorf("mode %q: PermissionMode %q HumanPrompt %v", mode, tc.PermissionMode, tc.HumanPrompt)
		}
	}
}

// TestAskThroughTheHookPath runs the adapter's PreToolUse and PostToolUse
// paths over a real store: an ask reaches Claude Code only in the default
// mode, and only the PostToolUse of the same tool_use_id grants it.
func TestAskThroughTheHookPath(t *testing.T) {
	const wf = `{"id":"a","initial":"plan","states":{"plan":{"allowed_tools":["Read"],"on":{"GO":"done"}},"done":{"type":"final"}}}`
	for _, tt := range []struct {
		mode      string
		post      Event // "" = no result (the person said no)
		wantAsk   bool
		wantState store.Status
	}{
		{"bypassPermissions", PostToolUse, false, store.StatusActive},
		{"acceptEdits", PostToolUse, false, store.StatusActive},
		{"dontAsk", PostToolUse, false, store.StatusActive},
		{"plan", PostToolUse, false, store.StatusActive},
		{"default", "", true, store.StatusActive},
		{"default", PostToolUseFailure, true, store.StatusActive},
		{"default", PostToolUse, true, store.StatusDeactivated},
	} {
		t.Run(fmt.Sprintf("%s/%s", tt.mode, tt.post), func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			st, err := sqlite.Open(ctx, filepath.Join(dir, "state.db"), sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			svc := runtime.New(st, runtime.Options{ProjectDir: dir})
			wfPath := filepath.Join(dir, "a.json")
			if err := os.WriteFile(wfPath, []byte(wf), 0o644); err != nil {
				t.Fatal(err)
			}
			key := SessionKey("s1")
			if _, err := svc.Start(ctx, key, wfPath, runtime.Actor{Kind: runtime.ActorHuman, Channel: "test"}); err != nil {
				t.Fatal(err)
			}
			raw := fmt.Sprintf(`{"session_id":"s1","cwd":%q,"permission_mode":%q,"hook_event_name":"PreToolUse",`+
				`"tool_name":"mcp__statewright__statewright_deactivate","tool_input":{"reason":"done"},"tool_use_id":"toolu_1"}`, dir, tt.mode)
			in, err := Decode(PreToolUse, []byte(raw))
			if err != nil {
				t.Fatal(err)
			}
			res, err := svc.Decide(ctx, ToolCall(in, dir))
			if err != nil {
				t.Fatal(err)
			}
			a := PreToolAnswer(in, res)
			// Both are Claude Code's JSON answers, exit 0: an ask, or a deny.
			if a.Exit != wire.ExitOK || strings.Contains(string(a.Stdout), `"permissionDecision":"ask"`) != tt.wantAsk ||
				(denyReason(a) != "") == tt.wantAsk {
				t.Fatalf("answer: %s", render(a))
			}
			if !tt.wantAsk && !strings.Contains(denyReason(a), "statewright deactivate "+key) {
				t.Errorf("the deny does not name the person's command: %s", a.Stdout)
			}
			if tt.wantAsk {
				// The ask carries the stamped input, as an allow would.
				var out struct {
					HookSpecificOutput struct {
						UpdatedInput map[string]any `json:"updatedInput"`
					} `json:"hookSpecificOutput"`
				}
				if err := json.Unmarshal(a.Stdout, &out); err != nil || out.HookSpecificOutput.UpdatedInput[SessionStampKey] != "s1" {
					t.Errorf("ask without the session stamp: %s (%v)", a.Stdout, err)
				}
			}
			if tt.post != "" {
				post := strings.Replace(raw, `"PreToolUse"`, `"`+string(tt.post)+`"`, 1)
				post = strings.TrimSuffix(post, "}") + `,"tool_response":{"requested":true}}`
				pin, err := Decode(tt.post, []byte(post))
				if err != nil {
					t.Fatal(err)
				}
				if err := svc.RecordResult(ctx, ToolResult(pin, tt.post, dir)); err != nil {
					t.Fatal(err)
				}
			}
			runs, err := st.Runs(ctx, store.RunFilter{SessionKey: key})
			if err != nil || len(runs) != 1 {
				t.Fatalf("runs: %v %v", runs, err)
			}
			if runs[0].Status != tt.wantState {
				t.Errorf("status = %s, want %s", runs[0].Status, tt.wantState)
			}
		})
	}
}
