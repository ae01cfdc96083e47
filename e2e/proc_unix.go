//go:build unix

package e2e

import (
	"os/exec"
	"syscall"
)

// setProcessGroup makes cmd the leader of a process group of its own.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killProcessGroup kills cmd's whole process group (cmd has started).
func killProcessGroup(cmd *exec.Cmd) error {
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// processExists reports whether a process with this pid exists (a zombie
// counts).
func processExists(pid int) bool { return syscall.Kill(pid, 0) == nil }
