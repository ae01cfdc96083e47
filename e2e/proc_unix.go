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

// signalGroup sends sig to the process group that pid leads.
func signalGroup(pid int, sig syscall.Signal) error { return syscall.Kill(-pid, sig) }

// killPid kills the process pid.
func killPid(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }

// processExists reports whether a process with this pid exists (a zombie
// counts).
func processExists(pid int) bool { return syscall.Kill(pid, 0) == nil }

// mkfifo makes a named pipe at path.
func mkfifo(path string) error { return syscall.Mkfifo(path, 0o600) }
