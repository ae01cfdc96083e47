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

// TestListsAllowEdit: the tool-list verdict a phase keeps for the edit
// tools by their canonical names is the one its lists give, in every
// phase of the test workflows and templates, for those names and for
// the other harnesses' names of edits (which are looked up).
func TestListsAllowEdit(t *testing.T) {
	calls := []struct {
		h    Harness
		tool string
	}{{ClaudeCode, "Write"}, {ClaudeCode, "Edit"}, {ClaudeCode, "MultiEdit"}, {ClaudeCode, "NotebookEdit"},
		{Codex, "apply_patch"}, {Codex, "write_file"}, {"opencode", "write"}, {"opencode", "edit"}, {"pi", "write"}, {"cursor", "Write"}}
	checked := 0
	for name, l := range simLaws(t) {
		for sn, cs := range l.states {
			for _, c := range calls {
				info := lookupTool(c.h, c.tool)
				if !isEditKind(info.kind) {
					continue
				}
				want := !cs.final && !cs.disallowed.hasExactly(info, c.tool) && (cs.anyTool || cs.allowed.has(info, c.tool))
				if got := cs.listsAllowEdit(info, c.tool); got != want {
					t.Errorf("%s, phase %s, %s %s: listsAllowEdit %v, the lists %v", name, sn, c.h, c.tool, got, want)
				}
				checked++
			}
		}
	}
	if checked == 0 {
		t.Fatal("no edit call checked")
	}
}
