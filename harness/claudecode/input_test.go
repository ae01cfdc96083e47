package claudecode

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/harness"
)

func TestParseEvent(t *testing.T) {
	for _, e := range Events {
		for _, s := range []string{e.Arg(), string(e)} {
			got, err := ParseEvent(s)
			if err != nil || got != e {
				t.Errorf("ParseEvent(%q) = %q, %v; want %q", s, got, err, e)
			}
		}
	}
	for _, s := range []string{"", "pretooluse", "PRE-TOOL-USE", "Notification", "pre_tool_use"} {
		if _, err := ParseEvent(s); err == nil || !strings.Contains(err.Error(), "pre-tool-use") {
			t.Errorf("ParseEvent(%q) err = %v; want an error listing the events", s, err)
		}
	}
}

func TestDecode(t *testing.T) {
	const pre = `{"session_id":"s1","transcript_path":"/t/s1.jsonl","cwd":"/repo","permission_mode":"default",` +
		`"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_1"}`
	tests := []struct {
		name  string
		event Event
		in    string
		err   error
		check func(t *testing.T, in *Input)
	}{
		{name: "pre tool use", event: PreToolUse, in: pre, check: func(t *testing.T, in *Input) {
			if in.SessionID != "s1" || in.ToolName != "Bash" || in.ToolUseID != "toolu_1" || in.Cwd != "/repo" ||
				in.PermissionMode != "default" || string(in.ToolInput) != `{"command":"ls"}` {
				t.Errorf("decoded %+v", in)
			}
		}},
		{name: "unknown fields are ignored", event: PreToolUse,
			in: strings.Replace(pre, `{`, `{"effort":"high","future":{"x":[1]},`, 1)},
		{name: "subagent call", event: PreToolUse,
			in: strings.Replace(pre, `{`, `{"agent_id":"a1","agent_type":"Explore",`, 1), check: func(t *testing.T, in *Input) {
				if in.AgentID != "a1" || in.AgentType != "Explore" {
					t.Errorf("agent = %q %q", in.AgentID, in.AgentType)
				}
			}},
		{name: "no hook_event_name is fine", event: PreToolUse, in: strings.Replace(pre, `"hook_event_name":"PreToolUse",`, "", 1)},
		{name: "surrounding whitespace", event: PreToolUse, in: "\n " + pre + "\n"},
		{name: "stop", event: Stop, in: `{"session_id":"s1","hook_event_name":"Stop","stop_hook_active":true}`,
			check: func(t *testing.T, in *Input) {
				if !in.StopHookActive {
					t.Error("stop_hook_active not decoded")
				}
			}},
		{name: "prompt", event: UserPromptSubmit, in: `{"session_id":"s1","hook_event_name":"UserPromptSubmit","prompt":"fix it"}`,
			check: func(t *testing.T, in *Input) {
				if in.Prompt != "fix it" {
					t.Errorf("prompt = %q", in.Prompt)
				}
			}},
		{name: "post tool use", event: PostToolUse,
			in: `{"session_id":"s1","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"go test"},"tool_use_id":"t","tool_response":{"stdout":"ok","exit_code":3}}`},

		{name: "empty", event: PreToolUse, in: ``, err: ErrMalformed},
		{name: "not json", event: PreToolUse, in: `tool_name=Bash`, err: ErrMalformed},
		{name: "array", event: PreToolUse, in: `[` + pre + `]`, err: ErrMalformed},
		{name: "truncated", event: PreToolUse, in: pre[:len(pre)-10], err: ErrMalformed},
		{name: "trailing object", event: PreToolUse, in: pre + `{}`, err: ErrMalformed},
		{name: "wrong type", event: PreToolUse, in: strings.Replace(pre, `"s1"`, `42`, 1), err: ErrMalformed},
		{name: "no session", event: PreToolUse, in: strings.Replace(pre, `"session_id":"s1",`, "", 1), err: ErrMalformed},
		{name: "session with newline", event: PreToolUse, in: strings.Replace(pre, `"s1"`, `"s\n1"`, 1), err: ErrMalformed},
		{name: "session too long", event: Stop, in: `{"session_id":"` + strings.Repeat("a", 300) + `"}`, err: ErrMalformed},
		{name: "no tool name", event: PreToolUse, in: strings.Replace(pre, `"tool_name":"Bash",`, "", 1), err: ErrMalformed},
		{name: "no tool use id", event: PreToolUse, in: strings.Replace(pre, `,"tool_use_id":"toolu_1"`, "", 1), err: ErrMalformed},
		{name: "tool input not an object", event: PreToolUse, in: strings.Replace(pre, `{"command":"ls"}`, `"ls"`, 1), err: ErrMalformed},
		{name: "tool input null", event: PreToolUse, in: strings.Replace(pre, `{"command":"ls"}`, `null`, 1), err: ErrMalformed},
		{name: "no tool input", event: PreToolUse, in: strings.Replace(pre, `"tool_input":{"command":"ls"},`, "", 1), err: ErrMalformed},
		{name: "other event", event: PostToolUse, in: pre, err: ErrWrongEvent},
		{name: "stop given pre input", event: Stop, in: pre, err: ErrWrongEvent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := Decode(tt.event, []byte(tt.in))
			if tt.err != nil {
				if !errors.Is(err, tt.err) || in != nil {
					t.Fatalf("Decode = %+v, %v; want error %v", in, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if tt.check != nil {
				tt.check(t, in)
			}
		})
	}
}

func TestDecodeTooLarge(t *testing.T) {
	big := make([]byte, harness.MaxInputBytes+1)
	if _, err := Decode(PreToolUse, big); !errors.Is(err, ErrMalformed) {
		t.Fatalf("err = %v, want ErrMalformed", err)
	}
}

func TestStampSession(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"event":"DONE"}`, `{"event":"DONE","statewright_session":"sid"}`},
		// The model's own value is overwritten, never trusted.
		{`{"event":"DONE","statewright_session":"someone-else"}`, `{"event":"DONE","statewright_session":"sid"}`},
		{`{}`, `{"statewright_session":"sid"}`},
		{` {"data":{"a":[1,2]},"event":"X"} `, `{"data":{"a":[1,2]},"event":"X","statewright_session":"sid"}`},
	}
	for _, tt := range tests {
		got, err := StampSession(json.RawMessage(tt.in), "sid")
		if err != nil || string(got) != tt.want {
			t.Errorf("StampSession(%s) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{``, `null`, `[]`, `"x"`, `{`} {
		if _, err := StampSession(json.RawMessage(bad), "sid"); !errors.Is(err, ErrMalformed) {
			t.Errorf("StampSession(%q) err = %v, want ErrMalformed", bad, err)
		}
	}
}

func TestControlToolAndAsk(t *testing.T) {
	for tool, want := range map[string]bool{
		"mcp__statewright__transition":                   true,
		"mcp__plugin_statewright_statewright__get_state": true,
		"mcp__statewright_evil__transition":              false,
		"mcp__other__statewright__transition":            false,
		"Bash":                                           false,
		"statewright_transition":                         false,
	} {
		if got := IsControlTool(tool); got != want {
			t.Errorf("IsControlTool(%q) = %v, want %v", tool, got, want)
		}
	}
	for mode, want := range map[string]bool{"default": true, "": false, "plan": false, "acceptEdits": false,
		"auto": false, "dontAsk": false, "bypassPermissions": false, "Default": false} {
		if got := AskGrants(mode); got != want {
			t.Errorf("AskGrants(%q) = %v, want %v", mode, got, want)
		}
	}
	if SessionKey("abc") != "claude-code:abc" {
		t.Errorf("SessionKey = %q", SessionKey("abc"))
	}
}

// FuzzDecode checks that Decode never panics, and that whatever it accepts
// satisfies the invariants the hook relies on.
func FuzzDecode(f *testing.F) {
	f.Add(uint8(2), []byte(`{"session_id":"s","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t"}`))
	f.Add(uint8(2), []byte(`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"mcp__statewright__transition","tool_input":{"event":"GO","statewright_session":"x"},"tool_use_id":"t"}`))
	f.Add(uint8(5), []byte(`{"session_id":"s","stop_hook_active":true}`))
	f.Add(uint8(1), []byte(`{"session_id":"s","prompt":"hi"}`))
	f.Add(uint8(3), []byte(`{"session_id":"s","tool_name":"Write","tool_input":{},"tool_use_id":"t","tool_response":{"exit_code":1}}`))
	f.Add(uint8(0), []byte(`{"session_id":"\u0000"}`))
	f.Add(uint8(2), []byte(`{"session_id":"s","tool_input":{"a":1},"tool_input":null}`))
	f.Fuzz(func(t *testing.T, ev uint8, data []byte) {
		event := Events[int(ev)%len(Events)]
		in, err := Decode(event, data)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrWrongEvent) {
				t.Fatalf("error %v wraps neither ErrMalformed nor ErrWrongEvent", err)
			}
			return
		}
		if decoding.ID("session_id", in.SessionID) != nil {
			t.Fatalf("accepted bad session id %q", in.SessionID)
		}
		if in.HookEventName != "" && in.HookEventName != string(event) {
			t.Fatalf("accepted input for %q as %q", in.HookEventName, event)
		}
		if event.ToolEvent() {
			if in.ToolName == "" || in.ToolUseID == "" {
				t.Fatal("accepted a tool event without tool_name or tool_use_id")
			}
			stamped, err := StampSession(in.ToolInput, in.SessionID)
			if err != nil {
				t.Fatalf("accepted tool_input %s that cannot be stamped: %v", in.ToolInput, err)
			}
			var m map[string]any
			if err := json.Unmarshal(stamped, &m); err != nil || m[SessionStampKey] != in.SessionID {
				t.Fatalf("stamped input %s lacks the session", stamped)
			}
			tc := ToolCall(in, "")
			if tc.Session != SessionKey(in.SessionID) || tc.Call.ToolUseID != in.ToolUseID {
				t.Fatalf("ToolCall lost the identity: %+v", tc)
			}
		}
		// Every answer built from an accepted input must encode.
		_ = Failure(event, "x")
	})
}
