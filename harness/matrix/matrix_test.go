package matrix

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/harness"
	"github.com/statewright-go/statewright/harness/adapters"
	"github.com/statewright-go/statewright/harness/claudecode"
	"github.com/statewright-go/statewright/harness/opencode"
	"github.com/statewright-go/statewright/harness/pi"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store/sqlite"
)

var update = flag.Bool("update", false, "rewrite testdata/matrix.md")

// The workflow of the end-to-end tests: a read-only phase, an editing
// phase, an approval gate before the final phase.
const workflowJSON = `{
  "id": "e2e-bugfix",
  "initial": "localizing",
  "states": {
    "localizing": {
      "allowed_tools": ["Read", "Grep", "Glob", "Bash"],
      "on": {"LOCALIZED": "fixing"}
    },
    "fixing": {
      "allowed_tools": ["Read", "Edit", "Write", "Bash"],
      "on": {"FIXED": {"target": "done", "requires_approval": true}}
    },
    "done": {"type": "final"}
  }
}`

// The harnesses, in column order.
var harnesses = []policy.Harness{policy.ClaudeCode, policy.OpenCode, policy.Pi, policy.Codex, policy.Cursor}

var columnNames = map[policy.Harness]string{
	policy.ClaudeCode: "Claude Code", policy.OpenCode: "opencode", policy.Pi: "Pi", policy.Codex: "Codex", policy.Cursor: "Cursor",
}

// spelled is one call as one harness spells it.
type spelled struct {
	tool  string
	input map[string]any
}

// step is one scripted call, spelled per harness. transition, when set, is
// the event the run then takes (as the control tool would).
type step struct {
	what       string
	calls      map[policy.Harness]spelled
	transition string
}

