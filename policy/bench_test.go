package policy

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func benchLaw(b testing.TB) *Law {
	return loadLaw(b, "workflows/dev.yaml", corpusOptions)
}

// TestAllowedToolDoesNotAllocate pins the hot path: an allowed non-shell
// tool is decided with map lookups only.
func TestAllowedToolDoesNotAllocate(t *testing.T) {
	law := benchLaw(t)
	run := &RunState{Active: true, State: "planning", Iterations: 2}
	for _, call := range []*ToolCall{
		{Tool: "Read", Input: json.RawMessage(`{"file_path":"/repo/src/main.go"}`)},
		{Tool: "Grep", Input: json.RawMessage(`{"pattern":"TODO","path":"src"}`)},
		{Tool: "TodoWrite", Input: json.RawMessage(`{"todos":[]}`)},
		{Harness: Codex, Tool: "read_file", Input: json.RawMessage(`{"path":"src/a.go"}`)},
		{Tool: "mcp__statewright__statewright_get_state", Input: json.RawMessage(`{}`)},
	} {
		var d Decision
		allocs := testing.AllocsPerRun(200, func() { d = law.Decide(run, call) })
		if d.Verdict != Allow {
			t.Fatalf("%s: %v %s", call.Tool, d.Verdict, d.Reason)
		}
		if allocs != 0 {
			t.Errorf("%s: %v allocations per decision, want 0", call.Tool, allocs)
		}
	}
}

func BenchmarkDecideAllowedRead(b *testing.B) {
	law := benchLaw(b)
	run := &RunState{Active: true, State: "planning", Iterations: 2}
	call := &ToolCall{Tool: "Read", Input: json.RawMessage(`{"file_path":"/repo/src/main.go"}`)}
	b.ReportAllocs()
	for b.Loop() {
		if law.Decide(run, call).Verdict != Allow {
			b.Fatal("denied")
		}
	}
}

func BenchmarkDecideAllowedCodexAlias(b *testing.B) {
	law := benchLaw(b)
	run := &RunState{Active: true, State: "planning"}
	call := &ToolCall{Harness: Codex, Tool: "read_file", Input: json.RawMessage(`{"path":"src/a.go"}`)}
	b.ReportAllocs()
	for b.Loop() {
		law.Decide(run, call)
	}
}

func BenchmarkDecideDeniedTool(b *testing.B) {
	law := benchLaw(b)
	run := &RunState{Active: true, State: "planning"}
	call := &ToolCall{Tool: "Edit", Input: json.RawMessage(`{"file_path":"src/a.go","old_string":"a","new_string":"b"}`)}
	b.ReportAllocs()
	for b.Loop() {
		law.Decide(run, call)
	}
}

func BenchmarkDecideShellRead(b *testing.B) {
	law := benchLaw(b)
	run := &RunState{Active: true, State: "planning"}
	call := &ToolCall{Tool: "Bash", Input: json.RawMessage(`{"command":"git log --oneline -5 | grep fix | head -3"}`)}
	b.ReportAllocs()
	for b.Loop() {
		law.Decide(run, call)
	}
}

func BenchmarkDecideEdit(b *testing.B) {
	law := benchLaw(b)
	run := &RunState{Active: true, State: "implementing", FilesEdited: []string{"/repo/src/a.go"}}
	call := &ToolCall{Tool: "Edit", Cwd: "/repo", Input: json.RawMessage(`{"file_path":"src/a.go","old_string":"a\nb","new_string":"a\nc"}`)}
	b.ReportAllocs()
	for b.Loop() {
		law.Decide(run, call)
	}
}

// A Write of 64 KiB in a phase that does not allow Write: the deny, with
// its lesson and the phases that would allow it, reads the input's path
// and content fields in place (issue 16: a denied call <= 1 µs).
func BenchmarkDecideDeniedWrite(b *testing.B) {
	law := benchLaw(b)
	run := &RunState{Active: true, State: "planning"}
	content, _ := json.Marshal(strings.Repeat("some line of code\n", 64<<10/18))
	call := &ToolCall{Tool: "Write", Cwd: "/repo", Input: json.RawMessage(`{"file_path":"src/big.go","content":` + string(content) + `}`)}
	b.ReportAllocs()
	for b.Loop() {
		if law.Decide(run, call).Verdict != Deny {
			b.Fatal("allowed")
		}
	}
}

