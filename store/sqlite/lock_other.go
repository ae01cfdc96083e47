//go:build !unix

package sqlite

import (
	"context"
	"time"
)

// writeLock is a no-op where flock is not available: writers rely on
// SQLite's busy timeout alone.
type writeLock struct{}

func openWriteLock(string) (*writeLock, error)               { return &writeLock{}, nil }
func (*writeLock) lock(context.Context, time.Duration) error { return nil }
func (*writeLock) unlock()                                   {}
func (*writeLock) close() error                              { return nil }
