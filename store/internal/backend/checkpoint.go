package backend

import (
	"encoding/json"
	"fmt"

	"github.com/statewright-go/statewright/store"
)

// CheckpointColumnList lists a checkpoint's columns, in the order
// ScanCheckpoint reads them and CheckpointArgs gives them.
const CheckpointColumnList = `seq, time, heads_hash, chains, prev_hash, key_id, public_key, next_key_id, next_public_key,
	hash, signature, heads`

// ScanHead reads a head selected as chain, seq, hash, anchor_seq, anchor_hash.
func ScanHead(sc Scanner) (store.Head, error) {
	var h store.Head
	err := sc.Scan(&h.Chain, &h.Seq, &h.Hash, &h.AnchorSeq, &h.AnchorHash)
	return h, err
}

// ScanCheckpoint reads a checkpoint selected with CheckpointColumnList.
func ScanCheckpoint(sc Scanner) (*store.Checkpoint, error) {
	var (
		c     store.Checkpoint
		t     int64
		heads []byte
	)
	if err := sc.Scan(&c.Seq, &t, &c.HeadsHash, &c.Chains, &c.PrevHash, &c.KeyID, &c.PublicKey, &c.NextKeyID,
		&c.NextPublicKey, &c.Hash, &c.Signature, &heads); err != nil {
		return nil, err
	}
	c.Time = FromNanos(t)
	if len(heads) > 0 {
		if err := json.Unmarshal(heads, &c.Heads); err != nil {
			return nil, fmt.Errorf("%w: checkpoint %d heads: %v", store.ErrCorrupt, c.Seq, err)
		}
		if c.Heads == nil {
			c.Heads = []store.Head{}
		}
	}
	return &c, nil
}

// ScanCheckpointValue is ScanCheckpoint for Collect.
func ScanCheckpointValue(sc Scanner) (store.Checkpoint, error) {
	c, err := ScanCheckpoint(sc)
	if err != nil {
		return store.Checkpoint{}, err
	}
	return *c, nil
}

// CheckpointArgs encodes c's columns in CheckpointColumnList order.
func CheckpointArgs(c *store.Checkpoint) ([]any, error) {
	heads := c.Heads
	if heads == nil {
		heads = []store.Head{}
	}
	b, err := json.Marshal(heads)
	if err != nil {
		return nil, fmt.Errorf("store: checkpoint: %w", err)
	}
	return []any{c.Seq, c.Time.UnixNano(), c.HeadsHash, c.Chains, c.PrevHash, c.KeyID, c.PublicKey, c.NextKeyID,
		c.NextPublicKey, c.Hash, c.Signature, string(b)}, nil
}
