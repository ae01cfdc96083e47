package sandbox

import (
	"os"
	"syscall"

	"github.com/statewright-go/statewright/internal/rawfile"
)

// readSmall reads a small regular file with plain system calls (rawfile):
// on the fast path's keeper, once per file and per command, os.ReadFile's
// poller calls were more system calls than the reads themselves
// (docs/sandbox.md, "The fast path", cost). A file that grows to
// maxRequest bytes is refused.
func readSmall(path string) ([]byte, error) { return rawfile.Read(path, maxRequest, 4096) }

// writeSmall writes data to path (created with perm, or truncated) with
// plain system calls (readSmall).
func writeSmall(path string, data []byte, perm uint32) error {
	fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_TRUNC|syscall.O_CLOEXEC, perm)
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	for len(data) > 0 {
		n, err := syscall.Write(fd, data)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			syscall.Close(fd)
			return &os.PathError{Op: "write", Path: path, Err: err}
		}
		data = data[n:]
	}
	if err := syscall.Close(fd); err != nil {
		return &os.PathError{Op: "close", Path: path, Err: err}
	}
	return nil
}
