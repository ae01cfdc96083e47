package policy

import (
	"fmt"
	"testing"
)

// TestToolListNamed: a tool list finds its entries as written, whether it
// compares them one by one (short) or looks them up (nameSetMin and
// more), and nothing else.
func TestToolListNamed(t *testing.T) {
	for _, n := range []int{0, 1, 2, nameSetMin - 1, nameSetMin, nameSetMin + 5} {
		var entries []string
		for i := range n {
			entries = append(entries, fmt.Sprintf("mcp__srv__tool_%d", i))
		}
		tl := compileToolList(entries)
		if (tl.nameSet != nil) != (n >= nameSetMin) {
			t.Errorf("%d entries: nameSet %v", n, tl.nameSet != nil)
		}
		for _, e := range entries {
			if !tl.named(e) || !tl.has(toolInfo{kind: kOther}, e) || !tl.hasExactly(toolInfo{kind: kOther}, e) {
				t.Errorf("%d entries: %q not found", n, e)
			}
		}
		for _, miss := range []string{"", "mcp__srv__tool_", fmt.Sprintf("mcp__srv__tool_%d", n), "MCP__SRV__TOOL_0", "Edit"} {
			if tl.named(miss) || tl.has(toolInfo{kind: kOther}, miss) || tl.hasExactly(toolInfo{kind: kOther}, miss) {
				t.Errorf("%d entries: %q found", n, miss)
			}
		}
	}
}
