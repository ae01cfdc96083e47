package policy

import (
	"strings"
	"testing"

	"github.com/statewright-go/statewright/workflow"
)

func TestKnownTool(t *testing.T) {
	for _, tc := range []struct {
		name  string
		known bool
		sugg  string
	}{
		{"Read", true, ""}, {"read", true, ""}, {"Bash", true, ""}, {"apply_patch", true, ""}, {"exec_command", true, ""},
		{"StrReplace", true, ""}, {"GitWrite", true, ""}, {"git_write", true, ""}, {"Exec", true, ""}, {"TodoWrite", true, ""},
		{"mcp__github__create_issue", true, ""}, {"mcp__*", true, ""}, {"git_log", true, ""}, {"deploy", true, ""},
		{"Raed", false, "Read"}, {"Grpe", false, "Grep"}, {"WebFecth", false, "WebFetch"}, {"Bsah", false, "Bash"},
		{"frobnicator", false, ""},
	} {
		if got := KnownTool(tc.name); got != tc.known {
			t.Errorf("KnownTool(%q) = %v, want %v", tc.name, got, tc.known)
		}
		if !tc.known {
			if got := SuggestTool(tc.name); !strings.EqualFold(got, tc.sugg) {
				t.Errorf("SuggestTool(%q) = %q, want %q", tc.name, got, tc.sugg)
			}
		}
	}
}

func TestLintToolNames(t *testing.T) {
	src := `{"id": "x", "initial": "a", "tool_privileges": {"frob": "read"},
  "states": {"a": {"allowed_tools": ["Raed", "Grep", "frob", "zzqx"], "disallowed_tools": ["WebFecth"], "on": {"GO": "b"}},
             "b": {"type": "final"}}}`
	def, _, err := workflow.Parse([]byte(src), workflow.ParseOptions{Source: "w.json"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range LintToolNames(def) {
		got = append(got, d.String())
	}
	want := []string{
		`w.json:2:38: warning: state 'a' allowed_tools entry "Raed" is a tool no harness names (did you mean "Read"?)`,
		`w.json:2:62: warning: state 'a' allowed_tools entry "zzqx" is a tool no harness names (a custom tool: rate it in tool_privileges to silence this)`,
		`w.json:2:92: warning: state 'a' disallowed_tools entry "WebFecth" is a tool no harness names (did you mean "WebFetch"?)`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("LintToolNames:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
