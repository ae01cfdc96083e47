package backend

import (
	"fmt"
	"time"

	"github.com/statewright-go/statewright/store"
)

// TxBase is the bookkeeping every backend's store.Tx keeps: the session,
// the clock read once, the live run as last read or written, the run that
// events and calls default to, and whether the transaction is over.
// Backends embed it and implement Call, Put, Append and Record.
type TxBase struct {
	Key   string
	At    time.Time
	Live  *store.Run // the live run as last read or written
	RunID string     // the run events and calls default to
	Done  bool
}

// SessionKey implements store.Tx.
func (t *TxBase) SessionKey() string { return t.Key }

// Now implements store.Tx.
func (t *TxBase) Now() time.Time { return t.At }

// Run implements store.Tx.
func (t *TxBase) Run() *store.Run { return t.Live.Clone() }

// Begin sets the live run the transaction read (nil for none).
func (t *TxBase) Begin(live *store.Run) {
	t.Live = live
	if live != nil {
		t.RunID = live.ID
	}
}

// Use refuses op once the transaction is over.
func (t *TxBase) Use(op string) error {
	if t.Done {
		return fmt.Errorf("store: %s: %w: transaction is over", op, store.ErrInvalid)
	}
	return nil
}

// Wrote records that r was written: later events and calls default to
// it, and it is the live run if it is live (and no longer if it ended).
func (t *TxBase) Wrote(r *store.Run) {
	t.RunID = r.ID
	switch {
	case r.Status.Live():
		t.Live = r.Clone()
	case t.Live != nil && t.Live.ID == r.ID:
		t.Live = nil
	}
}

// SameWorkflow reports whether r, about to be written, carries the live
// run's workflow unchanged: then the backend leaves the snapshot (and its
// digest) as stored. The snapshot is compared by identity, not content: a
// run handed out by Run shares its snapshot's bytes, and a caller that
// changes the workflow sets a new slice.
func (t *TxBase) SameWorkflow(r *store.Run) bool {
	l := t.Live
	if l == nil || l.ID != r.ID || l.WorkflowID != r.WorkflowID || l.WorkflowSource != r.WorkflowSource ||
		len(l.Snapshot) != len(r.Snapshot) {
		return false
	}
	return len(r.Snapshot) == 0 || &l.Snapshot[0] == &r.Snapshot[0]
}
