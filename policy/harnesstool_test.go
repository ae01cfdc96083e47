package policy

import "testing"

// TestHarnessTool: the names Claude Code decides as its own tools, a
// meta-tool or a control tool, and the opaque ones it decides by name.
func TestHarnessTool(t *testing.T) {
	for name, want := range map[string]bool{
		"Write": true, "write": true, "Bash": true, "bash": true, "Edit": true, "Read": true, "WebFetch": true,
		"TodoWrite": true, "Task": true, "mcp__statewright__transition": true, "mcp__statewright__x": true,
		"up__Write": false, "echo": false, "mcp__github__create_issue": false, "fs__write_file": false, "": false,
	} {
		if got := HarnessTool(ClaudeCode, name); got != want {
			t.Errorf("HarnessTool(ClaudeCode, %q) = %v, want %v", name, got, want)
		}
	}
}
