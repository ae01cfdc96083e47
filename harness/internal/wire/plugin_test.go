package wire

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
)

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name  string
		event string
		in    string
		err   string // substring of the error; "" = ok
	}{
		{"tool call", ToolBefore, `{"session":"ses_abc","cwd":"/p","tool":"write","call_id":"c1","args":{"filePath":"/p/x"}}`, ""},
		{"null args become {}", ToolBefore, `{"session":"ses_abc","cwd":"/p","tool":"read","args":null}`, ""},
		{"session start", SessionStart, `{"session":"01a2-b3","cwd":"/p"}`, ""},
		{"after with exit", ToolAfter, `{"session":"s","cwd":"/p","tool":"bash","args":{},"output":"ok","exit_code":1,"failed":true}`, ""},
		{"empty", ToolBefore, ``, "one JSON object"},
		{"array", ToolBefore, `[1]`, "one JSON object"},
		{"garbage", ToolBefore, `{not json`, "malformed"},
		{"unknown field", ToolBefore, `{"session":"s","cwd":"/p","tool":"x","bogus":1}`, "unknown field"},
		{"trailing", ToolBefore, `{"session":"s","cwd":"/p","tool":"x"} {}`, "trailing"},
		{"no session", ToolBefore, `{"cwd":"/p","tool":"x"}`, "session"},
		{"bad session", ToolBefore, `{"session":"a/../b","cwd":"/p","tool":"x"}`, "session"},
		{"relative cwd", ToolBefore, `{"session":"s","cwd":"p","tool":"x"}`, "cwd"},
		{"no tool", ToolBefore, `{"session":"s","cwd":"/p"}`, "tool name"},
		{"control without tool", Control, `{"session":"s","cwd":"/p"}`, "tool name"},
		{"args not object", ToolBefore, `{"session":"s","cwd":"/p","tool":"x","args":"rm -rf"}`, "not a JSON object"},
		{"args array", ToolBefore, `{"session":"s","cwd":"/p","tool":"x","args":[]}`, "not a JSON object"},
		{"not utf8", ToolBefore, "{\"session\":\"s\xff\",\"cwd\":\"/p\",\"tool\":\"x\"}", "UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := DecodePlugin(tc.event, []byte(tc.in))
			if tc.err == "" {
				if err != nil {
					t.Fatalf("Decode: %v", err)
				}
				if tc.event == ToolBefore && !IsObject(in.Args) {
					t.Errorf("args %s", in.Args)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrPluginMalformed) || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("Decode = %v, want an ErrMalformed containing %q", err, tc.err)
			}
		})
	}
}

func TestParsePluginEvent(t *testing.T) {
	for _, e := range PluginEvents.Args() {
		if got, err := PluginEvents.Parse("", e); err != nil || got != e {
			t.Errorf("Parse(%s) = %v, %v", e, got, err)
		}
	}
	if _, err := PluginEvents.Parse("", "pre-tool-use"); err == nil {
		t.Error("Parse accepted a Claude Code event name")
	}
}

func TestFailureFailsClosed(t *testing.T) {
	for _, e := range PluginEvents.Args() {
		a := PluginFailure(e, "boom")
		switch e {
		case ToolBefore, Control:
			if a.Exit != PluginExitDeny || a.Decision != DecisionDeny || !strings.Contains(a.Reason, "boom") {
				t.Errorf("%s: %+v; want a deny with exit %d", e, a, PluginExitDeny)
			}
		default:
			if a.Exit != PluginExitOK || a.Decision == DecisionAllow || a.Notice == "" || !strings.Contains(a.Context, "denies every tool call") {
				t.Errorf("%s: %+v; want a notice", e, a)
			}
		}
		var back PluginAnswer
		if err := json.Unmarshal(a.Answer().Stdout, &back); err != nil || back.Decision != a.Decision {
			t.Errorf("%s: encode round trip %v %+v", e, err, back)
		}
	}
}

