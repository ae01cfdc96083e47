//go:build !unix

package e2e

import "os/exec"

// setProcessGroup does nothing where there are no process groups; the
// end-to-end tests run on unix only (this file keeps the package compiling).
func setProcessGroup(*exec.Cmd) {}

// killProcessGroup kills cmd alone (cmd has started).
func killProcessGroup(cmd *exec.Cmd) error { return cmd.Process.Kill() }

// processExists is not known here: it reports false.
func processExists(int) bool { return false }
