//go:build unix

package hookwire

import (
	"errors"
	"io"
	"syscall"
	"time"
)

// Conn is a client's unix-socket connection made with plain system calls
// (the net package's start-up and poller are more than the thin client
// needs). Reads and writes block for at most the timeout last set.
type Conn struct{ fd int }

// ErrTimeout is returned by a read or write that ran out of time.
var ErrTimeout = errors.New("hookwire: timed out")

// Dial connects to the unix socket at path, waiting at most timeout.
func Dial(path string, timeout time.Duration) (*Conn, error) {
	fd, err := socket()
	if err != nil {
		return nil, err
	}
	c := &Conn{fd: fd}
	if err := c.SetTimeout(timeout); err != nil {
		c.Close()
		return nil, err
	}
	for {
		err = syscall.Connect(fd, &syscall.SockaddrUnix{Name: path})
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		c.Close()
		if err == syscall.EAGAIN || err == syscall.EINPROGRESS {
			return nil, ErrTimeout
		}
		return nil, wrap("connect", err)
	}
	return c, nil
}

// SetTimeout bounds each later read and write by d.
func (c *Conn) SetTimeout(d time.Duration) error {
	if d <= 0 {
		d = time.Millisecond
	}
	tv := syscall.NsecToTimeval(d.Nanoseconds())
	if err := syscall.SetsockoptTimeval(c.fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv); err != nil {
		return err
	}
	return syscall.SetsockoptTimeval(c.fd, syscall.SOL_SOCKET, syscall.SO_SNDTIMEO, &tv)
}

// SetReadTimeout bounds each later read by d (writes keep their timeout).
func (c *Conn) SetReadTimeout(d time.Duration) error {
	if d <= 0 {
		d = time.Millisecond
	}
	tv := syscall.NsecToTimeval(d.Nanoseconds())
	return syscall.SetsockoptTimeval(c.fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv)
}

// SetWriteTimeout bounds each later write by d (reads keep their timeout).
func (c *Conn) SetWriteTimeout(d time.Duration) error {
	if d <= 0 {
		d = time.Millisecond
	}
	tv := syscall.NsecToTimeval(d.Nanoseconds())
	return syscall.SetsockoptTimeval(c.fd, syscall.SOL_SOCKET, syscall.SO_SNDTIMEO, &tv)
}

func (c *Conn) Read(p []byte) (int, error) {
	for {
		n, err := syscall.Read(c.fd, p)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return 0, ErrTimeout
		case err != nil:
			return 0, wrap("read", err)
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (c *Conn) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		n, err := syscall.Write(c.fd, p[done:])
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return done, ErrTimeout
		case err != nil:
			return done, wrap("write", err)
		}
		done += n
	}
	return done, nil
}

// Close closes the connection.
func (c *Conn) Close() error { return syscall.Close(c.fd) }

func wrap(op string, err error) error { return &opError{op, err} }

type opError struct {
	op  string
	err error
}

func (e *opError) Error() string { return "hookwire: " + e.op + ": " + e.err.Error() }
func (e *opError) Unwrap() error { return e.err }
