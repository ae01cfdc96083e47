package policy

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/workflow"
)

// TestLessonTools checks that each harness's lessons name its own tools.
func TestLessonTools(t *testing.T) {
	tests := []struct {
		h     Harness
		tools []string
		want  []string
	}{
		{ClaudeCode, []string{"Read", "Grep", "Glob"}, []string{"Read", "Grep", "Glob"}},
		{"", []string{"read_file", "Bash"}, []string{"Read", "Bash"}},
		{OpenCode, []string{"Read", "Grep", "Glob"}, []string{"read", "grep", "glob"}},
		{OpenCode, []string{"Read", "Edit", "Write", "MultiEdit", "LS", "Bash"}, []string{"read", "edit", "write", "multiedit", "list", "bash"}},
		{Pi, []string{"Read", "Grep", "Glob", "LS"}, []string{"read", "grep", "find", "ls"}},
		{Pi, []string{"Read", "Edit", "Write", "Bash"}, []string{"read", "edit", "write", "bash"}},
		{Codex, []string{"Read", "Grep", "Edit", "Write", "Bash"}, []string{"Read", "Grep", "apply_patch", "exec_command"}},
		{Codex, []string{"read_file", "LS"}, []string{"Read", "LS"}},
		{Cursor, []string{"Read", "Bash"}, []string{"Read", "Shell"}},
		{OpenCode, []string{"TodoWrite"}, []string{"todowrite"}},
		// Capability words, MCP tools, prefixes and names a harness has no
		// tool for stay as written.
		{OpenCode, []string{"exec", "mcp__github__create_issue", "git_*", "Frobnicate"}, []string{"exec", "mcp__github__create_issue", "git_*", "Frobnicate"}},
		{Codex, []string{"Glob"}, []string{"Glob"}},
		{Pi, nil, nil},
		{Pi, []string{}, []string{}},
	}
	for _, tt := range tests {
		if got := LessonTools(tt.h, tt.tools); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("LessonTools(%q, %q) = %q, want %q", tt.h, tt.tools, got, tt.want)
		}
	}
}

// TestLessonNamesHarnessTools checks a deny's lesson, per harness: the
// allowed tools in the harness's names (opencode and Pi were told
// "Read, Grep, Glob").
func TestLessonNamesHarnessTools(t *testing.T) {
	law := loadLaw(t, "template:bugfix", Options{})
	for _, tt := range []struct {
		h          Harness
		tool, want string
	}{
		{ClaudeCode, "Write", "Allowed here: Read, Grep, Glob, LS, TodoWrite."},
		{OpenCode, "write", "Allowed here: read, grep, glob, list, todowrite."},
		{Pi, "write", "Allowed here: read, grep, find, ls, TodoWrite."},
		{Cursor, "Write", "Allowed here: Read, Grep, Glob, LS, TodoWrite."},
	} {
		d := law.Decide(&RunState{Active: true, State: "planning"},
			&ToolCall{Harness: tt.h, Tool: tt.tool, Input: json.RawMessage(`{"file_path":"a.go","filePath":"a.go","path":"a.go","content":"x"}`)})
		if d.Verdict != Deny || !strings.Contains(d.Reason, tt.want) {
			t.Errorf("%s: %s: %q, want a deny with %q", tt.h, d.Verdict, d.Reason, tt.want)
		}
		if tt.h != ClaudeCode && tt.h != Cursor && strings.Contains(d.Reason, "Read, Grep") {
			t.Errorf("%s: the lesson names Claude Code's tools: %q", tt.h, d.Reason)
		}
	}
}

// TestLessonNamesFarPath checks the deny whose call no single transition
// allows: it names the events that lead to the nearest phase that does.
func TestLessonNamesFarPath(t *testing.T) {
	def, _, err := workflow.Parse([]byte(`
id: far
initial: localizing
states:
  localizing:
    allowed_tools: [Read]
    on: {LOCALIZED: planning, GIVE_UP: failed}
  planning:
    allowed_tools: [Read, Grep]
    on: {PLAN_READY: implementing}
  implementing:
    allowed_tools: [Read, Edit, Write]
    on: {DONE: done}
  done: {type: final}
  failed: {type: final}
`), workflow.ParseOptions{Source: "far.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	law, err := Compile(def, Options{})
	if err != nil {
		t.Fatal(err)
	}
	write := &ToolCall{Tool: "Write", Input: json.RawMessage(`{"file_path":"a.go","content":"x"}`)}
	d := law.Decide(&RunState{Active: true, State: "localizing"}, write)
	want := "This call is allowed in 'implementing', 2 transitions away: LOCALIZED → PLAN_READY (through 'planning')."
	if d.Verdict != Deny || !strings.Contains(d.Reason, want) || strings.Contains(d.Reason, "No single transition") {
		t.Errorf("localizing: %q; want the path %q", d.Reason, want)
	}
	if !reflect.DeepEqual(d.NextEvents, []string{"LOCALIZED"}) {
		t.Errorf("next events %q, want the path's first event", d.NextEvents)
	}
	// One step away stays the one-event suggestion.
	if d := law.Decide(&RunState{Active: true, State: "planning"}, write); !strings.Contains(d.Reason, "Event PLAN_READY leads to 'implementing'") {
		t.Errorf("planning: %q", d.Reason)
	}
	// A call no phase allows says so.
	web := &ToolCall{Tool: "WebFetch", Input: json.RawMessage(`{"url":"https://example.com"}`)}
	if d := law.Decide(&RunState{Active: true, State: "localizing"}, web); !strings.Contains(d.Reason, "No phase reachable from 'localizing' allows this call.") {
		t.Errorf("WebFetch: %q", d.Reason)
	}
}

// TestHarnessIndex checks harnessIndex against Harnesses.
func TestHarnessIndex(t *testing.T) {
	if len(Harnesses) != numHarnesses {
		t.Fatalf("numHarnesses %d, Harnesses has %d", numHarnesses, len(Harnesses))
	}
	for i, h := range Harnesses {
		if harnessIndex(h) != i {
			t.Errorf("harnessIndex(%s) = %d, want %d", h, harnessIndex(h), i)
		}
	}
	if harnessIndex("") != 0 || harnessIndex("nope") != 0 {
		t.Error("an empty or unknown harness is not Claude Code's index")
	}
}
