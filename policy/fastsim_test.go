package policy

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/engine"
	"github.com/statewright-go/statewright/workflow"
)

// simEdges is a workflow whose phases meet each check of an edit's
// simulation at its edge: max_iterations 0, max_edit_lines and
// max_files_per_state at the lines and files the tests write, path scopes
// absolute and relative, permission rules (the pipeline's own way), a
// disallowed tool, a phase two transitions away, an interrupt's return.
const simEdges = `
id: simedges
initial: start
interrupts:
  sec:
    trigger:
      file_pattern: "src/auth/**"
    target: hold
states:
  start:
    allowed_tools: [Read]
    on: {A: zero, B: narrow, C: multi, D: ruled, E: nowrite}
  zero:
    allowed_tools: [Read, Edit, Write, MultiEdit, NotebookEdit]
    max_iterations: 0
    on: {BACK: start}
  narrow:
    allowed_tools: [Edit, Write, MultiEdit, NotebookEdit]
    max_edit_lines: 20
    max_files_per_state: 2
    allowed_paths: ["/repo/src/**", "docs/*.md"]
    on: {BACK: start}
  multi:
    allowed_tools: [MultiEdit, Write]
    max_edit_lines: 21
    denied_paths: ["**/*.md", "/repo/tests/**"]
    on: {BACK: start}
  ruled:
    allowed_tools: [Read]
    permissions:
      allow: ["Edit(src/**)", "Write(docs/**)"]
      deny: ["Write(src/auth/**)"]
    on: {BACK: start}
  nowrite:
    disallowed_tools: [Write]
    max_edit_lines: 0
    on: {NEXT: far1}
  far1:
    allowed_tools: [Read]
    on: {NEXT: far2}
  far2:
    allowed_tools: [Write, Edit, NotebookEdit]
    max_edit_lines: 24
    on: {BACK: start}
  hold:
    allowed_tools: [Read]
    on: {DONE: $return}
  done:
    type: final
`

// simLaws are the bundled templates, the test workflows and simEdges,
// compiled with the corpus's protected paths.
func simLaws(t testing.TB) map[string]*Law {
	laws := map[string]*Law{"simedges": compileSource(t, []byte(simEdges), "simedges", corpusOptions)}
	files, err := filepath.Glob("testdata/workflows/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no test workflows: %v", err)
	}
	for _, f := range files {
		laws[filepath.Base(f)] = loadLaw(t, "workflows/"+filepath.Base(f), corpusOptions)
	}
	for _, name := range workflow.TemplateNames() {
		laws[name] = loadLaw(t, "template:"+name, corpusOptions)
	}
	return laws
}

// editCall is an edit tool's call of file with n lines of content, padded
// past lazyMin when big (so that it is read lazily).
func editCall(h Harness, tool, file string, n int, big bool, cwd, project string) *ToolCall {
	content := strings.Repeat("x := f(\"q\")\t// line\n", n)
	if big && len(content) < 2*lazyMin {
		content += strings.Repeat(" ", 2*lazyMin)
	}
	fp, _ := json.Marshal(file)
	c, _ := json.Marshal(content)
	var in string
	switch tool {
	case "Edit":
		in = `{"file_path":` + string(fp) + `,"old_string":"a","new_string":` + string(c) + `}`
	case "EditAll":
		tool = "Edit"
		in = `{"file_path":` + string(fp) + `,"old_string":"a","new_string":` + string(c) + `,"replace_all":true}`
	case "NotebookEdit":
		in = `{"notebook_path":` + string(fp) + `,"new_source":` + string(c) + `}`
	case "MultiEdit":
		in = `{"file_path":` + string(fp) + `,"edits":[{"old_string":"a","new_string":` + string(c) + `}]}`
	default:
		in = `{"content":` + string(c) + `,"file_path":` + string(fp) + `}`
	}
	return &ToolCall{Harness: h, Tool: tool, Input: json.RawMessage(in), Cwd: cwd, ProjectDir: project}
}

// decideBoth decides call in every phase of law (and with no run) with the
// simulations' shortcuts on and off, and fails on any difference.
func decideBoth(t *testing.T, name string, law *Law, call *ToolCall) {
	t.Helper()
	runs := []*RunState{nil}
	for _, st := range law.States() {
		runs = append(runs, &RunState{Active: true, State: st},
			&RunState{Active: true, State: st, FilesEdited: []string{"/repo/src/a.go", "/repo/tests/b.go"}, Iterations: 1,
				History: []engine.Frame{{Return: "narrow", Interrupt: "sec"}}})
	}
	for _, run := range runs {
		fast := law.Decide(run, call)
		fastSim = false
		slow := law.Decide(run, call)
		fastSim = true
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%s, run %+v, %s %s: the simulations' shortcuts change the decision:\nfast %+v\nslow %+v", name, run, call.Tool, call.Input[:min(len(call.Input), 200)], fast, slow)
		}
	}
}

