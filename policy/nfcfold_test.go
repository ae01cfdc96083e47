package policy

import "testing"

// TestCanonicalEquivalentNames: protected trees and secrets are matched on
// names in NFC, as a file system that compares canonically equivalent
// names as one (macOS's APFS; the reference filesystem MCP server matches
// a missing name to a directory entry of the same NFC) finds them. With the
// home directory /home/josé (é precomposed, U+00E9), a Read of
// /home/jose\u0301/.ssh/id_rsa (e and a combining acute) was allowed
// where APFS reads the key; so was an Edit of the project's .git/config
// under the decomposed spelling, and of a workflow file whose name has an
// accent written decomposed.
func TestCanonicalEquivalentNames(t *testing.T) {
	law := compileSource(t, []byte(`{"id":"m","initial":"w","states":{
 "w":{"allowed_tools":["Read","Write","Edit"],"on":{"D":"d"}},"d":{"type":"final"}}}`), "m.json",
		Options{Host: &Host{Home: "/home/jos\u00e9", ProjectDir: "/home/jos\u00e9/proj", GitDirs: []string{"/home/jos\u00e9/proj/.git"}},
			ProtectedPaths: []string{"/home/jos\u00e9/proj/workflows/r\u00e9sum\u00e9.yaml"}})
	run := &RunState{Active: true, State: "w"}
	for _, c := range []struct {
		tool, in string
		allow    bool
	}{
		{"Read", `{"file_path":"/home/jose\u0301/.ssh/id_rsa"}`, false},
		{"Read", `{"file_path":"/home/jos\u00e9/.ssh/id_rsa"}`, false},
		{"Read", `{"file_path":"/home/JOSE\u0301/.SSH/id_rsa"}`, false},
		{"Edit", `{"file_path":"/home/jose\u0301/proj/.git/config","old_string":"a","new_string":"b"}`, false},
		{"Write", `{"file_path":"/home/jos\u00e9/proj/workflows/re\u0301sume\u0301.yaml","content":"x"}`, false},
		{"Write", `{"file_path":"/home/jos\u00e9/proj/workflows/r\u00e9sum\u00e9.yaml","content":"x"}`, false},
		{"Read", `{"file_path":"/home/jose\u0301/proj/src/a.go"}`, true},
		{"Write", `{"file_path":"/home/jos\u00e9/proj/src/caf\u00e9.go","content":"x"}`, true},
	} {
		d := law.Decide(run, &ToolCall{Tool: c.tool, Input: []byte(c.in), Cwd: "/home/jos\u00e9/proj", ProjectDir: "/home/jos\u00e9/proj"})
		if (d.Verdict == Allow) != c.allow {
			t.Errorf("%s %s: %s %s %.160s", c.tool, c.in, d.Verdict, d.Rule, d.Reason)
		}
	}
}
