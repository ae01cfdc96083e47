package cursor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/statewright-go/statewright/harness"
	"github.com/statewright-go/statewright/harness/install"
)

// Inspect implements harness.Inspector: statewright's hooks in the
// project's .cursor/hooks.json and in ~/.cursor/hooks.json, with
// preToolUse as the gate and a Write of .cursor/hooks.json as canary.
// Cursor's contract is written from its documentation (no offline client),
// and doctor says so.
func (adapter) Inspect(_ context.Context, q harness.InspectQuery) ([]*harness.Install, error) {
	files := []struct{ scope, path string }{{"project", filepath.Join(q.Project, ".cursor", "hooks.json")}}
	if home, err := os.UserHomeDir(); err == nil {
		files = append(files, struct{ scope, path string }{"user", filepath.Join(home, ".cursor", "hooks.json")})
	}
	var installs []*harness.Install
	for _, f := range files {
		b, err := os.ReadFile(f.path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		var doc struct {
			Hooks map[string][]hook `json:"hooks"`
		}
		if err == nil {
			err = json.Unmarshal(b, &doc)
		}
		if err != nil {
			installs = append(installs, &harness.Install{Scope: f.scope, File: f.path,
				Findings: []harness.Finding{harness.Failed("config", fmt.Sprintf("%s: %v (Cursor ignores it)", f.path, err))}})
			continue
		}
		in := &harness.Install{Scope: f.scope, File: f.path}
		var gate *hook
		seen := map[Event]bool{}
		for _, ev := range Events {
			for i, h := range doc.Hooks[string(ev)] {
				if install.IsHookOf("cursor", h.Command) {
					seen[ev] = true
					if ev == PreToolUse && gate == nil {
						gate = &doc.Hooks[string(ev)][i]
					}
				}
			}
		}
		harness.SetEvents(in, Events, seen)
		if len(in.Events) == 0 {
			continue
		}
		in.Findings = append(in.Findings, harness.Warned("cursor", "Cursor's hook contract is written from its documentation, not verified against the real client (docs/cursor.md)"))
		if gate != nil {
			in.Hook = install.SplitCommand(gate.Command)
			in.Timeout = time.Duration(gate.Timeout) * time.Second
			in.FailClosed = gate.FailClosed && install.WrapsFailClosed(gate.Command)
			if !in.FailClosed {
				in.FailOpen = "preToolUse lacks \"failClosed\": true or the `|| exit 2` wrapper: a crash, a timeout or a missing binary lets calls through"
			}
			input, _ := json.Marshal(map[string]any{
				"conversation_id": "statewright-doctor", "generation_id": "doctor", "workspace_roots": []string{q.Project}, "cwd": q.Project,
				"hook_event_name": string(PreToolUse), "tool_name": "Write",
				"tool_input":  map[string]any{"file_path": filepath.Join(q.Project, ".cursor", "hooks.json"), "content": "{}"},
				"tool_use_id": fmt.Sprintf("doctor-canary-%d", time.Now().UnixNano()),
			})
			failClosed := gate.FailClosed
			in.Gate = &harness.Gate{Shell: gate.Command, Input: input, Blocked: func(exit int, stdout, stderr []byte) (bool, string) {
				var out output
				json.Unmarshal(stdout, &out)
				switch {
				case exit == ExitBlock, exit == ExitOK && out.Permission == "deny":
					if out.AgentMessage != "" {
						return true, out.AgentMessage
					}
					return true, strings.TrimSpace(string(stderr))
				case exit != ExitOK && failClosed:
					return true, strings.TrimSpace(string(stderr))
				}
				return false, strings.TrimSpace(string(stdout) + " " + string(stderr))
			}}
		}
		installs = append(installs, in)
	}
	return installs, nil
}
