//go:build unix

package runtime

import (
	"os"
	"syscall"
)

// linkCount is the number of hard links to the file fi describes (0 when
// unknown).
func linkCount(fi os.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Nlink)
	}
	return 0
}

// writableDir reports whether this process (the agent runs as the same
// user) could create or replace entries in dir.
func writableDir(dir string) bool {
	return syscall.Access(dir, 2 /* W_OK */) == nil
}
