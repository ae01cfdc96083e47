//go:build unix && !linux

package main

import (
	"os"
	"syscall"
)

func dupStdin(f *os.File) error {
	defer f.Close()
	return syscall.Dup2(int(f.Fd()), 0)
}

func closeInherited() {}
