package codex

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/engine"
	"github.com/statewright-go/statewright/harness"
	"github.com/statewright-go/statewright/harness/internal/wire"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

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
	checkCodexOutput(t, name, a)
}

// checkCodexOutput enforces the output rules Codex 0.169 applies (it
// refuses the hook's answer otherwise): stdout is one JSON object, only
// with exit 0; a PreToolUse answer never carries "ask", never an "allow"
// without updatedInput, never updatedInput without "allow", never a
// reason without a decision.
func checkCodexOutput(t *testing.T, name string, a harness.Answer) {
	t.Helper()
	if len(a.Stdout) == 0 {
		if a.Exit != wire.ExitOK && a.Exit != wire.ExitBlock {
			t.Errorf("%s: exit %d is a hook failure, which Codex lets through", name, a.Exit)
		}
		if a.Exit == wire.ExitBlock && strings.TrimSpace(a.Stderr) == "" {
			t.Errorf("%s: exit 2 without a reason on stderr", name)
		}
		return
	}
	if a.Exit != wire.ExitOK {
		t.Errorf("%s: JSON on stdout with exit %d is ignored", name, a.Exit)
	}
	var o struct {
		HSO *struct {
			HookEventName      string          `json:"hookEventName"`
			PermissionDecision string          `json:"permissionDecision"`
			Reason             *string         `json:"permissionDecisionReason"`
			UpdatedInput       json.RawMessage `json:"updatedInput"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(a.Stdout, &o); err != nil {
		t.Fatalf("%s: stdout is not a JSON object: %v", name, err)
	}
	if h := o.HSO; h != nil && h.HookEventName == string(PreToolUse) {
		switch {
		case h.PermissionDecision == "ask":
			t.Errorf("%s: Codex refuses permissionDecision ask", name)
		case h.PermissionDecision == "allow" && len(h.UpdatedInput) == 0:
			t.Errorf("%s: Codex refuses an allow without updatedInput", name)
		case len(h.UpdatedInput) > 0 && h.PermissionDecision != "allow":
			t.Errorf("%s: Codex refuses updatedInput without an allow", name)
		case h.Reason != nil && h.PermissionDecision == "":
			t.Errorf("%s: Codex refuses a reason without a decision", name)
		}
	}
}

func u32(n uint32) *uint32 { return &n }

func sampleView() *runtime.RunView {
	return &runtime.RunView{
		Run: &store.Run{ID: "run1", SessionKey: "codex:s1", WorkflowID: "bugfix", State: "localizing",
			Iterations: 3, Status: store.StatusActive},
		AllowedTools:  []string{"Read", "Grep", "Bash"},
		Instructions:  "Find the bug.\n",
		NextEvents:    []engine.EventInfo{{Event: "LOCALIZED", Target: "fixing"}},
		MaxIterations: u32(20),
	}
}

func TestAnswersGolden(t *testing.T) {
	pre := &Input{HookInput: wire.HookInput{SessionID: "s1", ToolName: "apply_patch", ToolInput: json.RawMessage(`{"command":"*** Begin Patch\n*** Update File: x.go\n@@\n-a\n+b\n*** End Patch\n"}`),
		ToolUseID: "call_1", PermissionMode: "bypassPermissions", Cwd: "/repo"}}
	ctl := *pre
	ctl.ToolName, ctl.ToolInput = "mcp__statewright__statewright_transition", json.RawMessage(`{"event":"LOCALIZED","statewright_session":"forged"}`)
	human := ctl
	human.ToolName, human.ToolInput = "mcp__statewright__statewright_deactivate", json.RawMessage(`{}`)

	deny := runtime.DecideResult{Enforced: true, Decision: policy.Decision{Verdict: policy.Deny, Rule: policy.RuleToolNotAllowed,
		Reason: "apply_patch (Edit) is not allowed in phase 'localizing' (rule tool-not-allowed). Allowed tools: Read, Grep, Bash. Next events: LOCALIZED → fixing."}}
	allow := runtime.DecideResult{Enforced: true, Decision: policy.Decision{Verdict: policy.Allow, Rule: policy.RuleAllow, Reason: "allowed"}}
	ask := runtime.DecideResult{Enforced: true, Decision: policy.Decision{Verdict: policy.Ask, Rule: policy.RuleControlHumanOnly,
		Reason: "`mcp__statewright__statewright_deactivate` weakens enforcement, so only a person may grant it."}}
	audit := deny
	audit.Enforced = false
	stop := &Input{HookInput: wire.HookInput{SessionID: "s1"}}

	for name, a := range map[string]harness.Answer{
		"pre_deny":                PreToolAnswer(pre, deny),
		"pre_allow":               PreToolAnswer(pre, allow),
		"pre_allow_control_stamp": PreToolAnswer(&ctl, allow),
		"pre_ask_is_deny":         PreToolAnswer(&human, ask),
		"pre_audit_only_deny":     PreToolAnswer(pre, audit),
		"fail_pre_tool_use":       Failure(PreToolUse, "open store: store: store id mismatch"),
		"fail_user_prompt_submit": Failure(UserPromptSubmit, "statewright: open store: store: no store"),
		"fail_session_start":      Failure(SessionStart, "open store: store: no store"),
		"fail_stop":               Failure(Stop, "hook deadline (5s) passed"),
		"fail_post_tool_use":      Failure(PostToolUse, "record: store: busy"),
		"context_prompt":          wire.Context(string(UserPromptSubmit), PhaseContext(sampleView())),
		"context_session_start":   wire.Context(string(SessionStart), PhaseContext(sampleView())),
		"context_post_tool_use":   wire.Context(string(PostToolUse), PhaseContext(sampleView())),
		"stop_block":              wire.BlockStop(StopReason(stop, sampleView())),
	} {
		t.Run(name, func(t *testing.T) { checkGolden(t, name, a) })
	}
}

// TestPreToolAnswerNeverAllowsOrAsks checks Codex's rule for every verdict
// and enforcement: an ordinary call gets silence or exit 2, never JSON.
func TestPreToolAnswerNeverAllowsOrAsks(t *testing.T) {
	in := &Input{HookInput: wire.HookInput{SessionID: "s1", ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"ls"}`), ToolUseID: "c"}}
	for _, v := range []policy.Verdict{policy.Allow, policy.Deny, policy.Ask} {
		for _, enforced := range []bool{true, false} {
			a := PreToolAnswer(in, runtime.DecideResult{Enforced: enforced, Decision: policy.Decision{Verdict: v, Reason: "r."}})
			if len(a.Stdout) != 0 {
				t.Errorf("%v enforced=%v: stdout %s; want silence or exit 2", v, enforced, a.Stdout)
			}
			wantBlock := enforced && v != policy.Allow
			if (a.Exit == wire.ExitBlock) != wantBlock {
				t.Errorf("%v enforced=%v: %s", v, enforced, render(a))
			}
		}
	}
	// The zero result (no verdict) denies.
	if a := PreToolAnswer(in, runtime.DecideResult{Enforced: true}); a.Exit != wire.ExitBlock {
		t.Errorf("zero result: %s", render(a))
	}
	// An ask names the CLI a person uses.
	a := PreToolAnswer(in, runtime.DecideResult{Enforced: true, Decision: policy.Decision{Verdict: policy.Ask, Reason: "needs a person."}})
	if !strings.Contains(a.Stderr, "statewright approve s1 --harness codex") {
		t.Errorf("ask: %s; want the approve command", render(a))
	}
	// A control call whose input is not an object cannot be stamped: deny.
	bad := *in
	bad.ToolName, bad.ToolInput = "mcp__statewright__statewright_transition", json.RawMessage(`[]`)
	if a := PreToolAnswer(&bad, runtime.DecideResult{Enforced: true, Decision: policy.Decision{Verdict: policy.Allow}}); a.Exit != wire.ExitBlock {
		t.Errorf("unstampable control call: %s", render(a))
	}
	// A stamped control call carries this session, whatever the model sent.
	ctl := *in
	ctl.ToolName, ctl.ToolInput = "mcp__statewright__statewright_get_state", json.RawMessage(`{"statewright_session":"other"}`)
	a = PreToolAnswer(&ctl, runtime.DecideResult{Enforced: true, Decision: policy.Decision{Verdict: policy.Allow}})
	if !strings.Contains(string(a.Stdout), `"statewright_session":"s1"`) || strings.Contains(string(a.Stdout), "other") {
		t.Errorf("stamp: %s", render(a))
	}
}

