//go:build !unix

package e2e

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// setProcessGroup does nothing where there are no process groups; the
// end-to-end tests run on unix only (this file keeps the package compiling).
func setProcessGroup(*exec.Cmd) {}

// killProcessGroup kills cmd alone (cmd has started).
func killProcessGroup(cmd *exec.Cmd) error { return cmd.Process.Kill() }

// processExists is not known here: it reports false.
func processExists(int) bool { return false }

// signalGroup kills pid alone: there are no process groups or signals here.
func signalGroup(pid int, _ syscall.Signal) error { return killPid(pid) }

// killPid kills the process pid.
func killPid(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

// mkfifo fails: there are no named pipes here.
func mkfifo(string) error { return errors.ErrUnsupported }
