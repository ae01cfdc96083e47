//go:build unix

package person

import (
	"io/fs"
	"syscall"
)

// readStat reads a /proc stat file with plain system calls (open, read,
// close): os.ReadFile adds an fstat, a second read and, for every file,
// a round of fcntl and epoll calls to try the runtime's poller. The local
// decider reads a few of these for every hook (RegisterHarnessOf).
func readStat(path string) ([]byte, error) {
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
	// A stat line is well under 1 KiB (a 64-byte name and 50 numbers);
	// a full buffer is read on until the end all the same.
	b := make([]byte, 0, 1024)
	for {
		if len(b) == cap(b) {
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