func TestParseEvent(t *testing.T) {
	for _, e := range Events {
		for _, s := range []string{e.Arg(), string(e)} {
			if got, err := ParseEvent(s); err != nil || got != e {
				t.Errorf("ParseEvent(%q) = %q, %v", s, got, err)
			}
		}
	}
	for _, s := range []string{"", "PostToolUseFailure", "permission-request", "pre_tool_use"} {
		if _, err := ParseEvent(s); err == nil || !strings.Contains(err.Error(), "pre-tool-use") {
			t.Errorf("ParseEvent(%q) err = %v", s, err)
		}
	}
}

// codexPre is a PreToolUse input as Codex 0.169.0 writes it (recorded).
const codexPre = `{"session_id":"01a23856-fb61-7573-b775-49de86d21215","turn_id":"01a23856-fbc3-7013-8b40-f163210295be",` +
	`"transcript_path":"/home/u/.codex/sessions/2026/12/02/rollout.jsonl","cwd":"/repo","hook_event_name":"PreToolUse",` +
	`"model":"gpt-5.5","permission_mode":"bypassPermissions","tool_name":"apply_patch",` +
	`"tool_input":{"command":"*** Begin Patch\n*** Update File: main.txt\n@@\n-old line\n+new line\n*** End Patch\n"},"tool_use_id":"call_patch"}`

