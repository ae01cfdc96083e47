package store

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"time"
)

// VerifyCheckpoints checks the checkpoints' own chain, oldest first: each
// follows the one before it (Seq, PrevHash), and each is signed by a key
// the verifier trusts: one of trusted, or a next key that a trusted key
// announced in an earlier checkpoint (a rotation). It returns the newest
// checkpoint (nil when there is none); the error wraps ErrCheckpoint and
// names the first bad checkpoint.
func VerifyCheckpoints(cps []Checkpoint, trusted []ed25519.PublicKey) (*Checkpoint, error) {
	keys := make(map[string]ed25519.PublicKey, len(trusted))
	for _, k := range trusted {
		keys[KeyID(k)] = k
	}
	return verifyCheckpoints(cps, keys, true)
}

// verifyCheckpoints is VerifyCheckpoints on a trust map it extends with
// announced keys; fromFirst requires the chain to start at checkpoint 1.
func verifyCheckpoints(cps []Checkpoint, keys map[string]ed25519.PublicKey, fromFirst bool) (*Checkpoint, error) {
	var prev *Checkpoint
	for i := range cps {
		c := &cps[i]
		switch {
		case prev == nil && fromFirst && (c.Seq != 1 || c.PrevHash != ""):
			// The first checkpoints were removed: what they covered can no
			// longer be told apart from a rewrite.
			return nil, fmt.Errorf("%w: the oldest checkpoint is %d, not 1 (checkpoints were removed)", ErrCheckpoint, c.Seq)
		case prev != nil && (c.Seq != prev.Seq+1 || c.PrevHash != prev.Hash):
			return nil, fmt.Errorf("%w: checkpoint %d does not follow checkpoint %d", ErrCheckpoint, c.Seq, prev.Seq)
		}
		k, ok := keys[c.KeyID]
		if !ok {
			return nil, fmt.Errorf("%w: checkpoint %d is signed by key %s, which is not trusted", ErrCheckpoint, c.Seq, c.KeyID)
		}
		if err := c.Verify(k); err != nil {
			return nil, err
		}
		if c.NextPublicKey != "" {
			b, err := hex.DecodeString(c.NextPublicKey)
			if err != nil || len(b) != ed25519.PublicKeySize || KeyID(b) != c.NextKeyID {
				return nil, fmt.Errorf("%w: checkpoint %d announces a next key that is not one", ErrCheckpoint, c.Seq)
			}
			keys[c.NextKeyID] = b
		}
		prev = c
	}
	return prev, nil
}

// Verdict is what Audit found.
type Verdict struct {
	// Chain is the verified log; Chain.Checkpoint the checkpoint it was
	// checked against, Chain.Uncovered the events appended since.
	Chain ChainStatus `json:"chain"`
	// Checkpoints is the number of checkpoints verified; Newest the newest.
	Checkpoints int         `json:"checkpoints"`
	Newest      *Checkpoint `json:"newest,omitempty"`
	// Keys is the number of keys the verifier trusted.
	Keys int `json:"keys"`
}

// String says what the verdict means, in one paragraph (verify prints it,
// doctor and the dashboard show it).
func (v Verdict) String() string {
	c := v.Chain
	s := fmt.Sprintf("verified: %d events in %d chains", c.Events, c.Chains)
	if c.Legacy > 0 {
		s += fmt.Sprintf(" (%d in the legacy global chain)", c.Legacy)
	}
	if c.AnchorSeq > 0 {
		s += fmt.Sprintf(", pruned up to event %d", c.AnchorSeq)
	}
	switch {
	case v.Newest != nil:
		s += fmt.Sprintf("; %d checkpoints, the newest (#%d, %s, key %s) covers every event but the %d appended since: a cut among those cannot be detected",
			v.Checkpoints, v.Newest.Seq, v.Newest.Time.Format(time.RFC3339), v.Newest.KeyID, c.Uncovered)
	case v.Keys == 0:
		s += "; no checkpoint and no trusted key: a rewrite that recomputed every hash would not be seen (create a key with `statewright checkpoint`)"
	default:
		s += "; no checkpoint yet: a rewrite that recomputed every hash would not be seen (sign one with `statewright checkpoint`)"
	}
	return s
}

// Audit verifies a store: every chain (VerifyChain), the checkpoints'
// chain and signatures under the trusted keys (VerifyCheckpoints), and the
// log against the newest checkpoint (VerifyAgainst). external, when not
// nil, are checkpoints kept outside the store (an export): each must be in
// the store unchanged, and the newer of the two newest is the one the log
// is checked against, so deleting checkpoints from the store hides
// nothing. A store without checkpoints verifies its chains only: the
// verdict's Newest is nil, and a rewrite that recomputed every hash would
// go unseen. Errors wrap ErrChainBroken or ErrCheckpoint and name the
// first bad event or checkpoint.
func Audit(ctx context.Context, st Store, trusted []ed25519.PublicKey, external []Checkpoint) (Verdict, error) {
	v := Verdict{Keys: len(trusted)}
	cps, err := st.Checkpoints(ctx)
	if err != nil {
		return v, err
	}
	keys := make(map[string]ed25519.PublicKey, len(trusted))
	for _, k := range trusted {
		keys[KeyID(k)] = k
	}
	newest, err := verifyCheckpoints(cps, keys, true)
	if err != nil {
		return v, fmt.Errorf("store: verify: %w", err)
	}
	v.Checkpoints = len(cps)
	if len(external) > 0 {
		// An export may start later than the store's first checkpoint.
		ext, err := verifyCheckpoints(external, keys, false)
		if err != nil {
			return v, fmt.Errorf("store: verify the exported checkpoints: %w", err)
		}
		for _, e := range external {
			if e.Seq < 1 || int(e.Seq) > len(cps) || cps[e.Seq-1].Hash != e.Hash {
				return v, fmt.Errorf("store: verify: %w: exported checkpoint %d is not in the store (checkpoints removed or replaced)", ErrCheckpoint, e.Seq)
			}
		}
		if ext != nil && (newest == nil || ext.Seq > newest.Seq) {
			newest = ext
		}
	}
	if newest != nil && newest.Heads == nil {
		// Only the newest keeps its heads; an export of an older one has
		// none to check the log against.
		return v, fmt.Errorf("store: verify: %w: checkpoint %d carries no heads", ErrCheckpoint, newest.Seq)
	}
	v.Newest = newest
	v.Chain, err = st.VerifyAgainst(ctx, newest)
	return v, err
}
