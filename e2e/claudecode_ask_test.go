//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/internal/fakemodel"
	"github.com/statewright-go/statewright/store"
)

// askWorkflow gates the first move (localizing → fixing) on a person's
// approval, so the file the agent wants to edit stays out of reach until a
// person says yes.
const askWorkflow = `{
  "id": "e2e-ask",
  "initial": "localizing",
  "states": {
    "localizing": {
      "instructions": "Find the bug. Do not edit anything.",
      "allowed_tools": ["Read", "Grep", "Glob", "Bash"],
      "on": {"LOCALIZED": {"target": "fixing", "requires_approval": true, "approval_message": "let the agent edit main.txt"}}
    },
    "fixing": {
      "instructions": "Fix it.",
      "allowed_tools": ["Read", "Edit", "Write", "Bash"],
      "on": {"FIXED": "done"}
    },
    "done": {"type": "final"}
  }
}`

// newAskProject is a project set up by `statewright init claude-code` with
// its hooks and MCP server, running askWorkflow for e2eSession, started by
// a person.
func newAskProject(t *testing.T) *swProject {
	t.Helper()
	p := newSWProject(t)
	if out, err := p.initCommand("init", "claude-code", "--project", p.dir, "--store", p.storePath).CombinedOutput(); err != nil {
		t.Fatalf("init with MCP: %v\n%s", err, out)
	}
	if err := os.WriteFile(p.workflow, []byte(askWorkflow), 0o644); err != nil {
		t.Fatal(err)
	}
	p.cli(t, "start", p.workflow, "--session", e2eSession)
	return p
}

// promptGrants returns the session's prompt-grant approval events.
func promptGrants(t *testing.T, p *swProject) []store.Event {
	t.Helper()
	svc, done := p.service(t)
	defer done()
	evs, err := svc.History(context.Background(), "claude-code:"+e2eSession)
	if err != nil {
		t.Fatal(err)
	}
	var out []store.Event
	for _, e := range evs {
		if e.Kind == store.KindApproval && e.Rule == "prompt-grant" {
			out = append(out, e)
		}
	}
	return out
}

// TestClaudeCodeAskWithoutAPerson: where no person answers Claude Code's
// prompts (acceptEdits, bypassPermissions), a call that needs a person —
// the transition tool while the run awaits approval, the deactivate tool —
// is denied with a lesson that names the statewright command a person can
// run; nothing is granted, the run stays parked, and the edit the agent
// wanted stays denied (main.txt untouched). In -p default mode the hook
// does ask, but Claude Code has nobody to ask: the call does not go ahead,
// no PostToolUse confirms it, and nothing is granted either.
func TestClaudeCodeAskWithoutAPerson(t *testing.T) {
	for _, mode := range []string{"bypassPermissions", "acceptEdits", "default"} {
		t.Run(mode, func(t *testing.T) {
			p := newAskProject(t)
			const pre = "mcp__statewright__statewright_"
			edit := map[string]any{"file_path": p.path("main.txt"), "old_string": "old line", "new_string": "new line"}
			srv := fakemodel.NewAnthropic(script(
				fakemodel.Call(tool("toolu_park", pre+"transition", map[string]any{"event": "LOCALIZED", "data": map[string]any{"rationale": "found it"}})),
				fakemodel.Call(tool("toolu_ask", pre+"transition", map[string]any{"event": "LOCALIZED"})),
				fakemodel.Call(tool("toolu_deactivate", pre+"deactivate", map[string]any{"reason": "let me edit"})),
				fakemodel.Call(tool("toolu_edit", "Edit", edit)),
				fakemodel.Say("I need a person."),
			), fakemodel.WithLog(t.Logf))
			defer srv.Close()
			argv := []string{"-p", "Fix the bug.", "--output-format", "stream-json", "--verbose",
				"--permission-mode", mode, "--session-id", e2eSession}
			r, err := RunCommand(context.Background(), claudeTimeout, p.dir, ClaudeEnv(p.home, srv.URL), p.claude, argv...)
			if err != nil || r.TimedOut {
				t.Fatalf("claude: %v\n%v", err, r)
			}
			key := "claude-code:" + e2eSession
			if res := toolResult(t, srv, "toolu_park"); res.IsError || !strings.Contains(res.Content, "apr_") {
				t.Fatalf("park: %+v; want the run parked for approval\n%s", res, r)
			}
			ask := toolResult(t, srv, "toolu_ask")
			deact := toolResult(t, srv, "toolu_deactivate")
			if mode != "default" {
				if !ask.IsError || !strings.Contains(ask.Content, `permission mode "`+mode+`"`) ||
					!strings.Contains(ask.Content, "statewright approve "+key+" --id apr_") {
					t.Errorf("transition while parked: %+v; want a deny naming the mode and `statewright approve`", ask)
				}
				if !deact.IsError || !strings.Contains(deact.Content, "statewright deactivate "+key) {
					t.Errorf("deactivate: %+v; want a deny naming `statewright deactivate`", deact)
				}
			} else {
				// Asked, but nobody can answer in -p mode: Claude Code
				// refuses with the hook's reason.
				if !ask.IsError || !strings.Contains(ask.Content, "Answer yes to approve it") {
					t.Errorf("transition while parked: %+v; want Claude Code's refusal of the ask", ask)
				}
				if !deact.IsError || !strings.Contains(deact.Content, "only a person may grant it") {
					t.Errorf("deactivate: %+v; want Claude Code's refusal of the ask", deact)
				}
			}
			if res := toolResult(t, srv, "toolu_edit"); !res.IsError || !strings.Contains(res.Content, "localizing") {
				t.Errorf("edit: %+v; want a deny in localizing", res)
			}
			if b, _ := os.ReadFile(p.path("main.txt")); string(b) != "old line\n" {
				t.Errorf("main.txt = %q; want it untouched", b)
			}
			svc, done := p.service(t)
			defer done()
			v, err := svc.Status(context.Background(), key)
			if err != nil || v.Run.State != "localizing" || v.Run.Status != store.StatusAwaitingApproval {
				t.Fatalf("run = %+v, %v; want localizing, awaiting approval", v, err)
			}
			if g := promptGrants(t, p); len(g) != 0 {
				t.Errorf("prompt grants = %+v; want none", g)
			}
			evs, _ := svc.History(context.Background(), key)
			want := map[string]string{"toolu_ask": "deny", "toolu_deactivate": "deny", "toolu_edit": "deny"}
			if mode == "default" {
				want["toolu_ask"], want["toolu_deactivate"] = "ask", "ask"
			}
			got := map[string]string{}
			for _, e := range evs {
				if e.Kind == store.KindDecision {
					got[e.ToolUseID] = e.Decision
					var d map[string]any
					json.Unmarshal(e.Data, &d)
					if e.ToolUseID == "toolu_ask" && d["permission_mode"] != mode {
						t.Errorf("decision event does not record the mode: %s", e.Data)
					}
				}
			}
			for id, w := range want {
				if got[id] != w {
					t.Errorf("decision for %s = %q, want %q", id, got[id], w)
				}
			}
		})
	}
}
