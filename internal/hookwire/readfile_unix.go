//go:build unix

package hookwire

import (
	"errors"
	"io/fs"
	"syscall"
)

// readSmall reads the file at path, of at most max bytes, with plain
// system calls: os.ReadFile would also set the file non-blocking and try
// to register it with the runtime's poller (which, for the thin client,
// starts the poller: an epoll instance, an eventfd and their calls).
// Errors wrap fs errors like os.ReadFile's (errors.Is(err,
// fs.ErrNotExist) holds for a missing file).
func readSmall(path string, max int) ([]byte, error) {
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
	b := make([]byte, 0, 128)
	for {
		if len(b) == cap(b) {
			if len(b) > max {
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
