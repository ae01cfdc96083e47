//go:build unix

package main

import (
	"os"
	"syscall"
)

// execFull replaces this process with the full binary: same arguments
// (args, after the program name), same environment. With withInput its
// standard input is input, which this process has read already.
func execFull(bin string, args []string, input []byte, withInput bool) {
	if withInput {
		if err := stdinFrom(input); err != nil {
			os.Stderr.WriteString("statewright: the hook could not hand its input on: " + err.Error() + "\n")
			os.Exit(127)
		}
	}
	err := syscall.Exec(bin, append([]string{bin}, args...), os.Environ())
	// The gate's wrapper turns 127 into a deny, as for a missing binary.
	os.Stderr.WriteString("statewright: cannot run " + bin + ": " + err.Error() + "\n")
	os.Exit(127)
}

// stdinFrom makes input the standard input: a pipe that holds it when it
// fits, else an unlinked temporary file.
func stdinFrom(input []byte) error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	if err := syscall.SetNonblock(int(w.Fd()), true); err == nil {
		n, err := syscall.Write(int(w.Fd()), input)
		if err == nil && n == len(input) {
			w.Close()
			return dupStdin(r)
		}
	}
	r.Close()
	w.Close()
	f, err := os.CreateTemp("", "statewright-hook-*")
	if err != nil {
		return err
	}
	os.Remove(f.Name())
	if _, err := f.Write(input); err != nil {
		return err
	}
	if _, err := f.Seek(0, 0); err != nil {
		return err
	}
	return dupStdin(f)
}
