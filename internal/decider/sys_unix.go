//go:build unix

package decider

import (
	"os"
	"syscall"
)

func setUmask(m int) int { return syscall.Umask(m) }

func ownedByMe(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return !ok || int(st.Uid) == os.Getuid()
}