// script is the scripted calls, in order; main.txt and x.txt are relative
// to the project, filled in by abs.
func script(dir string) []step {
	p := func(name string) string { return filepath.Join(dir, name) }
	read := func(h policy.Harness) spelled {
		switch h {
		case policy.OpenCode:
			return spelled{"read", map[string]any{"filePath": p("main.txt")}}
		case policy.Pi:
			return spelled{"read", map[string]any{"path": p("main.txt")}}
		case policy.Codex:
			return spelled{"Bash", map[string]any{"command": "cat main.txt"}}
		}
		return spelled{"Read", map[string]any{"file_path": p("main.txt")}}
	}
	write := func(h policy.Harness, name string) spelled {
		switch h {
		case policy.OpenCode:
			return spelled{"write", map[string]any{"filePath": p(name), "content": "x\n"}}
		case policy.Pi:
			return spelled{"write", map[string]any{"path": p(name), "content": "x\n"}}
		case policy.Codex:
			return spelled{"apply_patch", map[string]any{"command": "*** Begin Patch\n*** Add File: " + p(name) + "\n+x\n*** End Patch\n"}}
		}
		return spelled{"Write", map[string]any{"file_path": p(name), "content": "x\n"}}
	}
	edit := func(h policy.Harness) spelled {
		switch h {
		case policy.OpenCode:
			return spelled{"edit", map[string]any{"filePath": p("main.txt"), "oldString": "old line", "newString": "new line"}}
		case policy.Pi:
			return spelled{"edit", map[string]any{"path": p("main.txt"), "oldText": "old line", "newText": "new line"}}
		case policy.Codex:
			return spelled{"apply_patch", map[string]any{"command": "*** Begin Patch\n*** Update File: " + p("main.txt") + "\n@@\n-old line\n+new line\n*** End Patch\n"}}
		case policy.Cursor:
			return spelled{"StrReplace", map[string]any{"file_path": p("main.txt"), "old_string": "old line", "new_string": "new line"}}
		}
		return spelled{"Edit", map[string]any{"file_path": p("main.txt"), "old_string": "old line", "new_string": "new line"}}
	}
	shell := func(h policy.Harness, cmd string) spelled {
		switch h {
		case policy.OpenCode, policy.Pi:
			return spelled{"bash", map[string]any{"command": cmd}}
		case policy.Cursor:
			return spelled{"Shell", map[string]any{"command": cmd}}
		}
		return spelled{"Bash", map[string]any{"command": cmd}}
	}
	control := func(h policy.Harness, op string, in map[string]any) spelled {
		switch h {
		case policy.OpenCode:
			return spelled{opencode.ControlPrefix + op, in}
		case policy.Pi:
			return spelled{pi.ControlPrefix + op, in}
		case policy.Cursor:
			return spelled{"MCP:statewright:statewright_" + op, in}
		}
		return spelled{claudecode.ControlPrefix + "statewright_" + op, in}
	}
	each := func(f func(policy.Harness) spelled) map[policy.Harness]spelled {
		m := map[policy.Harness]spelled{}
		for _, h := range harnesses {
			m[h] = f(h)
		}
		return m
	}
	return []step{
		{what: "read a file", calls: each(read)},
		{what: "write a new file", calls: each(func(h policy.Harness) spelled { return write(h, "x.txt") })},
		{what: "edit a file", calls: each(edit)},
		{what: "shell: list files", calls: each(func(h policy.Harness) spelled { return shell(h, "ls -la") })},
		{what: "shell: write by redirect", calls: each(func(h policy.Harness) spelled { return shell(h, "echo x > y.txt") })},
		{what: "shell: write by heredoc", calls: each(func(h policy.Harness) spelled { return shell(h, "cat > y.txt <<'EOF'\nx\nEOF") })},
		{what: "write the harness's hook settings", calls: each(func(h policy.Harness) spelled {
			return write(h, map[policy.Harness]string{policy.ClaudeCode: ".claude/settings.json", policy.OpenCode: "opencode.json",
				policy.Pi: ".pi/extensions/statewright.ts", policy.Codex: ".codex/hooks.json", policy.Cursor: ".cursor/hooks.json"}[h])
		})},
		{what: "type into a running process", calls: map[policy.Harness]spelled{
			policy.Codex: {"write_stdin", map[string]any{"session_id": 1, "chars": "rm -rf .git\n"}},
		}},
		{what: "control: get state", calls: each(func(h policy.Harness) spelled { return control(h, "get_state", map[string]any{}) })},
		{what: "control: deactivate", calls: each(func(h policy.Harness) spelled { return control(h, "deactivate", map[string]any{}) })},
		{what: "control: transition LOCALIZED", calls: each(func(h policy.Harness) spelled {
			return control(h, "transition", map[string]any{"event": "LOCALIZED", "data": map[string]any{"rationale": "found"}})
		}), transition: "LOCALIZED"},
		{what: "edit a file", calls: each(edit)},
		{what: "write a new file", calls: each(func(h policy.Harness) spelled { return write(h, "x.txt") })},
		{what: "shell: write by redirect", calls: each(func(h policy.Harness) spelled { return shell(h, "echo x > y.txt") })},
		{what: "shell: delete the repository", calls: each(func(h policy.Harness) spelled { return shell(h, "rm -rf .git") })},
		{what: "control: transition FIXED (approval-gated)", calls: each(func(h policy.Harness) spelled {
			return control(h, "transition", map[string]any{"event": "FIXED", "data": map[string]any{"rationale": "fixed"}})
		}), transition: "FIXED"},
		{what: "control: transition FIXED again, awaiting approval", calls: each(func(h policy.Harness) spelled {
			return control(h, "transition", map[string]any{"event": "FIXED", "data": map[string]any{"rationale": "please"}})
		})},
		{what: "another MCP server's tool", calls: each(func(h policy.Harness) spelled {
			if h == policy.OpenCode {
				return spelled{"github_create_issue", map[string]any{"title": "t"}}
			}
			if h == policy.Pi {
				return spelled{"github_create_issue", map[string]any{"title": "t"}}
			}
			if h == policy.Cursor {
				return spelled{"MCP:github:create_issue", map[string]any{"title": "t"}}
			}
			return spelled{"mcp__github__create_issue", map[string]any{"title": "t"}}
		})},
	}
}

// codexUnhooked are the Codex tools its hooks never see (docs/codex.md,
// "What Codex does not hook"): a decision on them is advisory.
var codexUnhooked = map[string]bool{"write_stdin": true, "web_search": true}

// outcome is one harness's rendering of one decision.
type outcome struct {
	verdict policy.Verdict
	rule    policy.Rule
	cell    string
}

// hookInput spells one call as harness h's hook input for its tool gate.
func hookInput(h policy.Harness, dir, session, callID string, c spelled) (event string, input map[string]any) {
	switch h {
	case policy.OpenCode, policy.Pi:
		return "tool-before", map[string]any{"session": session, "cwd": dir, "tool": c.tool, "call_id": callID, "args": c.input}
	case policy.Cursor:
		return "pre-tool-use", map[string]any{"conversation_id": session, "generation_id": "matrix", "workspace_roots": []string{dir},
			"cwd": dir, "hook_event_name": "preToolUse", "tool_name": c.tool, "tool_input": c.input, "tool_use_id": callID}
	}
	// Claude Code and Codex in the default permission mode, where (in
	// Claude Code) a person answers prompts.
	return "pre-tool-use", map[string]any{"session_id": session, "cwd": dir, "permission_mode": "default",
		"hook_event_name": "PreToolUse", "tool_name": c.tool, "tool_input": c.input, "tool_use_id": callID}
}

