package claudecode

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/statewright-go/statewright/engine"
	"github.com/statewright-go/statewright/harness"
	"github.com/statewright-go/statewright/harness/internal/wire"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// render shows an answer the way a golden file holds it.
func render(a harness.Answer) string {
	return fmt.Sprintf("exit %d\n-- stdout --\n%s-- stderr --\n%s", a.Exit, a.Stdout, a.Stderr)
}

func checkGolden(t *testing.T, name string, a harness.Answer) {
	t.Helper()
	got := render(a)
	path := filepath.Join("testdata", "golden", name+".txt")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s:\n got:\n%s\nwant:\n%s", path, got, want)
	}
	// Whatever goes to stdout is one JSON object Claude Code can parse.
	if len(a.Stdout) > 0 {
		var m map[string]any
		if err := json.Unmarshal(a.Stdout, &m); err != nil {
			t.Errorf("%s: stdout is not a JSON object: %v", name, err)
		}
		if a.Exit != wire.ExitOK {
			t.Errorf("%s: JSON on stdout with exit %d is ignored by Claude Code", name, a.Exit)
		}
	}
}

func u32(n uint32) *uint32 { return &n }

func sampleView() *runtime.RunView {
	return &runtime.RunView{
		Run: &store.Run{ID: "run1", SessionKey: "claude-code:s1", WorkflowID: "bugfix", State: "localizing",
			Iterations: 3, Status: store.StatusActive},
		AllowedTools:  []string{"Read", "Grep", "Glob"},
		Instructions:  "Find the bug.\n",
		NextEvents:    []engine.EventInfo{{Event: "LOCALIZED", Target: "fixing"}, {Event: "SHIP", Target: "done", Guarded: true, RequiresApproval: true}},
		MaxIterations: u32(20),
	}
}

func TestAnswersGolden(t *testing.T) {
	pre := &Input{HookInput: wire.HookInput{SessionID: "s1", ToolName: "Edit", ToolInput: json.RawMessage(`{"file_path":"/repo/x.go"}`),
		ToolUseID: "toolu_1", PermissionMode: "default", Cwd: "/repo"}}
	ctl := *pre
	ctl.ToolName, ctl.ToolInput = "mcp__statewright__transition", json.RawMessage(`{"event":"LOCALIZED","statewright_session":"forged"}`)
	human := ctl
	human.ToolName, human.ToolInput = "mcp__statewright__deactivate", json.RawMessage(`{}`)
	humanBypass := human
	humanBypass.PermissionMode = "bypassPermissions"

	deny := runtime.DecideResult{Enforced: true, Decision: policy.Decision{Verdict: policy.Deny, Rule: policy.RuleToolNotAllowed,
		Reason: "Edit is not allowed in phase 'localizing' (rule tool-not-allowed). Allowed tools: Read, Grep, Glob. Next events: LOCALIZED → fixing."}}
	allow := runtime.DecideResult{Enforced: true, Decision: policy.Decision{Verdict: policy.Allow, Rule: policy.RuleAllow, Reason: "allowed"}}
	ctlAllow := runtime.DecideResult{Enforced: true, Decision: policy.Decision{Verdict: policy.Allow, Rule: policy.RuleControlTransition, Reason: "transition requests are resolved by the engine"}}
	ask := runtime.DecideResult{Enforced: true, Decision: policy.Decision{Verdict: policy.Ask, Rule: policy.RuleControlHumanOnly, Reason: "`mcp__statewright__deactivate` weakens enforcement, so only a person may grant it."}}
	audit := deny
	audit.Enforced = false

	view := sampleView()
	final := sampleView()
	final.IsFinal, final.Run.State, final.AllowedTools, final.NextEvents = true, "done", []string{}, nil
	parked := sampleView()
	parked.Run.Status = store.StatusAwaitingApproval
	parked.Run.PendingApproval = &store.Approval{ID: "ap_1", To: "done", ExpiresAt: time.Unix(0, 0)}
	stop := &Input{HookInput: wire.HookInput{SessionID: "s1"}}

	for name, a := range map[string]harness.Answer{
		"pre_deny":                PreToolAnswer(pre, deny),
		"pre_allow":               PreToolAnswer(pre, allow),
		"pre_allow_control_stamp": PreToolAnswer(&ctl, ctlAllow),
		"pre_ask_default_mode":    PreToolAnswer(&human, ask),
		"pre_ask_bypass_mode":     PreToolAnswer(&humanBypass, ask),
		"pre_audit_only_deny":     PreToolAnswer(pre, audit),
		"fail_pre_tool_use":       Failure(PreToolUse, "open store: store: store id mismatch"),
		"fail_user_prompt_submit": Failure(UserPromptSubmit, "statewright: open store: store: no store"),
		"fail_session_start":      Failure(SessionStart, "open store: store: no store"),
		"fail_stop":               Failure(Stop, "hook deadline (5s) passed"),
		"fail_subagent_stop":      Failure(SubagentStop, "hook deadline (5s) passed"),
		"fail_post_tool_use":      Failure(PostToolUse, "record: store: busy"),
		"context_prompt":          wire.Context(string(UserPromptSubmit), PhaseContext(view)),
		"context_session_start":   wire.Context(string(SessionStart), PhaseContext(view)),
		"context_final":           wire.Context(string(UserPromptSubmit), PhaseContext(final)),
		"context_parked":          wire.Context(string(UserPromptSubmit), PhaseContext(parked)),
		"context_dormant":         wire.Context(string(UserPromptSubmit), PhaseContext(nil)),
		"stop_block":              wire.BlockStop(StopReason(stop, view)),
	} {
		t.Run(name, func(t *testing.T) { checkGolden(t, name, a) })
	}
}

