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

// repeatedAgree checks that repeatedKeysFast refuses the valid JSON
// object args exactly when repeatedKeys(args, false) does.
func repeatedAgree(t *testing.T, args []byte) {
	t.Helper()
	if !isObject(args) {
		return
	}
	fast, slow := repeatedKeysFast(args), repeatedKeys(args, false)
	if (fast == nil) != (slow == nil) {
		t.Fatalf("%s: fast %v, decoder %v", args, fast, slow)
	}
}

var repeatedInputs = []string{`{}`, `{"a":1}`, `{"a":1,"a":2}`, `{"a":1,"A":2}`, `{"a":{"a":1},"b":[{"a":1,"a":2}]}`,
	`{"a":"x,\"a\":","b":1}`, `{"a":"}","a":1}`, `{"p\u0061th":1,"path":2}`, "{\"\xff\":1,\"\xfe\":2}", `{"é":1,"é":2}`,
	` { "a" : [ 1 , { "b" : 2 , "b" : 3 } ] , "c" : "\\" } `, `{"a":[{"x":1},{"x":1}],"b":{"x":{"x":1}}}`,
	`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":0,"k11":1,"k12":2,"k13":3,"k14":4,"k15":5,"k16":6,"k17":7,"k18":8,"k19":9,"k20":0,"k21":1,"k22":2,"k23":3,"k24":4,"k25":5,"k26":6,"k27":7,"k28":8,"k29":9,"k30":0,"k31":1,"k32":2,"k0":3}`,
	`{"a":[[[[[[[[[[{"b":1,"b":2}]]]]]]]]]]}`, `{"":1,"":2}`, `{"a\"b":1,"a\"b":2}`}

// TestRepeatedKeysFast: the byte scan an unmapped call's arguments take
// refuses what the decoder refuses.
func TestRepeatedKeysFast(t *testing.T) {
	for _, in := range repeatedInputs {
		repeatedAgree(t, []byte(in))
	}
}

func FuzzRepeatedKeysFast(f *testing.F) {
	for _, in := range repeatedInputs {
		f.Add([]byte(in))
	}
	f.Fuzz(repeatedAgree)
}
