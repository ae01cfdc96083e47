//go:build unix

package sandbox

import (
	"os/exec"
	"testing"
)

// TestExitStatus: the shell's exit status of a finished command, and no
// status for one that never ran.
func TestExitStatus(t *testing.T) {
	for _, tt := range []struct {
		name   string
		cmd    *exec.Cmd
		code   int
		exited bool
	}{
		{"success", exec.Command("sh", "-c", "exit 0"), 0, true},
		{"exit code", exec.Command("sh", "-c", "exit 3"), 3, true},
		{"killed by SIGTERM", exec.Command("sh", "-c", "kill -TERM $$"), 143, true},
		{"never ran", exec.Command("/nonexistent/statewright-test-binary"), 0, false},
	} {
		code, ok := ExitStatus(tt.cmd.Run())
		if code != tt.code || ok != tt.exited {
			t.Errorf("%s: ExitStatus = %d, %v; want %d, %v", tt.name, code, ok, tt.code, tt.exited)
		}
	}
}