func TestPreToolAnswerOutcomes(t *testing.T) {
	in := &Input{HookInput: wire.HookInput{SessionID: "s1", ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"ls"}`), ToolUseID: "t", PermissionMode: "default"}}
	for _, tt := range []struct {
		name     string
		res      runtime.DecideResult
		exit     int
		stdout   string // substring, "" = none
		stderrOK bool
	}{
		{"zero result denies", runtime.DecideResult{Enforced: true}, wire.ExitOK, `"permissionDecision":"deny"`, false},
		{"allow passes", runtime.DecideResult{Enforced: true, Decision: policy.Decision{Verdict: policy.Allow}}, wire.ExitOK, "", false},
		{"audit-only allow passes", runtime.DecideResult{Decision: policy.Decision{Verdict: policy.Allow}}, wire.ExitOK, "", false},
		{"audit-only deny passes", runtime.DecideResult{Decision: policy.Decision{Verdict: policy.Deny}}, wire.ExitOK, "", false},
		{"ask asks", runtime.DecideResult{Enforced: true, Decision: policy.Decision{Verdict: policy.Ask}}, wire.ExitOK, `"permissionDecision":"ask"`, false},
	} {
		a := PreToolAnswer(in, tt.res)
		if a.Exit != tt.exit || (tt.stdout == "") != (len(a.Stdout) == 0) || !strings.Contains(string(a.Stdout), tt.stdout) ||
			tt.stderrOK != (a.Stderr != "") {
			t.Errorf("%s: %s", tt.name, render(a))
		}
	}
	// An ask in any mode but default is a deny.
	for _, mode := range []string{"", "plan", "acceptEdits", "auto", "dontAsk", "bypassPermissions"} {
		in := *in
		in.PermissionMode = mode
		a := PreToolAnswer(&in, runtime.DecideResult{Enforced: true, Decision: policy.Decision{Verdict: policy.Ask, Reason: "needs a person."}})
		if !isDeny(a) || !strings.Contains(denyReason(a), fmt.Sprintf("%q", mode)) {
			t.Errorf("ask in mode %q: %s", mode, render(a))
		}
	}
	// A control call with an input that is not an object cannot be stamped: deny.
	bad := *in
	bad.ToolName, bad.ToolInput = "mcp__statewright__transition", json.RawMessage(`[]`)
	if a := PreToolAnswer(&bad, runtime.DecideResult{Enforced: true, Decision: policy.Decision{Verdict: policy.Allow}}); !isDeny(a) {
		t.Errorf("unstampable control call: %s", render(a))
	}
}

// isDeny reports whether a is Claude Code's JSON deny: exit 0, nothing on
// stderr (which Claude Code would show), permissionDecision "deny".
func isDeny(a harness.Answer) bool {
	return a.Exit == wire.ExitOK && a.Stderr == "" && denyReason(a) != ""
}

// denyReason returns the reason of a JSON deny, or "".
func denyReason(a harness.Answer) string {
	var out struct {
		HookSpecificOutput struct {
			PermissionDecision, PermissionDecisionReason string
		}
	}
	if json.Unmarshal(a.Stdout, &out) != nil || out.HookSpecificOutput.PermissionDecision != "deny" {
		return ""
	}
	return out.HookSpecificOutput.PermissionDecisionReason
}

func TestStopReason(t *testing.T) {
	v := sampleView()
	if StopReason(&Input{HookInput: wire.HookInput{SessionID: "s"}}, v) == "" {
		t.Error("an active non-final run lets the agent stop")
	}
	if StopReason(&Input{HookInput: wire.HookInput{SessionID: "s", StopHookActive: true}}, v) != "" {
		t.Error("stop_hook_active must let the agent stop (no loop)")
	}
	if StopReason(&Input{HookInput: wire.HookInput{SessionID: "s"}}, nil) != "" {
		t.Error("no run must let the agent stop")
	}
	for name, mut := range map[string]func(*runtime.RunView){
		"final":  func(v *runtime.RunView) { v.IsFinal = true },
		"parked": func(v *runtime.RunView) { v.Run.Status = store.StatusAwaitingApproval },
		"paused": func(v *runtime.RunView) { v.Run.Status = store.StatusPaused },
		"audit":  func(v *runtime.RunView) { v.Run.AuditOnly = true },
		"no run": func(v *runtime.RunView) { v.Run = nil },
	} {
		v := sampleView()
		mut(v)
		if r := StopReason(&Input{HookInput: wire.HookInput{SessionID: "s"}}, v); r != "" {
			t.Errorf("%s: StopReason = %q, want the agent to stop", name, r)
		}
	}
}

func TestToolResultExitCode(t *testing.T) {
	in := &Input{HookInput: wire.HookInput{SessionID: "s", ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"go test"}`), ToolUseID: "t",
		ToolResponse: json.RawMessage(`{"stdout":"FAIL","exit_code":1}`)}}
	r := ToolResult(in, PostToolUseFailure, "/proj")
	if r.ExitCode == nil || *r.ExitCode != 1 || !r.Failed || r.Session != "claude-code:s" || r.Call.ProjectDir != "/proj" {
		t.Errorf("ToolResult = %+v", r)
	}
	in.ToolResponse = json.RawMessage(`"text"`)
	if r := ToolResult(in, PostToolUse, ""); r.ExitCode != nil || r.Failed {
		t.Errorf("ToolResult = %+v", r)
	}
}

func TestAnswerWrite(t *testing.T) {
	var out, errb bytes.Buffer
	if code := wire.Deny("no").Write(&out, &errb); code != 2 || out.Len() != 0 || errb.String() != "no\n" {
		t.Errorf("Write = %d %q %q", code, out.String(), errb.String())
	}
}
