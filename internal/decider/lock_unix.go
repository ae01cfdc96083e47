//go:build unix

package decider

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/statewright-go/statewright/internal/hookwire"
)

// lock takes the decider's lock (a POSIX record lock, which the kernel
// releases when its holder dies). When another process holds it: a
// healthy decider of the same binary makes this one stand down
// (ErrRunning); a stale one (an older binary) is asked to quit; one that
// does not answer (hung, or not a decider at all) is killed when it is a
// decider process, else waited for.
func (d *Decider) lock(ctx context.Context) (*os.File, error) {
	f, err := os.OpenFile(d.paths.Lock, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("decider: %w", err)
	}
	give := time.Now().Add(5 * time.Second)
	var quiet time.Time // since when the holder has not answered
	for {
		lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0}
		err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lk)
		if err == nil {
			return f, nil
		}
		if err != syscall.EAGAIN && err != syscall.EACCES {
			f.Close()
			return nil, fmt.Errorf("decider: lock %s: %w", d.paths.Lock, err)
		}
		q := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0}
		holder := 0
		if syscall.FcntlFlock(f.Fd(), syscall.F_GETLK, &q) == nil && q.Type != syscall.F_UNLCK {
			holder = int(q.Pid)
		}
		switch d.probe() {
		case probeHealthy:
			f.Close()
			return nil, ErrRunning
		case probeStale:
			d.log.Printf("asked the stale decider (pid %d) to quit", holder)
		default:
			if quiet.IsZero() {
				quiet = time.Now()
			} else if time.Since(quiet) > time.Second && holder > 0 && isDecider(holder) {
				d.log.Printf("killing the unresponsive decider (pid %d)", holder)
				syscall.Kill(holder, syscall.SIGKILL)
			}
		}
		if time.Now().After(give) {
			f.Close()
			return nil, fmt.Errorf("decider: process %d holds the lock %s and does not answer as a decider", holder, d.paths.Lock)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

type probeResult int

const (
	probeNone probeResult = iota
	probeHealthy
	probeStale
)

// probe greets the decider at the socket: healthy (same binary and
// protocol, holds the key), stale (asked to quit), or none of these.
func (d *Decider) probe() probeResult {
	c, err := hookwire.Dial(d.paths.Socket, 500*time.Millisecond)
	if err != nil {
		return probeNone
	}
	defer c.Close()
	s, _, err := hookwire.Handshake(c, d.key, &d.id)
	switch {
	case err == nil:
		return probeHealthy
	case errors.Is(err, hookwire.ErrStale):
		s.Send(&hookwire.Request{Op: hookwire.OpQuit})
		s.Receive()
		return probeStale
	}
	return probeNone
}

// isDecider reports whether pid runs `statewright decider serve` (of any
// binary) as this user: only such a process is killed.
func isDecider(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false
	}
	argv := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	return len(argv) >= 3 && argv[1] == "decider" && argv[2] == "serve"
}
