package policy

import (
	"encoding/json"
	"testing"

	"github.com/statewright-go/statewright/shell"
)

// FuzzDecideShell decides arbitrary command lines in a read-only phase that
// allows Bash: a line that does not parse is never allowed, and neither is a
// line whose analysis writes, modifies, deletes, runs code, uses the network
// or does anything else beyond reading, searching, git-reading and tests.
func FuzzDecideShell(f *testing.F) {
	for _, s := range []string{
		"ls -la", "cat a | grep b", "echo x > f", "rm -rf /", "python -c 'x'", "curl x | sh",
		"git log --oneline", "find . -exec rm {} \\;", "sed -i s/a/b/ f", "$(echo rm) -rf /",
		"bash -c 'echo x > y'", "cat <<EOF > f\nx\nEOF", "echo \"unterminated", "a=1; $a", "ls &",
		"eval \"$X\"", "awk '{system(\"id\")}'", "git -c core.pager=sh log", "for f in *; do rm $f; done",
	} {
		f.Add(s)
	}
	law := loadLaw(f, "workflows/dev.yaml", corpusOptions)
	run := &RunState{Active: true, State: "planning"}
	const allowedClasses = shell.ClassRead | shell.ClassSearch | shell.ClassGitRead | shell.ClassTest
	f.Fuzz(func(t *testing.T, src string) {
		input, err := json.Marshal(map[string]string{"command": src})
		if err != nil {
			t.Fatal(err)
		}
		var back struct{ Command string }
		if err := json.Unmarshal(input, &back); err != nil {
			t.Fatal(err)
		}
		d := law.Decide(run, &ToolCall{Tool: "Bash", Input: input, Cwd: "/repo"})
		if d.Verdict != Allow {
			return
		}
		a, err := shell.Analyze(back.Command)
		if err != nil {
			t.Fatalf("allowed a command that does not parse: %q (%v)", back.Command, err)
		}
		if extra := a.Classes &^ allowedClasses; extra != 0 {
			t.Fatalf("allowed %q in a read phase, but it does %v", back.Command, extra)
		}
		for _, c := range a.Commands {
			if extra := c.Classes &^ allowedClasses; extra != 0 || len(c.Writes) > 0 {
				t.Fatalf("allowed %q in a read phase, but %v does %v (writes %v)", back.Command, c.Argv, extra, c.Writes)
			}
		}
	})
}

// FuzzDecideInput decides arbitrary tool inputs for every kind of tool and
// harness: Decide never panics, and a call it cannot read is never allowed
// in a limited phase; read lazily (lazyFlat), from the start or from the
// end, it allows only what the whole reading allows.
func FuzzDecideInput(f *testing.F) {
	f.Add("Edit", `{"file_path":"src/a.go","old_string":"a","new_string":"b"}`)
	f.Add("apply_patch", `{"input":"*** Begin Patch\n*** Update File: a\n-a\n+b\n*** End Patch"}`)
	f.Add("Bash", `{"command":["bash","-lc","ls"]}`)
	f.Add("Write", `{"file_path":1}`)
	f.Add("MultiEdit", `{"file_path":"src/a.go","edits":[{"old_string":null}]}`)
	f.Add("Read", `not json`)
	law := loadLaw(f, "workflows/dev.yaml", corpusOptions)
	run := &RunState{Active: true, State: "implementing", FilesEdited: []string{"src/a.go"}}
	def, ahead := lazyMin, lazyAhead
	f.Fuzz(func(t *testing.T, tool, input string) {
		for _, h := range Harnesses {
			d := law.Decide(run, &ToolCall{Harness: h, Tool: tool, Input: json.RawMessage(input), Cwd: "/repo"})
			if d.Verdict == Allow && !json.Valid([]byte(input)) && isEditKind(lookupTool(h, tool).kind) {
				t.Fatalf("%s %s: allowed an edit whose input is not JSON: %q", h, tool, input)
			}
			for _, n := range aheads {
				lazyMin, lazyAhead = 0, n
				lazy := law.Decide(run, &ToolCall{Harness: h, Tool: tool, Input: json.RawMessage(input), Cwd: "/repo"})
				lazyMin, lazyAhead = def, ahead
				if lazy.Verdict == Allow && d.Verdict != Allow {
					t.Fatalf("%s %s: read lazily (ahead %d) %q is allowed, read whole %v %s", h, tool, n, input, d.Verdict, d.Reason)
				}
			}
		}
	})
}
