package mcpserver

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// benchCall measures one tools/call round trip through the SDK's in-memory
// transport to a server on a real SQLite store (file in a temp dir).
func benchCall(b *testing.B, name string, args map[string]any) {
	f := newFixture(b, Options{})
	f.ok(ToolStart, stamp("b1", "name", "bugfix"), nil)
	params := &mcp.CallToolParams{Name: name, Arguments: args}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := f.cs.CallTool(b.Context(), params)
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %+v", name, err, res)
		}
	}
}

// BenchmarkGetState: a read (one LiveRun query, the law from the cache).
func BenchmarkGetState(b *testing.B) { benchCall(b, ToolGetState, stamp("b1")) }

// BenchmarkListWorkflows: templates, the project directory, one LiveRun query.
func BenchmarkListWorkflows(b *testing.B) { benchCall(b, ToolListWorkflows, stamp("b1")) }

// BenchmarkPauseRequest: one write transaction (an appended admin event).
func BenchmarkPauseRequest(b *testing.B) { benchCall(b, ToolPause, stamp("b1", "reason", "bench")) }
