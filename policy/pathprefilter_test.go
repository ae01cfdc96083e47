package policy

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/engine"
)

// prefilterInputs are inputs of tools without canonical form: plain
// arguments, path-like ones in every spelling looksLikePath knows, escaped,
// nested, duplicated, non-ASCII and malformed.
var prefilterInputs = []string{
	``, `{}`, `null`, `[]`, `"x"`, `{"text":"hello"}`, `{"text":"hello","n":3,"ok":true,"x":null}`,
	`{"path":"/repo/src/a.go"}`, `{"path":"/home/u/.ssh/id_rsa"}`, `{"p":"~/.aws/credentials"}`, `{"p":"./.env"}`,
	`{"p":"../secrets/k"}`, `{"p":"."}`, `{"p":".."}`, `{"u":"file:///etc/shadow"}`, `{"u":"FILE:///repo/.env"}`,
	`{"p":"\/repo\/.env"}`, `{"p":"\u002frepo/.env"}`, `{"p":"\u007e/.ssh/id_rsa"}`, `{"p":"ＦILE:///x"}`,
	`{"a":{"p":"/repo/.env"}}`, `{"a":["/repo/.env"]}`, `{"p":"x","p":"/repo/.env"}`, `{"p":"/repo/.env","p":"x"}`,
	`{"p":"/repo/.env"`, `{"p":"hello"`, `{"p":"/repo/.env\n"}`, `{"text":"see /repo/.env"}`, `{"fmt":"x"}`,
	`{"text":"\"/repo/.env"}`, `{"p":"` + "\xff" + `/x"}`, `{"dir":"/repo/.git","pattern":"*"}`,
	`{"files":[{"path":"/repo/.env"}]}`, `{"a":{"b":["x",{"c":"hello"}]}}`,
	// Around maxArgDepth: argStrings denies what nests deeper.
	nested(maxArgDepth-1, `"x"`), nested(maxArgDepth, `"x"`), nested(maxArgDepth+1, `"x"`), nested(maxArgDepth+2, `"x"`),
	nested(maxArgDepth, `{}`), nested(maxArgDepth+1, `[]`), nested(maxArgDepth+1, `1`),
	`{"a":"` + strings.Repeat("{", maxArgDepth+1) + `"}`, `{"a":[` + strings.Repeat("[],", maxArgDepth+1) + `[]]}`,
}

// nested is an object of n levels, alternating objects and arrays, with
// v innermost.
func nested(n int, v string) string {
	s := v
	for i := range n {
		if i%2 == 0 {
			s = "[" + s + "]"
		} else {
			s = `{"k":` + s + "}"
		}
	}
	return `{"a":` + s + "}"
}

// TestPathPrefilterAgrees: every decision of a tool without canonical form
// (plain, search-ish, write-ish and a harness read tool of no path key), in
// every phase of the bundled templates and the test workflows, is the same
// with mayNamePath's shortcut and with every input decoded, lesson text
// included.
func TestPathPrefilterAgrees(t *testing.T) {
	tools := []string{"up__echo", "mcp__fs__search_files", "mcp__fs__read_text", "mcp__fs__write_file", "Read", "Grep", "TodoWrite", "WebFetch"}
	n := 0
	for name, law := range simLaws(t) {
		runs := []*RunState{nil}
		for _, st := range law.States() {
			runs = append(runs, &RunState{Active: true, State: st},
				&RunState{Active: true, State: st, FilesEdited: []string{"/repo/src/a.go"}, Iterations: 1,
					History: []engine.Frame{{Return: "narrow", Interrupt: "sec"}}})
		}
		for _, tool := range tools {
			for _, in := range prefilterInputs {
				for _, run := range runs {
					call := &ToolCall{Tool: tool, Input: json.RawMessage(in), Cwd: "/repo", ProjectDir: "/repo"}
					decidePrefilterBoth(t, name, law, run, call)
					n++
				}
			}
		}
	}
	t.Logf("%d decisions", n)
}

func decidePrefilterBoth(t *testing.T, name string, law *Law, run *RunState, call *ToolCall) {
	t.Helper()
	fast := law.Decide(run, call)
	pathPrefilter = false
	full := law.Decide(run, call)
	pathPrefilter = true
	if !reflect.DeepEqual(fast, full) {
		t.Fatalf("%s, run %+v, %s %q: the prefilter changes the decision:\nfast %+v\nfull %+v", name, run, call.Tool, call.Input, fast, full)
	}
}

// FuzzMayNamePath: when mayNamePath says no, the decoded input holds no
// string looksLikePath takes for a path (or is not an object), and the
// decisions agree with and without the shortcut.
func FuzzMayNamePath(f *testing.F) {
	for _, in := range prefilterInputs {
		f.Add([]byte(in))
	}
	law := benchLaw(f)
	run := &RunState{Active: true, State: "planning"}
	f.Fuzz(func(t *testing.T, in []byte) {
		if !mayNamePath(in) {
			if m, err := decodeInput(in); err == nil {
				deep := argStrings(m, func(s string) bool {
					if looksLikePath(s) {
						t.Fatalf("mayNamePath(%q) = false, but it holds %q", in, s)
					}
					return true
				})
				if deep {
					t.Fatalf("mayNamePath(%q) = false, but it nests deeper than argStrings reads", in)
				}
			}
		}
		for _, tool := range []string{"up__echo", "mcp__fs__search_files"} {
			decidePrefilterBoth(t, "dev.yaml", law, run, &ToolCall{Tool: tool, Input: in, Cwd: "/repo", ProjectDir: "/repo"})
			decidePrefilterBoth(t, "dev.yaml", law, nil, &ToolCall{Tool: tool, Input: in, Cwd: "/repo", ProjectDir: "/repo"})
		}
	})
}

// BenchmarkDecideUpstreamTool decides a gateway's upstream call (an MCP
// tool of plain arguments) in a phase that denies it and with no run.
func BenchmarkDecideUpstreamTool(b *testing.B) {
	law := benchLaw(b)
	run := &RunState{Active: true, State: "planning", Iterations: 2}
	call := &ToolCall{Tool: "up__echo", Input: json.RawMessage(`{"text":"hello"}`), Cwd: "/repo", ProjectDir: "/repo"}
	b.ReportAllocs()
	for b.Loop() {
		law.Decide(run, call)
		law.Decide(nil, call)
	}
}
