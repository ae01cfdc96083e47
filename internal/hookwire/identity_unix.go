//go:build unix

package hookwire

import (
	"os"
	"syscall"
)

// StatIdentity identifies the file at path (following links).
func StatIdentity(path string) (Identity, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Identity{}, err
	}
	id := Identity{Size: uint64(fi.Size()), Mtime: uint64(fi.ModTime().UnixNano())}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id.Dev, id.Ino = uint64(st.Dev), uint64(st.Ino)
	}
	return id, nil
}