// cell says how harness h carried out the answer a to a decision: "" when
// the answer does not fit the decision.
func cell(h policy.Harness, tool string, a harness.Answer, o outcome) string {
	gated := o.rule == policy.RuleControlHumanOnly || o.rule == policy.RuleApprovalPending
	var plugin struct{ Decision string }
	json.Unmarshal(a.Stdout, &plugin)
	switch h {
	case policy.ClaudeCode:
		switch {
		case a.Exit == 0 && strings.Contains(string(a.Stdout), `"permissionDecision":"deny"`):
			return "blocked (hard)"
		case strings.Contains(string(a.Stdout), `"permissionDecision":"ask"`) && o.rule == runtime.RuleApprovalPrompt:
			return "asks its user to approve (a yes approves); blocked in bypassPermissions"
		case strings.Contains(string(a.Stdout), `"permissionDecision":"ask"`):
			return "asks its user (native prompt); blocked in bypassPermissions"
		case a.Exit == 0 && o.verdict == policy.Allow:
			return "runs"
		}
	case policy.OpenCode, policy.Pi:
		switch {
		case plugin.Decision == "allow" && a.Exit == 0 && o.verdict == policy.Allow:
			return "runs"
		case plugin.Decision == "deny" && gated:
			return "ask → blocked (the plugin hook cannot prompt)"
		case plugin.Decision == "deny" && a.Exit == 2:
			return "blocked (hard)"
		}
	case policy.Codex:
		switch {
		case codexUnhooked[tool] && o.verdict != policy.Allow:
			return "advisory: Codex does not hook `" + tool + "`, so the deny is never applied"
		case a.Exit == 2 && gated:
			return "ask → blocked (Codex hooks honour only deny)"
		case a.Exit == 2:
			return "blocked (hard)"
		case a.Exit == 0 && o.verdict == policy.Allow:
			return "runs"
		}
	case policy.Cursor:
		// Cursor's preToolUse (written from Cursor's documentation,
		// unverified against the real client: †).
		switch {
		case a.Exit == 2 && gated:
			return "ask → blocked (no person is known to answer Cursor's prompt)†"
		case a.Exit == 2:
			return "blocked (hard)†"
		case a.Exit == 0 && o.verdict == policy.Allow:
			return "runs"
		}
	}
	return ""
}

// decide runs one call through harness h's adapter, as its hook would,
// and reads the decision the runtime recorded for it.
func decide(t *testing.T, svc *runtime.Service, dir string, h policy.Harness, session, callID string, c spelled) outcome {
	t.Helper()
	ctx := context.Background()
	a := adapters.Find(string(h))
	if a == nil {
		t.Fatalf("no adapter for %s", h)
	}
	event, in := hookInput(h, dir, session, callID, c)
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	hook := &harness.Hook{Open: func(context.Context, string, ...string) (*runtime.Service, error) { return svc, nil }}
	ans := a.Respond(ctx, hook, event, data)
	evs, err := svc.History(ctx, string(h)+":"+session)
	if err != nil {
		t.Fatal(err)
	}
	var o outcome
	for _, e := range evs {
		if e.ToolUseID == callID && e.Decision != "" {
			o.verdict, o.rule = verdicts[e.Decision], policy.Rule(e.Rule)
		}
	}
	if o.rule == "" {
		t.Fatalf("%s %s: no decision recorded; the answer was %+v", h, c.tool, ans)
	}
	o.cell = cell(h, c.tool, ans, o)
	if o.cell == "" {
		t.Fatalf("%s %s: unexpected answer %+v for %v (%s)", h, c.tool, ans, o.verdict, o.rule)
	}
	o.cell = "`" + c.tool + "` " + o.cell
	return o
}

var verdicts = map[string]policy.Verdict{"allow": policy.Allow, "deny": policy.Deny, "ask": policy.Ask}