// TestFastSimulationAgrees: every decision of an edit, in every phase of
// the bundled templates and the test workflows, is the same whether its
// simulations take the short way (simAllows, the first target's paths
// shared, no reasons written) or the pipeline (fastSim off), lesson text
// included.
func TestFastSimulationAgrees(t *testing.T) {
	files := []string{"src/a.go", "/repo/src/a.go", "./src/../src/b.go", "tests/t_test.go", "docs/x.md", "src/secrets/k", "src/auth/login.go",
		"../outside.go", "/etc/hosts", "~/notes.md", ".claude/settings.json", "/repo/workflows/dev.yaml", "README.md", "", `C:\repo\src\a.go`,
		// (Self-protection defers these: they hold the law.)
		"/repo", "/home/u/.local/share/statewright", "/repo/.git"}
	n := 0
	for name, law := range simLaws(t) {
		// Every edge on the workflows written for it; the others (the
		// templates, much alike) at one size and in the project.
		lineCounts, dirSets := []int{21}, [][2]string{{"/repo", "/repo"}}
		if name == "simedges" || name == "dev.yaml" {
			lineCounts, dirSets = []int{1, 20, 21, 25}, [][2]string{{"/repo", "/repo"}, {"/repo/src", "/repo"}, {"/repo", ""}, {"", ""}}
		}
		for _, tool := range []string{"Write", "Edit", "EditAll", "MultiEdit", "NotebookEdit"} {
			h := ClaudeCode
			if tool == "Edit" {
				h = Codex // (its lessons name its own tools)
			}
			for _, f := range files {
				for _, lines := range lineCounts {
					for _, big := range []bool{false, true} {
						for _, dirs := range dirSets {
							decideBoth(t, name, law, editCall(h, tool, f, lines, big, dirs[0], dirs[1]))
							n++
						}
					}
				}
			}
		}
	}
	t.Logf("%d calls", n)
}

// FuzzFastSimulationAgrees is TestFastSimulationAgrees of fuzzed paths,
// contents and directories, in the test workflow and two templates.
func FuzzFastSimulationAgrees(f *testing.F) {
	f.Add("Write", "src/a.go", 30, true, "/repo", "/repo")
	f.Add("Edit", "/repo/tests/../src/x", 3, false, "/repo/src", "")
	f.Add("NotebookEdit", "docs//n.ipynb", 0, true, "", "/repo")
	laws := simLaws(f)
	names := []string{"dev.yaml"}
	for _, n := range workflow.TemplateNames() {
		names = append(names, n)
	}
	f.Fuzz(func(t *testing.T, tool, file string, lines int, big bool, cwd, project string) {
		lines = max(0, min(lines, 200))
		for _, n := range []string{names[0], names[1], names[len(names)-1]} {
			decideBoth(t, fmt.Sprint(n), laws[n], editCall(ClaudeCode, tool, file, lines, big, cwd, project))
		}
	})
}

// TestQuoteOrEscape: the word-at-a-time search finds what a byte loop
// finds, at every offset, next to bytes that differ from '"' or '\\' by
// one bit and bytes with the high bit set.
func TestQuoteOrEscape(t *testing.T) {
	fill := []byte{'a', '"' ^ 1, '"' ^ 0x80, '\\' ^ 1, '\\' ^ 0x80, 0xff, 0, 0x7f, 0xdc, 0xa2}
	for n := range 24 {
		for at := -1; at < n; at++ {
			for _, hit := range []byte{'"', '\\'} {
				for fi := range fill {
					b := make([]byte, n)
					for i := range b {
						b[i] = fill[(fi+i)%len(fill)]
					}
					if at >= 0 {
						b[at] = hit
					}
					s := string(b)
					for from := 0; from <= n; from++ {
						want := len(s)
						if k := strings.IndexAny(s[from:], "\"\\"); k >= 0 {
							want = from + k
						}
						if got := quoteOrEscape(s, from); got != want {
							t.Fatalf("quoteOrEscape(%q, %d) = %d, want %d", s, from, got, want)
						}
					}
				}
			}
		}
	}
}
