package gateway

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/workflow"
)

// TestMappedEditsCounted: a mapped edit's lines are counted from the text
// the upstream applies. The law reads an edit's old and new text under any
// of its spellings (old_string, oldString, oldText, ...), the first it
// finds; the filesystem server reads oldText and newText only. An edit
// that gave its text twice (a one-line old_string/new_string beside a
// 50-line oldText/newText), or under names the law does not read, or a
// tool mapped as Edit (whose edits list the law's Edit does not read), was
// counted as changing no lines, and allowed under max_edit_lines 2.
func TestMappedEditsCounted(t *testing.T) {
	def, _, err := workflow.Parse([]byte(`{"id":"x","initial":"w","states":{
 "w":{"allowed_tools":["Edit","MultiEdit","Write"],"max_edit_lines":2,"on":{"D":"d"}},"d":{"type":"final"}}}`), workflow.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	law := policy.MustCompile(def, policy.Options{})
	big := strings.Repeat("line\n", 50)
	fs := &Upstream{Name: "fs", Map: PresetFilesystem, Tools: map[string]ToolMap{
		"edit_one": {As: "Edit", Path: "path", Edits: "edits"},
	}}
	edit := func(e map[string]any) map[string]any { return map[string]any{"path": "a.go", "edits": []any{e}} }
	for _, c := range []struct {
		name, tool string
		args       map[string]any
		allowed    bool
		err        string // when MapCall refuses
	}{
		{"small edit", "edit_file", edit(map[string]any{"oldText": "x", "newText": "y"}), true, ""},
		{"large edit", "edit_file", edit(map[string]any{"oldText": "x", "newText": big}), false, ""},
		{"decoy spelling", "edit_file", edit(map[string]any{"oldText": "x", "newText": big, "old_string": "a", "new_string": "a"}), false, "twice"},
		{"decoy new only", "edit_file", edit(map[string]any{"oldText": "x", "newText": big, "newString": "x"}), false, "twice"},
		{"unknown spelling", "edit_file", edit(map[string]any{"find": "x", "replace": big}), false, "old text"},
		{"old text not a string", "edit_file", edit(map[string]any{"oldText": 1, "newText": "y"}), false, "old text"},
		{"not an object", "edit_file", map[string]any{"path": "a.go", "edits": []any{"x"}}, false, "not an object"},
		{"as Edit, large", "edit_one", edit(map[string]any{"oldText": "x", "newText": big}), false, ""},
		{"as Edit, small", "edit_one", edit(map[string]any{"oldText": "x", "newText": "y"}), true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, _ := json.Marshal(c.args)
			calls, err := MapCall(fs, "fs__"+c.tool, c.tool, b)
			if err != nil {
				if c.allowed || c.err == "" || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("MapCall: %v (want allowed %v, error %q)", err, c.allowed, c.err)
				}
				return
			}
			allowed := true
			for _, m := range calls {
				d := law.Decide(&policy.RunState{Active: true, State: "w"}, &policy.ToolCall{Harness: policy.ClaudeCode, Tool: m.Tool, Input: m.Input,
					Cwd: "/p", ProjectDir: "/p"})
				allowed = allowed && d.Verdict == policy.Allow
			}
			if allowed != c.allowed {
				t.Fatalf("%s %s: allowed %v, want %v", calls[0].Tool, b, allowed, c.allowed)
			}
		})
	}
}