func TestDecode(t *testing.T) {
	tests := []struct {
		name  string
		event Event
		in    string
		err   error
	}{
		{"recorded pre tool use", PreToolUse, codexPre, nil},
		{"null transcript path", PreToolUse, strings.Replace(codexPre, `"/home/u/.codex/sessions/2026/12/02/rollout.jsonl"`, "null", 1), nil},
		{"unknown fields ignored", PreToolUse, strings.Replace(codexPre, "{", `{"future":[1],`, 1), nil},
		{"stop", Stop, `{"session_id":"s","hook_event_name":"Stop","stop_hook_active":true,"turn_id":"t"}`, nil},
		{"session start", SessionStart, `{"session_id":"s","hook_event_name":"SessionStart","source":"resume"}`, nil},
		{"wrong event", Stop, codexPre, ErrWrongEvent},
		{"not an object", PreToolUse, `[]`, ErrMalformed},
		{"empty", PreToolUse, ``, ErrMalformed},
		{"trailing data", PreToolUse, codexPre + `{}`, ErrMalformed},
		{"no session", PreToolUse, strings.Replace(codexPre, `"session_id":"01a23856-fb61-7573-b775-49de86d21215",`, "", 1), ErrMalformed},
		{"session with space", Stop, `{"session_id":"a b"}`, ErrMalformed},
		{"no tool name", PreToolUse, strings.Replace(codexPre, `"tool_name":"apply_patch",`, "", 1), ErrMalformed},
		{"no tool use id", PreToolUse, strings.Replace(codexPre, `,"tool_use_id":"call_patch"`, "", 1), ErrMalformed},
		{"tool input a string", PreToolUse, `{"session_id":"s","tool_name":"Bash","tool_input":"ls","tool_use_id":"t"}`, ErrMalformed},
		{"wrong type", PreToolUse, `{"session_id":1}`, ErrMalformed},
	}
	for _, tt := range tests {
		in, err := Decode(tt.event, []byte(tt.in))
		if tt.err != nil {
			if !errors.Is(err, tt.err) {
				t.Errorf("%s: err = %v, want %v", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if tt.name == "recorded pre tool use" {
			tc := ToolCall(in, "")
			if tc.Session != "codex:01a23856-fb61-7573-b775-49de86d21215" || tc.Call.Harness != policy.Codex ||
				tc.Call.Tool != "apply_patch" || tc.Call.ProjectDir != "/repo" || tc.Actor.Channel != "hook:codex" {
				t.Errorf("ToolCall = %+v", tc)
			}
		}
	}
}

func TestToolResultExitCode(t *testing.T) {
	for _, tt := range []struct {
		resp string
		code int
		ok   bool
	}{
		{`"Chunk ID: 8fe519\nWall time: 0.0000 seconds\nProcess exited with code 1\nOutput:\nFAIL\n"`, 1, true},
		{`"Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess."`, 0, true},
		{`{"exit_code":3,"stdout":""}`, 3, true},
		{`{"output":"Process exited with code 2\n"}`, 2, true},
		{`"no exit line"`, 0, false},
		{`[1]`, 0, false},
	} {
		in := &Input{HookInput: wire.HookInput{SessionID: "s", ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"go test"}`), ToolUseID: "t",
			ToolResponse: json.RawMessage(tt.resp)}}
		r := ToolResult(in, "/p")
		if tt.ok != (r.ExitCode != nil) || tt.ok && (*r.ExitCode != tt.code || r.Failed != (tt.code != 0)) {
			t.Errorf("%s: ToolResult = %+v", tt.resp, r)
		}
		if r.Session != "codex:s" || r.Call.ProjectDir != "/p" {
			t.Errorf("%s: identity %+v", tt.resp, r)
		}
	}
}

// FuzzDecode checks that Decode never panics, that whatever it accepts
// satisfies the invariants the hook relies on, and that every answer built
// from it keeps Codex's output rules.
func FuzzDecode(f *testing.F) {
	f.Add(uint8(2), []byte(codexPre))
	f.Add(uint8(2), []byte(`{"session_id":"s","tool_name":"mcp__statewright__statewright_transition","tool_input":{"event":"GO","statewright_session":"x"},"tool_use_id":"t"}`))
	f.Add(uint8(4), []byte(`{"session_id":"s","stop_hook_active":true}`))
	f.Add(uint8(1), []byte(`{"session_id":"s","prompt":"hi"}`))
	f.Add(uint8(3), []byte(`{"session_id":"s","tool_name":"Bash","tool_input":{},"tool_use_id":"t","tool_response":"Process exited with code 1"}`))
	f.Add(uint8(0), []byte(`{"session_id":"\u0000"}`))
	f.Add(uint8(2), []byte(`{"session_id":"s","tool_input":{"a":1},"tool_input":null}`))
	f.Fuzz(func(t *testing.T, ev uint8, data []byte) {
		event := Events[int(ev)%len(Events)]
		in, err := Decode(event, data)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrWrongEvent) {
				t.Fatalf("error %v wraps neither ErrMalformed nor ErrWrongEvent", err)
			}
			checkCodexOutput(t, "failure", Failure(event, err.Error()))
			return
		}
		if decoding.ID("session_id", in.SessionID) != nil {
			t.Fatalf("accepted bad session id %q", in.SessionID)
		}
		if event.ToolEvent() {
			if in.ToolName == "" || in.ToolUseID == "" {
				t.Fatal("accepted a tool event without tool_name or tool_use_id")
			}
			if _, err := StampSession(in.ToolInput, in.SessionID); err != nil {
				t.Fatalf("accepted tool_input %s that cannot be stamped: %v", in.ToolInput, err)
			}
			for _, v := range []policy.Verdict{policy.Allow, policy.Deny, policy.Ask} {
				checkCodexOutput(t, "pre", PreToolAnswer(in, runtime.DecideResult{Enforced: true, Decision: policy.Decision{Verdict: v, Reason: "r"}}))
			}
			_ = ToolResult(in, "")
		}
	})
}

// TestDenyEndsWithoutPeriod checks that no deny ends with a period: Codex
// shows "Command blocked by PreToolUse hook: <reason>. Command: …", adding
// its own, and the model read ".." (issue 18 item 3).
func TestDenyEndsWithoutPeriod(t *testing.T) {
	in := &Input{HookInput: wire.HookInput{SessionID: "s1", ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"ls"}`), ToolUseID: "c"}}
	for name, a := range map[string]harness.Answer{
		"deny":    PreToolAnswer(in, runtime.DecideResult{Enforced: true, Decision: policy.Decision{Verdict: policy.Deny, Reason: "Denied in phase 'p': no (rule r)."}}),
		"ask":     PreToolAnswer(in, runtime.DecideResult{Enforced: true, Decision: policy.Decision{Verdict: policy.Ask, Reason: "ask."}}),
		"failure": Failure(PreToolUse, "open store: no store"),
	} {
		line := strings.TrimSuffix(a.Stderr, "\n")
		if a.Exit != wire.ExitBlock || line == "" || strings.HasSuffix(line, ".") {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 with a reason that does not end in a period", name, a.Exit, a.Stderr)
		}
	}
}