var testAdapter = &Plugin{Harness: policy.OpenCode, ControlPrefixes: []string{"statewright_statewright_"},
	TransitionTool: "statewright_statewright_transition", NoAsk: "No person can be asked."}

func TestPreToolAnswer(t *testing.T) {
	in := &PluginInput{Session: "ses_1", Cwd: "/p", Tool: "write", Args: json.RawMessage(`{"filePath":"/p/x"}`)}
	allow := runtime.DecideResult{Decision: policy.Decision{Verdict: policy.Allow}, Enforced: true}
	deny := runtime.DecideResult{Decision: policy.Decision{Verdict: policy.Deny, Reason: "Denied in phase 'plan'."}, Enforced: true}
	ask := runtime.DecideResult{Decision: policy.Decision{Verdict: policy.Ask, Reason: "Needs a person."}, Enforced: true}
	audit := deny
	audit.Enforced = false

	if a := testAdapter.PreToolAnswer(in, allow); a.Decision != DecisionAllow || a.Exit != PluginExitOK || a.Args != nil {
		t.Errorf("allow: %+v", a)
	}
	if a := testAdapter.PreToolAnswer(in, deny); a.Decision != DecisionDeny || a.Exit != PluginExitDeny || a.Reason != "statewright: Denied in phase 'plan'." {
		t.Errorf("deny: %+v", a)
	}
	if a := testAdapter.PreToolAnswer(in, ask); a.Decision != DecisionDeny || a.Exit != PluginExitDeny || !strings.Contains(a.Reason, "No person can be asked.") {
		t.Errorf("ask: %+v; want rendered as a deny", a)
	}
	if a := testAdapter.PreToolAnswer(in, audit); a.Decision != DecisionAllow {
		t.Errorf("audit-only: %+v", a)
	}
	if a := testAdapter.PreToolAnswer(in, runtime.DecideResult{Enforced: true}); a.Decision != DecisionDeny {
		t.Errorf("zero decision: %+v; want deny", a)
	}

	ctl := &PluginInput{Session: "ses_1", Cwd: "/p", Tool: "statewright_statewright_transition",
		Args: json.RawMessage(`{"event":"GO","statewright_session":"forged"}`)}
	a := testAdapter.PreToolAnswer(ctl, allow)
	var m map[string]any
	if err := json.Unmarshal(a.Args, &m); err != nil || a.Decision != DecisionAllow || m[SessionStampKey] != "ses_1" || m["event"] != "GO" {
		t.Errorf("control: %+v (%v); want the session stamped over the forged one", a, m)
	}
	if op, ok := testAdapter.controlOp(ctl.Tool); !ok || op != "statewright_transition" {
		t.Errorf("controlOp = %q", op)
	}
	if testAdapter.IsControlTool("statewright_transition") {
		t.Error("a bare statewright_ name is not opencode's MCP tool")
	}
}

func TestToolCallAndResult(t *testing.T) {
	code := 3
	in := &PluginInput{Session: "ses_1", Cwd: "/p", Tool: "bash", CallID: "c9", Args: json.RawMessage(`{"command":"go test"}`),
		Output: "FAIL", Failed: true, ExitCode: &code}
	tc := testAdapter.ToolCall(in, "/p")
	if tc.Session != "opencode:ses_1" || tc.Call.Harness != policy.OpenCode || tc.Call.ToolUseID != "c9" || tc.Actor.Channel != "hook:opencode" {
		t.Errorf("ToolCall %+v", tc)
	}
	res := testAdapter.ToolResult(in, "/p")
	if !res.Failed || res.ExitCode == nil || *res.ExitCode != 3 || string(res.Output) != `"FAIL"` || res.ToolUseID != "c9" {
		t.Errorf("ToolResult %+v", res)
	}
}

