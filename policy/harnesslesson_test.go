package policy

import (
	"encoding/json"
	"fmt"
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
	law := compileSource(t, []byte(`
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
`), "far.yaml", Options{})
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

// chainWorkflow is a line of n phases s0 → s1 → … where only the last
// allows Write, each transition with a note on every third phase.
func chainWorkflow(n int) []byte {
	var b strings.Builder
	b.WriteString("id: chain\ninitial: s0\nstates:\n")
	for i := 0; i < n; i++ {
		tools := "[Read]"
		if i == n-1 {
			tools = "[Read, Write]"
		}
		fmt.Fprintf(&b, "  s%d:\n    allowed_tools: %s\n    on: {E%d: s%d}\n", i, tools, i, i+1)
	}
	fmt.Fprintf(&b, "  s%d: {type: final}\n", n)
	return []byte(b.String())
}

// TestLessonNamesLongFarPath: the far path is spelled out hop by hop from
// the walk's links, in order, however far the allowing phase is (a
// thousand-phase workflow compiles without walking every path; the walk
// runs on the first deny that needs it).
func TestLessonNamesLongFarPath(t *testing.T) {
	const n = 1000
	law := compileSource(t, chainWorkflow(n), "chain.yaml", Options{})
	write := &ToolCall{Tool: "Write", Input: json.RawMessage(`{"file_path":"a.go","content":"x"}`)}
	for _, from := range []int{0, 500, n - 3} {
		d := law.Decide(&RunState{Active: true, State: fmt.Sprintf("s%d", from)}, write)
		var events, via []string
		for i := from; i < n-1; i++ {
			events = append(events, fmt.Sprintf("E%d", i))
			if i > from {
				via = append(via, fmt.Sprintf("s%d", i))
			}
		}
		want := fmt.Sprintf("This call is allowed in 's%d', %d transitions away: %s (through '%s').",
			n-1, len(events), strings.Join(events, " → "), strings.Join(via, "', '"))
		if d.Verdict != Deny || !strings.Contains(d.Reason, want) {
			t.Errorf("s%d: %.300q; want the path %.300q", from, d.Reason, want)
		}
		if !reflect.DeepEqual(d.NextEvents, []string{fmt.Sprintf("E%d", from)}) {
			t.Errorf("s%d: next events %q, want the path's first event", from, d.NextEvents)
		}
		// The same deny again (from the lesson cache) says the same.
		if again := law.Decide(&RunState{Active: true, State: fmt.Sprintf("s%d", from)}, write); again.Reason != d.Reason {
			t.Errorf("s%d: second decision differs", from)
		}
	}
}

// BenchmarkCompileChain1000 compiles a thousand-phase workflow (the hook's
// growth from 10 to 1,000 states, issue 16).
func BenchmarkCompileChain1000(b *testing.B) {
	def, _, err := workflow.Parse(chainWorkflow(1000), workflow.ParseOptions{Source: "chain.yaml"})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Compile(def, Options{}); err != nil {
			b.Fatal(err)
		}
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
