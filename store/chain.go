package store

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// hashDomain prefixes every event hash so a hash of some other structure
// can never pass as an event hash.
const hashDomain = "statewright-event-v1\x00"

// InputDigest returns the sha256 (hex) of a tool input. JSON inputs are
// compacted first, so whitespace does not change the digest.
func InputDigest(input []byte) string {
	var buf bytes.Buffer
	if json.Valid(input) && json.Compact(&buf, input) == nil {
		input = buf.Bytes()
	}
	sum := sha256.Sum256(input)
	return hex.EncodeToString(sum[:])
}

// CompactData returns d compacted (nil for empty or JSON null), or an error
// wrapping ErrInvalid when d is not valid JSON. The store keeps event data
// compacted so that the hash is independent of whitespace.
func CompactData(d json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(d)) == 0 {
		return nil, nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, d); err != nil {
		return nil, fmt.Errorf("%w: event data is not JSON: %v", ErrInvalid, err)
	}
	if buf.String() == "null" {
		return nil, nil
	}
	return buf.Bytes(), nil
}

// HashEvent computes e's hash: sha256 (hex) over a domain prefix and the
// length-prefixed fields Seq, PrevHash, RunID, SessionKey, Time (Unix
// nanoseconds), Kind, State, Tool, InputDigest, Decision, Rule, Reason,
// ToolUseID and Data (compacted). e.Hash itself is not an input.
func HashEvent(e *Event) string {
	h := sha256.New()
	var lb [binary.MaxVarintLen64]byte
	field := func(s string) {
		n := binary.PutUvarint(lb[:], uint64(len(s)))
		h.Write(lb[:n])
		io.WriteString(h, s)
	}
	io.WriteString(h, hashDomain)
	field(strconv.FormatInt(e.Seq, 10))
	field(e.PrevHash)
	field(e.RunID)
	field(e.SessionKey)
	field(strconv.FormatInt(e.Time.UnixNano(), 10))
	field(string(e.Kind))
	field(e.State)
	field(e.Tool)
	field(e.InputDigest)
	field(e.Decision)
	field(e.Rule)
	field(e.Reason)
	field(e.ToolUseID)
	data, err := CompactData(e.Data)
	if err != nil {
		data = e.Data // hash what is there; verification compares anyway
	}
	field(string(data))
	return hex.EncodeToString(h.Sum(nil))
}

// ChainVerifier checks events one at a time, in Seq order, against the
// chain rules: each event's Hash is HashEvent, its PrevHash is the previous
// event's Hash (the anchor's for the first), and Seq has no gaps. Backends
// and VerifyJSONL share it.
type ChainVerifier struct {
	status  ChainStatus
	started bool
}

// NewChainVerifier starts a verification at an anchor (0, "" for a log that
// was never pruned).
func NewChainVerifier(anchorSeq int64, anchorHash string) *ChainVerifier {
	return &ChainVerifier{status: ChainStatus{
		AnchorSeq: anchorSeq, AnchorHash: anchorHash,
		HeadSeq: anchorSeq, HeadHash: anchorHash,
	}}
}

// Next checks the next event; the error wraps ErrChainBroken.
func (v *ChainVerifier) Next(e *Event) error {
	if e.Seq != v.status.HeadSeq+1 {
		return fmt.Errorf("%w: event seq %d follows seq %d (gap or reorder)", ErrChainBroken, e.Seq, v.status.HeadSeq)
	}
	if e.PrevHash != v.status.HeadHash {
		return fmt.Errorf("%w: event seq %d: prev_hash %q does not match the hash %q before it", ErrChainBroken, e.Seq, e.PrevHash, v.status.HeadHash)
	}
	if got := HashEvent(e); got != e.Hash {
		return fmt.Errorf("%w: event seq %d: content does not match its hash (stored %s, computed %s)", ErrChainBroken, e.Seq, e.Hash, got)
	}
	v.status.Events++
	v.status.HeadSeq = e.Seq
	v.status.HeadHash = e.Hash
	return nil
}

// Status returns what was verified so far.
func (v *ChainVerifier) Status() ChainStatus { return v.status }

// WriteEventJSONL writes e as one JSON line, exactly as VerifyJSONL reads it
// back (Data verbatim, no HTML escaping).
func WriteEventJSONL(w io.Writer, e *Event) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return fmt.Errorf("store: export event %d: %w", e.Seq, err)
	}
	return nil
}

// VerifyJSONL reads an export written by Store.ExportJSONL and verifies its
// chain. The first event's PrevHash and Seq-1 are taken as the anchor (the
// export cannot prove what was pruned before it); an empty export verifies.
func VerifyJSONL(r io.Reader) (ChainStatus, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 64<<20)
	var v *ChainVerifier
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var e Event
		if err := json.Unmarshal(b, &e); err != nil {
			return ChainStatus{}, fmt.Errorf("store: verify export: line %d: %w", line, err)
		}
		if v == nil {
			v = NewChainVerifier(e.Seq-1, e.PrevHash)
		}
		if err := v.Next(&e); err != nil {
			return v.Status(), fmt.Errorf("store: verify export: line %d: %w", line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return ChainStatus{}, fmt.Errorf("store: verify export: %w", err)
	}
	if v == nil {
		return ChainStatus{}, nil
	}
	return v.Status(), nil
}