func TestRenderPlugin(t *testing.T) {
	src := []byte("const A = 1\nconst CONFIG = /*STATEWRIGHT_CONFIG*/ null /*END_STATEWRIGHT_CONFIG*/\n")
	if cfg, err := PluginConfigOf(src); err != nil || cfg != nil {
		t.Fatalf("unconfigured: %v %v", cfg, err)
	}
	want := PluginConfig{Argv: []string{"/bin/statewright", "hook", "pi"}, Flags: []string{"--store", "/s/it's.db"}, TimeoutMS: 10000}
	out, err := RenderPlugin(src, want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := PluginConfigOf(out)
	if err != nil || got == nil || strings.Join(got.Argv, " ") != strings.Join(want.Argv, " ") || got.Flags[1] != "/s/it's.db" || got.TimeoutMS != 10000 {
		t.Fatalf("round trip %+v %v\n%s", got, err, out)
	}
	again, err := RenderPlugin(out, want)
	if err != nil || string(again) != string(out) {
		t.Errorf("rendering twice changes the source (not idempotent): %v\n%s", err, again)
	}
	if _, err := RenderPlugin([]byte("no slot"), want); !errors.Is(err, ErrNoConfigSlot) {
		t.Errorf("no slot: %v", err)
	}
	if _, err := RenderPlugin(src, PluginConfig{}); err == nil {
		t.Error("empty config accepted")
	}
}

func FuzzDecodePlugin(f *testing.F) {
	for _, s := range []string{
		`{"session":"ses_abc","cwd":"/p","tool":"write","call_id":"c1","args":{"filePath":"/p/x"}}`,
		`{"session":"s","cwd":"/p","tool":"bash","args":{},"output":"ok","exit_code":1,"failed":true}`,
		`{"session":"s","cwd":"/p"}`, `{}`, `[]`, `null`, ``, `{"session":"s","cwd":"/p","tool":"x","args":"y"}`,
	} {
		for _, e := range PluginEvents.Args() {
			f.Add(e, []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, event string, data []byte) {
		ev, err := PluginEvents.Parse("", event)
		if err != nil {
			return
		}
		in, err := DecodePlugin(ev, data)
		if err != nil {
			if !errors.Is(err, ErrPluginMalformed) {
				t.Fatalf("error %v does not wrap ErrPluginMalformed", err)
			}
			return
		}
		if !ValidSessionID(in.Session) || in.Cwd == "" || in.Cwd[0] != '/' {
			t.Fatalf("accepted %+v", in)
		}
		if ev == ToolBefore || ev == ToolAfter || ev == Control {
			if in.Tool == "" || !IsObject(in.Args) {
				t.Fatalf("accepted a tool event without a tool or object args: %+v", in)
			}
			// A decoded call always yields a deny or an allow, never a panic.
			a := testAdapter.PreToolAnswer(in, runtime.DecideResult{Enforced: true})
			if a.Decision != DecisionDeny {
				t.Fatalf("zero decision answered %+v", a)
			}
		}
	})
}

func FuzzPluginConfigOf(f *testing.F) {
	f.Add([]byte("const C = /*STATEWRIGHT_CONFIG*/ null /*END_STATEWRIGHT_CONFIG*/"))
	f.Add([]byte(`x /*STATEWRIGHT_CONFIG*/ {"argv":["/b","hook","pi"],"flags":[],"timeout_ms":1} /*END_STATEWRIGHT_CONFIG*/ y`))
	f.Add([]byte("/*END_STATEWRIGHT_CONFIG*/ /*STATEWRIGHT_CONFIG*/"))
	f.Fuzz(func(t *testing.T, src []byte) {
		cfg, err := PluginConfigOf(src)
		if err != nil || cfg == nil || len(cfg.Argv) == 0 || cfg.TimeoutMS <= 0 {
			return
		}
		// A readable config renders back to a source that reads the same.
		out, err := RenderPlugin(src, *cfg)
		if err != nil {
			t.Fatalf("render: %v", err)
		}
		again, err := PluginConfigOf(out)
		if err != nil || again == nil || strings.Join(again.Argv, "\x00") != strings.Join(cfg.Argv, "\x00") || again.TimeoutMS != cfg.TimeoutMS {
			t.Fatalf("round trip %+v -> %+v (%v)", cfg, again, err)
		}
	})
}
