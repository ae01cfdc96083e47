package backend

import (
	"fmt"
	"io"

	"github.com/statewright-go/statewright/store"
)

// EventStream streams a store's whole event log in Seq order from one
// snapshot: it calls start once with the prune anchor, then fn for each
// event, stopping at fn's first error.
type EventStream func(start func(anchorSeq int64, anchorHash string), fn func(e *store.Event) error) error

// ExportStream writes each event of the stream as one JSON line: a
// backend's ExportJSONL.
func ExportStream(w io.Writer, each EventStream) error {
	return each(func(int64, string) {}, func(e *store.Event) error { return store.WriteEventJSONL(w, e) })
}

// VerifyStream verifies the stream's chain from its anchor: a backend's
// VerifyChain.
func VerifyStream(each EventStream) (store.ChainStatus, error) {
	var v *store.ChainVerifier
	err := each(func(seq int64, hash string) { v = store.NewChainVerifier(seq, hash) }, func(e *store.Event) error { return v.Next(e) })
	if v == nil {
		return store.ChainStatus{}, err
	}
	if err != nil {
		return v.Status(), fmt.Errorf("store: verify: %w", err)
	}
	return v.Status(), nil
}
