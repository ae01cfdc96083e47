package backend

import (
	"fmt"
	"slices"
	"sync"
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
	Ended *store.Run // the session's newest run when none is live (Tx.Last)
	RunID string     // the run events and calls default to
	Done  bool
	runs  []string // runs read or written: the ones events may name
}

// SessionKey implements store.Tx.
func (t *TxBase) SessionKey() string { return t.Key }

// Now implements store.Tx.
func (t *TxBase) Now() time.Time { return t.At }

// Run implements store.Tx.
func (t *TxBase) Run() *store.Run { return t.Live.Clone() }

// Last implements store.Tx.
func (t *TxBase) Last() *store.Run {
	if t.Live != nil {
		return nil
	}
	return t.Ended.Clone()
}

// Begin sets the live run the transaction read (nil for none).
func (t *TxBase) Begin(live *store.Run) {
	t.Live = live
	if live != nil {
		t.RunID = live.ID
		t.runs = append(t.runs, live.ID)
	}
}

// BeginEnded sets the session's newest run, read when none is live.
func (t *TxBase) BeginEnded(last *store.Run) {
	t.Ended = last
	if last != nil {
		t.runs = append(t.runs, last.ID)
	}
}

// PrepareAppend validates e for Tx.Append, fills its defaults (see
// PrepareEvent) and its Chain: an event may name only the transaction's
// session and a run the transaction read or wrote.
func (t *TxBase) PrepareAppend(e *store.Event) error {
	if err := PrepareEvent(e, t.RunID, t.Key, t.At); err != nil {
		return err
	}
	if e.SessionKey != t.Key {
		return fmt.Errorf("store: append: %w: event of session %q in a transaction on %q", store.ErrInvalid, e.SessionKey, t.Key)
	}
	if e.RunID != "" && !slices.Contains(t.runs, e.RunID) {
		return fmt.Errorf("store: append: %w: event of run %s, which this transaction did not read or write", store.ErrInvalid, e.RunID)
	}
	e.Chain = store.ChainOf(e.RunID, e.SessionKey)
	return nil
}

// Link places e after head in its chain (ChainSeq, PrevHash, Hash) and
// returns the chain's new head. e is as PrepareAppend left it: its Data is
// compacted already, and hashed as it is.
func Link(e *store.Event, head store.Head) store.Head {
	e.ChainSeq = head.Seq + 1
	e.PrevHash = head.Hash
	e.Hash = store.HashCompacted(e)
	head.Chain, head.Seq, head.Hash = e.Chain, e.ChainSeq, e.Hash
	return head
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
	if !slices.Contains(t.runs, r.ID) {
		t.runs = append(t.runs, r.ID)
	}
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

// Snapshots caches workflow snapshots by digest, so that a transaction
// reads a run without its snapshot and takes the snapshot from here: a
// snapshot never changes under its digest, and reading it again on every
// decision would copy the whole workflow each time.
type Snapshots struct {
	mu sync.Mutex
	m  map[string][]byte
}

// maxSnapshots bounds the cache; it starts over when full.
const maxSnapshots = 256

// Get returns the snapshot with this digest, if cached.
func (c *Snapshots) Get(digest string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.m[digest]
	return b, ok
}

// Put caches a snapshot under its digest.
func (c *Snapshots) Put(digest string, b []byte) {
	if digest == "" || len(b) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxSnapshots {
		c.m = map[string][]byte{}
	}
	c.m[digest] = b
}
