package policy

import (
	"encoding/json"
	"testing"
)

// TestFoldedNames: a case-insensitive file system (NTFS's upcase table,
// APFS's case folding) takes ſ (long s) for s and ı (dotless i) for i,
// which strings.ToLower leaves as they are: .git/hookſ is .git/hooks
// there, .gıt is .git, ~/.ſsh is ~/.ssh. The protected trees and the
// secrets are matched on names folded as such a file system folds them.
func TestFoldedNames(t *testing.T) {
	law := compileSource(t, []byte(`{"id":"f","initial":"w","states":{
 "w":{"allowed_tools":["Read","Write","Bash"],"on":{"D":"d"}},"d":{"type":"final"}}}`), "f.json", corpusOptions)
	run := &RunState{Active: true, State: "w"}
	checkPathCases(t, law, run, []pathCase{
		{"Write", "/repo/.git/hookſ/pre-commit", false},
		{"Write", "/repo/.gıt/config", false},
		{"Write", "/repo/.ſtatewright/x.yaml", false},
		{"Write", "/home/u/.baſhrc", false},
		{"Write", "/repo/.claude/ſettings.json", false},
		{"Read", "/home/u/.ſsh/id_rsa", false},
		{"Read", "/repo/.enѵ", true}, // (a Cyrillic letter: another name on every file system)
		{"Bash", "rm -rf /repo/.gıt", false},
		{"Write", "/repo/src/ſtuff.go", true},
	})
}

// pathCase is a call of tool naming arg (its file_path, or a Bash
// command) and whether the law allows it.
type pathCase struct {
	tool, arg string
	allow     bool
}

// checkPathCases decides each case in run's phase, from /repo, and
// reports those decided otherwise.
func checkPathCases(t *testing.T, law *Law, run *RunState, cases []pathCase) {
	t.Helper()
	for _, c := range cases {
		key := "file_path"
		if c.tool == "Bash" {
			key = "command"
		}
		in, _ := json.Marshal(map[string]any{key: c.arg, "content": "x"})
		d := law.Decide(run, &ToolCall{Tool: c.tool, Input: in, Cwd: "/repo", ProjectDir: "/repo"})
		if (d.Verdict == Allow) != c.allow {
			t.Errorf("%s %s: %s %s %.160s", c.tool, c.arg, d.Verdict, d.Rule, d.Reason)
		}
	}
}