// sameLaw reports whether two harnesses got the same decision: the same
// rule and verdict, where an ask (a person can be prompted) and a deny by
// the same rule (no person can be prompted in that harness) are the same
// law rendered differently.
func sameLaw(a, b outcome) bool {
	if a.rule == b.rule && a.verdict == b.verdict {
		return true
	}
	// The pending approval: where a person can be prompted the runtime asks
	// them to approve (approval-prompt); elsewhere it denies (approval-pending).
	law := func(o outcome) outcome {
		if o.rule == runtime.RuleApprovalPrompt && o.verdict == policy.Ask {
			return outcome{verdict: policy.Deny, rule: policy.RuleApprovalPending}
		}
		if o.rule == policy.RuleControlHumanOnly && o.verdict == policy.Ask {
			return outcome{verdict: policy.Deny, rule: o.rule}
		}
		return outcome{verdict: o.verdict, rule: o.rule}
	}
	return law(a) == law(b)
}

// session returns the session id each harness uses in the matrix.
func session(h policy.Harness) string {
	switch h {
	case policy.OpenCode:
		return "ses_matrix"
	}
	return "5f0c1d2e-3a4b-4c5d-8e6f-7a8b9c0d1e2f"
}

// checkGolden compares got with testdata/name (-update rewrites it) and
// returns the file's content.
func checkGolden(t *testing.T, name, got, changed string) string {
	t.Helper()
	golden := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./harness/matrix -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s\n--- got\n%s\n--- want\n%s", changed, got, want)
	}
	return string(want)
}

// TestMatrix decides the same scripted calls, under the same workflow, in
// every harness's adapter, and checks that every harness gets the same
// decision (verdict and rule) for every call. The table of how each
// harness carries the decision out is testdata/matrix.md (-update rewrites
// it), and the README must show it verbatim.
func TestMatrix(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.txt"), []byte("old line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wf := filepath.Join(dir, "wf.json")
	if err := os.WriteFile(wf, []byte(workflowJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "state.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := runtime.New(st, runtime.Options{ProjectDir: dir})
	human := runtime.Actor{Kind: runtime.ActorHuman, Channel: "matrix", Name: "test"}
	for _, h := range harnesses {
		if _, err := svc.Start(ctx, string(h)+":"+session(h), wf, human); err != nil {
			t.Fatalf("start %s: %v", h, err)
		}
	}

	var b strings.Builder
	b.WriteString("| # | Call (phase) | Decision (rule) |")
	for _, h := range harnesses {
		b.WriteString(" " + columnNames[h] + " |")
	}
	b.WriteString("\n|---|---|---|" + strings.Repeat("---|", len(harnesses)) + "\n")
	for i, s := range script(dir) {
		var first *outcome
		var cells []string
		phase := ""
		for _, h := range harnesses {
			v, err := svc.Status(ctx, string(h)+":"+session(h))
			if err != nil {
				t.Fatal(err)
			}
			if phase == "" {
				phase = v.Run.State
			} else if v.Run.State != phase {
				t.Fatalf("step %d: %s is in %s, the others in %s", i, h, v.Run.State, phase)
			}
			c, ok := s.calls[h]
			if !ok {
				cells = append(cells, "— (no such tool)")
				continue
			}
			o := decide(t, svc, dir, h, session(h), fmt.Sprintf("call_%d", i), c)
			if first == nil {
				first = &o
			} else if !sameLaw(*first, o) {
				t.Errorf("step %d (%s): %s decided %s (%s), %s decided %s (%s): the law differs between harnesses",
					i, s.what, h, o.verdict, o.rule, harnesses[0], first.verdict, first.rule)
			}
			cells = append(cells, o.cell)
		}
		fmt.Fprintf(&b, "| %d | %s (%s) | %s (%s) | %s |\n", i+1, s.what, phase, first.verdict, first.rule, strings.Join(cells, " | "))
		if s.transition != "" {
			for _, h := range harnesses {
				if _, err := svc.Transition(ctx, string(h)+":"+session(h), s.transition, map[string]any{"rationale": "found"},
					runtime.Actor{Kind: runtime.ActorAgent, Channel: "matrix:" + string(h)}); err != nil {
					t.Fatalf("transition %s: %v", h, err)
				}
			}
		}
	}
	got := strings.ReplaceAll(b.String(), dir, "PROJECT")

	want := checkGolden(t, "matrix.md", got, "the matrix changed; if that is intended, run go test ./harness/matrix -update and update the README")
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), want) {
		t.Errorf("README.md does not show testdata/matrix.md verbatim; copy it into the README's harness matrix section")
	}
}