// bigWrite is a Write of a file of about size bytes of Go-like code
// (quotes included, escaped in the JSON), naming its path before or after
// the content.
func bigWrite(size int, pathFirst bool) *ToolCall {
	line := "\tfmt.Println(\"line\", i) // a comment\n"
	content, _ := json.Marshal(strings.Repeat(line, size/len(line)))
	in := `{"file_path":"src/big.go","content":` + string(content) + `}`
	if !pathFirst {
		in = `{"content":` + string(content) + `,"file_path":"src/big.go"}`
	}
	return &ToolCall{Tool: "Write", Cwd: "/repo", ProjectDir: "/repo", Input: json.RawMessage(in)}
}

// Large Writes where Write is not allowed (issue 16: a denied call <= 1
// µs): the path is read without the content, from the start when it
// comes first, from the end when it comes last; the lesson's suggestions
// read only as many lines as max_edit_lines needs.
func BenchmarkDecideDeniedWriteSize(b *testing.B) {
	law := benchLaw(b)
	run := &RunState{Active: true, State: "planning"}
	for _, size := range []int{64 << 10, 1 << 20} {
		for _, first := range []bool{true, false} {
			name := fmt.Sprintf("%dKiB/path-last", size>>10)
			if first {
				name = fmt.Sprintf("%dKiB/path-first", size>>10)
			}
			call := bigWrite(size, first)
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(call.Input)))
				for b.Loop() {
					if law.Decide(run, call).Verdict != Deny {
						b.Fatal("allowed")
					}
				}
			})
		}
	}
}

// The same Write of 64 KiB allowed (a phase without limits): the allow
// reads and checks the whole input.
func BenchmarkDecideAllowedWrite64KiB(b *testing.B) {
	law := benchLaw(b)
	run := &RunState{Active: true, State: "ops"}
	call := bigWrite(64<<10, true)
	b.ReportAllocs()
	b.SetBytes(int64(len(call.Input)))
	for b.Loop() {
		if d := law.Decide(run, call); d.Verdict != Allow {
			b.Fatal(d.Reason)
		}
	}
}

// An Edit of a protected file (the harness's settings) where edits are
// allowed: self-protection denies it.
func BenchmarkDecideDeniedProtected(b *testing.B) {
	law := benchLaw(b)
	run := &RunState{Active: true, State: "implementing"}
	call := &ToolCall{Tool: "Edit", Cwd: "/repo", ProjectDir: "/repo", Input: json.RawMessage(`{"file_path":".claude/settings.json","old_string":"a","new_string":"b"}`)}
	b.ReportAllocs()
	for b.Loop() {
		if law.Decide(run, call).Verdict != Deny {
			b.Fatal("allowed")
		}
	}
}

// TestDeniedWriteAllocates pins the denied large Write's allocations: the
// lesson is cached, the lazy reading's one target and the files counted
// are held without a slice of their own; what is left is the lexical
// absolute path (rawAbs' concatenation).
func TestDeniedWriteAllocates(t *testing.T) {
	law := benchLaw(t)
	run := &RunState{Active: true, State: "planning"}
	for _, first := range []bool{true, false} {
		call := bigWrite(64<<10, first)
		var d Decision
		allocs := testing.AllocsPerRun(100, func() { d = law.Decide(run, call) })
		if d.Verdict != Deny {
			t.Fatalf("path first %v: %v %s", first, d.Verdict, d.Reason)
		}
		if allocs > 1 {
			t.Errorf("path first %v: %v allocations per decision, want at most 1", first, allocs)
		}
	}
}

// BenchmarkDecideDeniedTool's deny as Claude Code sends the call: an
// absolute file_path, the session's working and project directories, and
// old and new text of a few lines with the escapes code has (newlines,
// tabs). DeniedTool's "a" -> "b" without a directory misses the decoding
// of escaped text and the resolution against the project.
func BenchmarkDecideDeniedToolClaude(b *testing.B) {
	law := benchLaw(b)
	run := &RunState{Active: true, State: "planning"}
	call := &ToolCall{Tool: "Edit", Cwd: "/repo", ProjectDir: "/repo", Input: json.RawMessage(`{"file_path":"/repo/src/a.go","old_string":"\tx := 1\n\treturn x","new_string":"\tx := 2\n\treturn x"}`)}
	b.ReportAllocs()
	for b.Loop() {
		if law.Decide(run, call).Verdict != Deny {
			b.Fatal("allowed")
		}
	}
}
