package mcpserver

import (
	"regexp"
	"strings"
	"testing"
)

// TestValidatorsMatchTheirGrammar checks the hand-written validators against
// the grammar they replace, on edge cases and every single byte.
func TestValidatorsMatchTheirGrammar(t *testing.T) {
	sessionRE := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
	harnessRE := regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`)
	inputs := []string{"", "a", "0b5c2e9a-1f2e-4c1d-9a7e-3b2c1d0e9f8a", "-a", ".a", "a b", "a:b", "a/b",
		"A.b_c-d", strings.Repeat("a", 128), strings.Repeat("a", 129), "claude-code", "codex", "Codex",
		"9x", "a" + strings.Repeat("-", 31), "a" + strings.Repeat("-", 32), "é", "a\x00", "a\n"}
	for c := 0; c < 256; c++ {
		inputs = append(inputs, string([]byte{byte(c)}), "a"+string([]byte{byte(c)}))
	}
	for _, in := range inputs {
		if got, want := validSessionID(in), sessionRE.MatchString(in); got != want {
			t.Errorf("validSessionID(%q) = %v, want %v", in, got, want)
		}
		if got, want := ValidHarness(in), harnessRE.MatchString(in); got != want {
			t.Errorf("ValidHarness(%q) = %v, want %v", in, got, want)
		}
	}
}
