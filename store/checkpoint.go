package store

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"
)

// ErrCheckpoint: a checkpoint does not verify (a bad signature, a broken
// link to the previous checkpoint, heads that do not hash to what was
// signed).
var ErrCheckpoint = errors.New("store: checkpoint does not verify")

// checkpointDomain prefixes a checkpoint's digest.
const checkpointDomain = "statewright-checkpoint-v1\x00"

// Checkpoint is a signed statement of where every chain of the log stood:
// its sequence number, time, the hash over every chain's head and anchor
// (HeadsHash), and the previous checkpoint's hash, signed with Ed25519.
// Checkpoints form their own chain. Someone who rewrites history and
// recomputes every event hash still cannot produce the signature, so a
// verifier holding the public key detects the rewrite of anything a
// checkpoint covered; what was appended after the newest checkpoint is
// covered by none (a tail cut there cannot be told from a tail never
// written).
type Checkpoint struct {
	// Seq is the checkpoint's place: 1, 2, 3, ...
	Seq int64 `json:"seq"`
	// Time is when it was taken.
	Time time.Time `json:"time"`
	// HeadsHash is HeadsHash(Heads); Chains the number of heads.
	HeadsHash string `json:"heads_hash"`
	Chains    int64  `json:"chains"`
	// PrevHash is the previous checkpoint's Hash ("" for the first).
	PrevHash string `json:"prev_hash"`
	// KeyID names the signing key (KeyID of its public key); PublicKey is
	// the key (hex), so a verifier can say which key signed. Trust comes
	// from the verifier's own list of keys, never from this field.
	KeyID     string `json:"key_id"`
	PublicKey string `json:"public_key"`
	// NextKeyID and NextPublicKey announce a key rotation: checkpoints
	// after this one are signed by the next key, which this one (signed by
	// the old key) vouches for.
	NextKeyID     string `json:"next_key_id,omitempty"`
	NextPublicKey string `json:"next_public_key,omitempty"`
	// Hash is the checkpoint's digest (see Digest); Signature the Ed25519
	// signature of it (hex).
	Hash      string `json:"hash"`
	Signature string `json:"signature"`
	// Heads are the heads the checkpoint covers. A store keeps them for
	// its newest checkpoint only; older ones are kept without.
	Heads []Head `json:"heads,omitempty"`
}

// KeyID names an Ed25519 public key: the first 16 hex digits of its sha256.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// Digest computes c's hash over its signed fields: Seq, Time, HeadsHash,
// Chains, PrevHash, KeyID, PublicKey, NextKeyID, NextPublicKey.
func (c *Checkpoint) Digest() string {
	f := fields{h: sha256.New()}
	io.WriteString(f.h, checkpointDomain)
	f.int(c.Seq)
	f.int(c.Time.UnixNano())
	f.str(c.HeadsHash)
	f.int(c.Chains)
	f.str(c.PrevHash)
	f.str(c.KeyID)
	f.str(c.PublicKey)
	f.str(c.NextKeyID)
	f.str(c.NextPublicKey)
	return hex.EncodeToString(f.h.Sum(nil))
}

// CheckpointOptions configure Store.Checkpoint.
type CheckpointOptions struct {
	// Key signs the checkpoint.
	Key ed25519.PrivateKey
	// NextKey, when set, announces a rotation to this key (see
	// Checkpoint.NextPublicKey).
	NextKey ed25519.PublicKey
	// AfterPrune tells the store that the caller pruned the log since the
	// previous checkpoint: chains whose anchors moved are then accepted
	// (a store refuses to sign a log that no longer matches its previous
	// checkpoint, and an unsigned prune is one way not to).
	AfterPrune bool
}

// NewCheckpoint builds and signs the checkpoint that follows prev (nil for
// the first) over heads at now.
func NewCheckpoint(prev *Checkpoint, heads []Head, now time.Time, opts CheckpointOptions) (Checkpoint, error) {
	if len(opts.Key) != ed25519.PrivateKeySize {
		return Checkpoint{}, fmt.Errorf("store: checkpoint: %w: no Ed25519 signing key", ErrInvalid)
	}
	pub := opts.Key.Public().(ed25519.PublicKey)
	c := Checkpoint{Seq: 1, Time: now.UTC(), HeadsHash: HeadsHash(heads), Chains: int64(len(heads)),
		KeyID: KeyID(pub), PublicKey: hex.EncodeToString(pub), Heads: heads}
	SortHeads(c.Heads)
	if prev != nil {
		c.Seq, c.PrevHash = prev.Seq+1, prev.Hash
	}
	if opts.NextKey != nil {
		if len(opts.NextKey) != ed25519.PublicKeySize {
			return Checkpoint{}, fmt.Errorf("store: checkpoint: %w: the next key is not an Ed25519 public key", ErrInvalid)
		}
		c.NextKeyID, c.NextPublicKey = KeyID(opts.NextKey), hex.EncodeToString(opts.NextKey)
	}
	c.Hash = c.Digest()
	c.Signature = hex.EncodeToString(ed25519.Sign(opts.Key, []byte(c.Hash)))
	return c, nil
}

// Verify checks c's digest and that pub signed it; with its heads present,
// that they hash to HeadsHash. The error wraps ErrCheckpoint.
func (c *Checkpoint) Verify(pub ed25519.PublicKey) error {
	if c.Digest() != c.Hash {
		return fmt.Errorf("%w: checkpoint %d: its fields do not match its hash", ErrCheckpoint, c.Seq)
	}
	if KeyID(pub) != c.KeyID {
		return fmt.Errorf("%w: checkpoint %d is signed by key %s, not %s", ErrCheckpoint, c.Seq, c.KeyID, KeyID(pub))
	}
	sig, err := hex.DecodeString(c.Signature)
	if err != nil || !ed25519.Verify(pub, []byte(c.Hash), sig) {
		return fmt.Errorf("%w: checkpoint %d: the signature is not key %s's", ErrCheckpoint, c.Seq, c.KeyID)
	}
	if c.Heads != nil && (HeadsHash(c.Heads) != c.HeadsHash || int64(len(c.Heads)) != c.Chains) {
		return fmt.Errorf("%w: checkpoint %d: its heads do not hash to what was signed", ErrCheckpoint, c.Seq)
	}
	return nil
}
