//go:build unix

package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/statewright-go/statewright/store"
)

// TestLockReportsTheCallersReason: a writer that waited on the lock file
// until both its lock wait and its caller's context ran out reports the
// context's error, whatever order its goroutine saw them in (on a loaded
// machine it may wake only after both), and ErrBusy when only the wait ran
// out.
func TestLockReportsTheCallersReason(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	holder, err := openWriteLock(path)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.close()
	if err := holder.lock(bg, 0); err != nil {
		t.Fatal(err)
	}
	defer holder.unlock()
	waiter, err := openWriteLock(path)
	if err != nil {
		t.Fatal(err)
	}
	defer waiter.close()
	ctx, cancel := context.WithCancel(bg)
	cancel()
	if err := waiter.lock(ctx, 0); !errors.Is(err, context.Canceled) || errors.Is(err, store.ErrBusy) {
		t.Errorf("lock with its wait and its context both over: %v, want context.Canceled", err)
	}
	if err := waiter.lock(bg, 0); !errors.Is(err, store.ErrBusy) {
		t.Errorf("lock with its wait over: %v, want ErrBusy", err)
	}
}
