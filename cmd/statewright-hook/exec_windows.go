package main

import (
	"bytes"
	"os"
	"os/exec"
)

// execFull runs the full binary with the same arguments and input, and
// exits with its exit code (Windows has no exec).
func execFull(bin string, args []string, input []byte, withInput bool) {
	cmd := exec.Command(bin, args...)
	cmd.Stdin = os.Stdin
	if withInput {
		cmd.Stdin = bytes.NewReader(input)
	}
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		os.Exit(ee.ExitCode())
	}
	if err != nil {
		os.Stderr.WriteString("statewright: cannot run " + bin + ": " + err.Error() + "\n")
		os.Exit(127)
	}
	os.Exit(0)
}
