package main

import (
	"os"
	"syscall"
)

func dupStdin(f *os.File) error {
	defer f.Close()
	return syscall.Dup3(int(f.Fd()), 0, 0)
}

// closeInherited marks every descriptor above the standard three
// close-on-exec (close_range(2), Linux 5.11), so that the decider keeps
// nothing of the harness's (a pipe it waits on) open.
func closeInherited() {
	const sysCloseRange, closeRangeCloexec = 436, 4
	syscall.Syscall(sysCloseRange, 3, ^uintptr(0), closeRangeCloexec)
}
