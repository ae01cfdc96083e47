//go:build !unix

package tools

import "os/exec"

// setProcessGroup does nothing where there are no process groups: the agent
// runner's commands need bash and are supported on unix only (this file
// keeps the package compiling for Windows).
func setProcessGroup(*exec.Cmd) {}

// killProcessGroup kills cmd alone (cmd has started).
func killProcessGroup(cmd *exec.Cmd) {
	_ = cmd.Process.Kill()
}
