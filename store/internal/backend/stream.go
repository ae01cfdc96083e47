package backend

import (
	"context"
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
// checks that each ends at its stored head, and, with cp, the log against
// that checkpoint: a backend's VerifyChain and VerifyAgainst.
func VerifyStream(each EventStream, cp *store.Checkpoint) (store.ChainStatus, error) {
	return verifyStream(each, cp, false)
}

// VerifyBeforeCheckpoint verifies the log against st's newest checkpoint
// before a new one is signed, so that a checkpoint never vouches for a log
// rewritten since the last one; prunedSince accepts a prune the signer
// itself made since.
func VerifyBeforeCheckpoint(ctx context.Context, st store.Store, each EventStream, prunedSince bool) error {
	cps, err := st.Checkpoints(ctx)
	if err != nil {
		return err
	}
	var prev *store.Checkpoint
	if len(cps) > 0 {
		prev = &cps[len(cps)-1]
	}
	_, err = verifyStream(each, prev, prunedSince)
	if err != nil {
		return fmt.Errorf("store: checkpoint: refusing to sign a log that does not verify: %w", err)
	}
	return nil
}

func verifyStream(each EventStream, cp *store.Checkpoint, prunedSince bool) (store.ChainStatus, error) {
	var (
		v     *store.ChainVerifier
		heads []store.Head
	)
	err := each(func(s LogStart) {
		v = store.NewChainVerifier(s.Heads, s.LastPrunedSeq, s.LastPrunedHash)
		v.Cover(cp)
		v.PrunedSince = prunedSince
		heads = s.Heads
	}, func(e *store.Event) error { return v.Next(e) })
	if v == nil {
		return store.ChainStatus{}, err
	}
	if err == nil {
		err = v.CheckHeads(heads)
	}
	if err == nil {
		err = v.CheckCover()
	}
	if err != nil {
		return v.Status(), fmt.Errorf("store: verify: %w", err)
	}
	return v.Status(), nil
}
