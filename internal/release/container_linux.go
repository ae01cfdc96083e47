package release

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// terminateDescendant sends SIGTERM to the process below ancestor whose
// executable is exe (as that process sees it: a path inside its mount
// namespace).
func terminateDescendant(ancestor int, exe string) error {
	pid, err := descendantRunning(ancestor, exe)
	if err != nil {
		return err
	}
	return syscall.Kill(pid, syscall.SIGTERM)
}

// descendantRunning finds the process below ancestor whose executable is
// exe, from /proc.
func descendantRunning(ancestor int, exe string) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	parent := func(pid int) int {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return 0
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		rest := b[bytes.LastIndexByte(b, ')')+1:]
		var state string
		var ppid int
		fmt.Sscan(string(rest), &state, &ppid)
		return ppid
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if target, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err != nil || target != exe {
			continue
		}
		for p := parent(pid); p > 1; p = parent(p) {
			if p == ancestor {
				return pid, nil
			}
		}
	}
	return 0, fmt.Errorf("no process of %s runs under pid %d", exe, ancestor)
}
