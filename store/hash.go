package store

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"io"
	"slices"
	"strconv"
	"strings"
)

// Hash domains: each kind of hashed structure has its own prefix, so a hash
// of one can never pass as a hash of another.
const (
	// hashDomain: an event of the legacy global chain.
	hashDomain = "statewright-event-v1\x00"
	// hashDomainV2: an event of a per-run (per-session, the store's) chain.
	hashDomainV2 = "statewright-event-v2\x00"
	// headsDomain: the set of chain heads a checkpoint signs.
	headsDomain = "statewright-heads-v1\x00"
)

// ChainOf returns the chain an event of runID in sessionKey belongs to:
// the run's own (its id), else the session's events outside any run
// ("session:" + key), else the store's own ("store").
func ChainOf(runID, sessionKey string) string {
	switch {
	case runID != "":
		return runID
	case sessionKey != "":
		return "session:" + sessionKey
	}
	return "store"
}

// fields writes length-prefixed strings into a hash, so that moving bytes
// between adjacent fields changes the hash.
type fields struct {
	h  hash.Hash
	lb [binary.MaxVarintLen64]byte
}

func (f *fields) str(s string) {
	n := binary.PutUvarint(f.lb[:], uint64(len(s)))
	f.h.Write(f.lb[:n])
	io.WriteString(f.h, s)
}

func (f *fields) int(i int64) { f.str(strconv.FormatInt(i, 10)) }

// HashEvent computes e's hash: sha256 (hex) over a domain prefix and the
// length-prefixed fields Chain, ChainSeq, PrevHash, RunID, SessionKey,
// Time (Unix nanoseconds), Kind, State, Tool, InputDigest, Decision, Rule,
// Reason, ToolUseID and Data (compacted). e.Hash and e.Seq are not inputs:
// an event's place is its chain and its place in it. An event of the
// legacy global chain (Chain "") is hashed as it was written then: the v1
// domain, with Seq in place of Chain and ChainSeq.
func HashEvent(e *Event) string {
	data, err := CompactData(e.Data)
	if err != nil {
		data = e.Data // hash what is there; verification compares anyway
	}
	return hashEvent(e, data)
}

// HashCompacted is HashEvent for an event whose Data is compacted already
// (as CompactData returns it, nil for none), as the store's append has it:
// it hashes Data as it is instead of compacting it again. Given anything
// else it returns a hash HashEvent would not.
func HashCompacted(e *Event) string { return hashEvent(e, e.Data) }

// hashEvent is HashEvent over data as e's compacted Data. The fields are
// laid out in one buffer and hashed at once (sha256.Sum256): the same bytes
// as writing them to a hash one by one (TestHashEventLayout), without a
// hash object or a copy of each string (every decision appends an event).
func hashEvent(e *Event, data []byte) string {
	n := len(hashDomainV2) + 16*binary.MaxVarintLen64 + 3*20 + len(e.Chain) + len(e.PrevHash) + len(e.RunID) +
		len(e.SessionKey) + len(e.Kind) + len(e.State) + len(e.Tool) + len(e.InputDigest) + len(e.Decision) +
		len(e.Rule) + len(e.Reason) + len(e.ToolUseID) + len(data)
	b := make([]byte, 0, n)
	if e.Chain == "" {
		b = append(b, hashDomain...)
		b = appendIntField(b, e.Seq)
	} else {
		b = append(b, hashDomainV2...)
		b = appendField(b, e.Chain)
		b = appendIntField(b, e.ChainSeq)
	}
	b = appendField(b, e.PrevHash)
	b = appendField(b, e.RunID)
	b = appendField(b, e.SessionKey)
	b = appendIntField(b, e.Time.UnixNano())
	b = appendField(b, string(e.Kind))
	b = appendField(b, e.State)
	b = appendField(b, e.Tool)
	b = appendField(b, e.InputDigest)
	b = appendField(b, e.Decision)
	b = appendField(b, e.Rule)
	b = appendField(b, e.Reason)
	b = appendField(b, e.ToolUseID)
	b = binary.AppendUvarint(b, uint64(len(data)))
	b = append(b, data...)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// appendField appends s length-prefixed, as fields.str writes it.
func appendField(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// appendIntField appends i in decimal, length-prefixed, as fields.int
// writes it.
func appendIntField(b []byte, i int64) []byte {
	var d [20]byte
	return appendField(b, string(strconv.AppendInt(d[:0], i, 10)))
}

// Head is where one chain stands: its newest event (Seq is that event's
// ChainSeq, or its store Seq in the legacy chain) and its anchor, the last
// event pruned from it (0, "" when never pruned). A chain pruned to
// nothing has its head at its anchor.
type Head struct {
	Chain      string `json:"chain"`
	Seq        int64  `json:"seq"`
	Hash       string `json:"hash"`
	AnchorSeq  int64  `json:"anchor_seq,omitempty"`
	AnchorHash string `json:"anchor_hash,omitempty"`
}

// SortHeads sorts heads by chain.
func SortHeads(heads []Head) {
	slices.SortFunc(heads, func(a, b Head) int { return strings.Compare(a.Chain, b.Chain) })
}

// HeadsHash is the sha256 (hex) over every chain's head and anchor, in
// chain order, length-prefixed: what a checkpoint signs. heads need not be
// sorted.
func HeadsHash(heads []Head) string {
	sorted := slices.Clone(heads)
	SortHeads(sorted)
	f := fields{h: sha256.New()}
	io.WriteString(f.h, headsDomain)
	f.int(int64(len(sorted)))
	for _, hd := range sorted {
		f.str(hd.Chain)
		f.int(hd.Seq)
		f.str(hd.Hash)
		f.int(hd.AnchorSeq)
		f.str(hd.AnchorHash)
	}
	return hex.EncodeToString(f.h.Sum(nil))
}
