package backend

import (
	"fmt"
	"io"

	"github.com/statewright-go/statewright/store"
)

// LogStart is what a backend knows before it streams its log: the heads it
// keeps for every chain (their anchors are where verification starts; the
// heads are where each chain must end) and the last event pruned from the
// whole log.
type LogStart struct {
	Heads          []store.Head
	LastPrunedSeq  int64
	LastPrunedHash string
}

// EventStream streams a store's whole event log in Seq order from one
// snapshot: it calls start once, then fn for each event, stopping at fn's
// first error.
type EventStream func(start func(LogStart), fn func(e *store.Event) error) error

// ExportStream writes each event of the stream as one JSON line: a
// backend's ExportJSONL.
func ExportStream(w io.Writer, each EventStream) error {
	return each(func(LogStart) {}, func(e *store.Event) error { return store.WriteEventJSONL(w, e) })
}

// VerifyStream verifies every chain of the stream from its anchor and
// checks that each ends at its stored head: a backend's VerifyChain.
func VerifyStream(each EventStream) (store.ChainStatus, error) {
	var (
		v     *store.ChainVerifier
		heads []store.Head
	)
	err := each(func(s LogStart) {
		v = store.NewChainVerifier(s.Heads, s.LastPrunedSeq, s.LastPrunedHash)
		heads = s.Heads
	}, func(e *store.Event) error { return v.Next(e) })
	if v == nil {
		return store.ChainStatus{}, err
	}
	if err == nil {
		err = v.CheckHeads(heads)
	}
	if err != nil {
		return v.Status(), fmt.Errorf("store: verify: %w", err)
	}
	return v.Status(), nil
}
