package policy

import (
	"encoding/json"
	"testing"
)

func TestReplaceAllLines(t *testing.T) {
	tests := []struct {
		content, old, new string
		want              int
	}{
		{"a\nb\na\nc\na\n", "a", "x", 3},
		{"aaa\nb\n", "a", "x", 1}, // three occurrences on one line change one line
		{"f(1)\nf(2)\n", "f(", "g(", 2},
		{"x\ny\nx\ny\n", "x\ny", "z", 4}, // two occurrences of a two-line replacement
		{"none\n", "a", "b", 0},
		{"", "a", "b", 0},
	}
	for _, tt := range tests {
		if got := replaceAllLines(tt.content, tt.old, tt.new); got != tt.want {
			t.Errorf("replaceAllLines(%q, %q, %q) = %d, want %d", tt.content, tt.old, tt.new, got, tt.want)
		}
	}
}

// contentResolver is a Resolver that also reads files (as the runtime's
// does), from a map.
type contentResolver struct {
	files map[string]string
}

func (c contentResolver) Resolve(abs string) PathInfo {
	_, ok := c.files[abs]
	return PathInfo{Real: abs, Exists: ok}
}
func (c contentResolver) Glob(string) ([]string, bool) { return nil, false }
func (c contentResolver) Reach(string, Walk, func(string) bool) (string, error) {
	return "", nil
}

func (c contentResolver) Content(abs string) (string, bool) {
	s, ok := c.files[abs]
	return s, ok
}

func TestReplaceAllCountsEveryOccurrence(t *testing.T) {
	law := loadLaw(t, "workflows/dev.yaml", corpusOptions)
	many := ""
	for i := 0; i < 30; i++ {
		many += "oldName()\n"
	}
	input := func(all bool) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"file_path": "/repo/src/a.go", "old_string": "oldName", "new_string": "newName", "replace_all": all})
		return b
	}
	run := &RunState{Active: true, State: "implementing"}
	res := contentResolver{files: map[string]string{"/repo/src/a.go": many}}
	d := law.Decide(run, &ToolCall{Tool: "Edit", Input: input(true), Cwd: "/repo", Resolver: res})
	if d.Verdict != Deny || d.Rule != RuleMaxEditLines {
		t.Errorf("replace_all over 30 lines: %s %s %s", d.Verdict, d.Rule, d.Reason)
	}
	d = law.Decide(run, &ToolCall{Tool: "Edit", Input: input(false), Cwd: "/repo", Resolver: res})
	if d.Verdict != Allow {
		t.Errorf("one replacement: %s %s %s", d.Verdict, d.Rule, d.Reason)
	}
	few := contentResolver{files: map[string]string{"/repo/src/a.go": "oldName()\nx\noldName()\n"}}
	d = law.Decide(run, &ToolCall{Tool: "Edit", Input: input(true), Cwd: "/repo", Resolver: few})
	if d.Verdict != Allow || d.Effects.EditedLines != 2 {
		t.Errorf("replace_all over 2 lines: %s %s %s lines=%d", d.Verdict, d.Rule, d.Reason, d.Effects.EditedLines)
	}
	d = law.Decide(run, &ToolCall{Tool: "Edit", Input: input(true), Cwd: "/repo"})
	if d.Verdict != Deny || d.Rule != RuleMaxEditLines {
		t.Errorf("replace_all without the file's content: %s %s %s", d.Verdict, d.Rule, d.Reason)
	}
}

// TestMultiEditReplaceAll: a MultiEdit's edit with replace_all (Claude
// Code's MultiEdit takes one per edit) changes every occurrence, as an
// Edit's does, and is counted so: it was counted as one replacement, and
// allowed where the Edit is denied.
func TestMultiEditReplaceAll(t *testing.T) {
	law := loadLaw(t, "workflows/dev.yaml", corpusOptions)
	many := ""
	for i := 0; i < 30; i++ {
		many += "oldName()\n"
	}
	input := func(edits ...map[string]any) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"file_path": "/repo/src/a.go", "edits": edits})
		return b
	}
	all := map[string]any{"old_string": "oldName", "new_string": "newName", "replace_all": true}
	one := map[string]any{"old_string": "x", "new_string": "y"}
	run := &RunState{Active: true, State: "implementing"}
	res := contentResolver{files: map[string]string{"/repo/src/a.go": many + "x\n"}}
	for _, c := range []struct {
		name  string
		in    json.RawMessage
		res   Resolver
		allow bool
		lines int
	}{
		{"replace_all over 30 lines", input(all), res, false, 0},
		{"replace_all after another edit", input(one, all), res, false, 0},
		{"replace_all without the file's content", input(all), nil, false, 0},
		{"no replace_all", input(one, map[string]any{"old_string": "oldName", "new_string": "newName"}), res, true, 2},
		{"replace_all over 2 lines", input(all), contentResolver{files: map[string]string{"/repo/src/a.go": "oldName()\nx\noldName()\n"}}, true, 2},
		{"replace_all of text an earlier edit wrote", input(map[string]any{"old_string": "x", "new_string": "oldName"}, all),
			contentResolver{files: map[string]string{"/repo/src/a.go": "x\nx\ny\n"}}, true, 2},
	} {
		d := law.Decide(run, &ToolCall{Tool: "MultiEdit", Input: c.in, Cwd: "/repo", Resolver: c.res})
		if (d.Verdict == Allow) != c.allow || !c.allow && d.Rule != RuleMaxEditLines || c.allow && d.Effects.EditedLines != c.lines {
			t.Errorf("%s: %s %s lines=%d %s", c.name, d.Verdict, d.Rule, d.Effects.EditedLines, d.Reason)
		}
	}
}
