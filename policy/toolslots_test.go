package policy

import "testing"

// TestToolSlotsAgree: the direct-mapped tables answer exactly what their
// maps answer: every name of the harness, with its entry, and nothing
// for a name the map does not hold (other cases, prefixes, other
// harnesses' names, the empty name).
func TestToolSlotsAgree(t *testing.T) {
	for _, tc := range []struct {
		name  string
		table harnessTools
		slots *toolSlots
	}{{"claude", claudeTable, claudeSlots}, {"codex", codexTable, codexSlots}} {
		var probes []string
		for n := range tc.table {
			probes = append(probes, n, n+"x", n[:len(n)-1], "x"+n)
		}
		for _, other := range harnessTables {
			for n := range other {
				probes = append(probes, n)
			}
		}
		probes = append(probes, "", "read", "READ", "mcp__x__y", "statewright_get_state")
		held := 0
		for _, n := range probes {
			got, ok := tc.slots.lookup(n)
			want, inMap := tc.table[n]
			if ok && (!inMap || got != want) {
				t.Errorf("%s: slots say %q is %+v, the map %+v (%v)", tc.name, n, got, want, inMap)
			}
			if ok {
				held++
			}
		}
		for n, want := range tc.table {
			if got, ok := tc.slots.lookup(n); ok && got != want {
				t.Errorf("%s: %q is %+v in the slots, %+v in the map", tc.name, n, got, want)
			} else if !ok {
				t.Logf("%s: %q is in the map only", tc.name, n)
			}
		}
		if held == 0 {
			t.Errorf("%s: the slots hold no name", tc.name)
		}
	}
}
