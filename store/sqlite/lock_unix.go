//go:build unix

package sqlite

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"syscall"
	"time"

	"github.com/statewright-go/statewright/store"
)

// writeLock is an advisory lock on a sidecar file (<store>.lock) that
// statewright writers take before BEGIN IMMEDIATE. SQLite's own busy
// handler sleeps in steps that grow to 100 ms, so under heavy contention
// (many hook processes at once on two cores) a waiter can sleep through
// every release and starve past the busy timeout. Polling a flock with
// sub-millisecond to 2 ms steps keeps the queue moving; SQLite's busy
// timeout remains the safety net against writers that do not take this
// lock (an older binary, the sqlite3 shell).
type writeLock struct{ f *os.File }

func openWriteLock(dbPath string) (*writeLock, error) {
	f, err := os.OpenFile(dbPath+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: open lock file: %w", err)
	}
	return &writeLock{f: f}, nil
}

func (l *writeLock) lock(ctx context.Context, timeout time.Duration) error {
	fd := int(l.f.Fd())
	deadline := time.Now().Add(timeout)
	wait := 50 * time.Microsecond
	for {
		err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			return fmt.Errorf("store: lock: %w", err)
		}
		left := time.Until(deadline)
		if left <= 0 {
			if err := ctx.Err(); err != nil {
				// Both ran out: the caller's context first, unless this
				// goroutine was not scheduled between the two (a
				// loaded machine). The caller's reason wins either way:
				// it is the one the caller can act on.
				return fmt.Errorf("store: lock: %w", err)
			}
			return fmt.Errorf("store: lock: %w: other writers held the store for %v", store.ErrBusy, timeout)
		}
		d := wait/2 + rand.N(wait) // jitter: waiters do not wake in lockstep
		if d > left {
			d = left
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("store: lock: %w", ctx.Err())
		case <-t.C:
		}
		if wait < 2*time.Millisecond {
			wait *= 2
		}
	}
}

func (l *writeLock) unlock() {
	syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
}

func (l *writeLock) close() error { return l.f.Close() }
