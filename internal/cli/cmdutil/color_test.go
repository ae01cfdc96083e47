package cmdutil

import (
	"bytes"
	"testing"
)

func TestColorOn(t *testing.T) {
	for _, tt := range []struct {
		terminal      bool
		noColor, term string
		want          bool
	}{
		{true, "", "xterm-256color", true},
		{true, "1", "xterm-256color", false},
		{true, "0", "xterm", false}, // any non-empty value
		{true, "", "dumb", false},
		{false, "", "xterm", false},
	} {
		env := map[string]string{"NO_COLOR": tt.noColor, "TERM": tt.term}
		if got := colorOn(tt.terminal, func(k string) string { return env[k] }); got != tt.want {
			t.Errorf("colorOn(terminal %v, NO_COLOR %q, TERM %q) = %v, want %v", tt.terminal, tt.noColor, tt.term, got, tt.want)
		}
	}
	if on, off := (Colors{on: true}).Red("deny"), (Colors{}).Red("deny"); on != "\x1b[31mdeny\x1b[0m" || off != "deny" {
		t.Errorf("Red: on %q, off %q", on, off)
	}
	if ColorsFor(&bytes.Buffer{}).on {
		t.Error("a buffer is no terminal, yet colours are on")
	}
}
