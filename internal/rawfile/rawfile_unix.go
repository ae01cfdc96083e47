//go:build unix

// Package rawfile reads small files with plain system calls (open, read,
// close). os.ReadFile also sets the file non-blocking and tries to
// register it with the runtime's poller: fcntl and epoll calls for every
// file and, in a process that had no poller yet (the thin hook client), an
// epoll instance, an eventfd and a wake-up of another thread. The hot
// paths that read a file per call use this instead: the hook client's key,
// the decider's /proc/PID/stat reads, the sandbox fast path's call files.
package rawfile

import (
	"errors"
	"io/fs"
	"syscall"
)

// Read reads the file at path. Its buffer starts at hint bytes; when
// limit > 0, a file that fills the buffer at limit bytes or more is refused
// ("file too large"). Errors are *fs.PathError, as os.ReadFile's
// (errors.Is(err, fs.ErrNotExist) holds for a missing file).
func Read(path string, limit, hint int) ([]byte, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	b := make([]byte, 0, max(hint, 1))
	for {
		if len(b) == cap(b) {
			if limit > 0 && len(b) >= limit {
				return nil, &fs.PathError{Op: "read", Path: path, Err: errors.New("file too large")}
			}
			b = append(b, 0)[:len(b)]
		}
		n, err := syscall.Read(fd, b[len(b):cap(b)])
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		case n == 0:
			return b, nil
		}
		b = b[:len(b)+n]
	}
}
