//go:build unix

package tools

import (
	"os/exec"
	"syscall"
)

// setProcessGroup makes cmd the leader of a process group of its own, so
// killProcessGroup reaches everything it starts.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killProcessGroup kills cmd's whole process group (cmd has started).
func killProcessGroup(cmd *exec.Cmd) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
