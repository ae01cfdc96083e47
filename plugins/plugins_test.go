package plugins

import (
	"bytes"
	"testing"
)

// TestSource checks that every plugin gets the shared code once, with one
// configuration slot, and names its own harness.
func TestSource(t *testing.T) {
	for _, h := range []string{"opencode", "pi"} {
		src, err := Source(h)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"function ask(", "/*STATEWRIGHT_CONFIG*/", `const HARNESS = "` + h + `"`} {
			if n := bytes.Count(src, []byte(want)); n != 1 {
				t.Errorf("%s: %q appears %d times", h, want, n)
			}
		}
		if bytes.Contains(src, commonMarker) {
			t.Errorf("%s: the marker is left in", h)
		}
	}
	if _, err := Source("nonesuch"); err == nil {
		t.Error("a plugin for an unknown harness")
	}
}
