package policy

import (
	"encoding/json"
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
