package doctorcmd

import (
	"strings"
	"testing"

	"github.com/statewright-go/statewright/sandbox"
)

// TestHookSandboxFinding: doctor's sandbox line says what the install
// really does. Cursor's hooks cannot route a shell command through the
// sandbox, so for Cursor --sandbox is reported as doing nothing (not as
// "every Bash call runs under the phase's OS sandbox"), and the advice is
// --require-sandbox, never `init cursor --sandbox`.
func TestHookSandboxFinding(t *testing.T) {
	bw := sandbox.Availability{Bwrap: "/usr/bin/bwrap"}
	none := sandbox.Availability{Why: "bubblewrap (bwrap) is not installed"}
	tests := []struct {
		name          string
		a             sandbox.Availability
		harness       string
		require, on   bool
		level         string
		want, wantNot []string
	}{
		{"claude default", bw, "claude-code", false, false, "warn", []string{"statewright init claude-code --sandbox"}, nil},
		{"claude sandbox", bw, "claude-code", false, true, "ok", []string{"every Bash call runs under"}, nil},
		{"claude require", bw, "claude-code", true, false, "ok", []string{"every Bash call runs under"}, nil},
		{"claude none", none, "claude-code", false, true, "warn", []string{"no OS sandbox is available"}, nil},
		{"claude none require", none, "claude-code", true, false, "ok", []string{"denies every shell call"}, nil},
		{"cursor default", bw, "cursor", false, false, "warn", []string{"cannot rewrite a command", "--require-sandbox"}, []string{"init cursor --sandbox", "every Bash call runs under"}},
		{"cursor sandbox", bw, "cursor", false, true, "warn", []string{"--sandbox changes nothing", "run unsandboxed"}, []string{"every Bash call runs under"}},
		{"cursor require", bw, "cursor", true, false, "ok", []string{"--require-sandbox denies every shell call", "cannot rewrite"}, []string{"every Bash call runs under"}},
		{"cursor none", none, "cursor", false, false, "warn", []string{"no OS sandbox is available"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			level, msg := hookSandboxFinding(tt.a, tt.harness, tt.require, tt.on)
			if level != tt.level {
				t.Errorf("level %q, want %q (%s)", level, tt.level, msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q lacks %q", msg, w)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(msg, w) {
					t.Errorf("%q says %q", msg, w)
				}
			}
		})
	}
}
