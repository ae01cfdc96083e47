package store

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
)

// InputDigest returns the sha256 (hex) of a tool input. JSON inputs are
// compacted first, so whitespace does not change the digest.
func InputDigest(input []byte) string {
	if !isCompact(input) {
		var buf bytes.Buffer
		// Compact validates as it goes, and leaves buf empty when input
		// is not JSON: no separate json.Valid pass over the input.
		if json.Compact(&buf, input) == nil {
			input = buf.Bytes()
		}
	}
	sum := sha256.Sum256(input)
	return hex.EncodeToString(sum[:])
}

// isCompact reports whether d is valid JSON that json.Compact would leave
// as it is: no space, tab or line break outside its strings. What
// json.Marshal writes is (every decision's outcome and event data are):
// it is validated without being copied into a buffer.
func isCompact(d []byte) bool {
	in := false
	for i := 0; i < len(d); i++ {
		c := d[i]
		if in {
			switch c {
			case '\\':
				i++ // the escaped byte is not a quote that ends the string
			case '"':
				in = false
			}
			continue
		}
		switch c {
		case '"':
			in = true
		case ' ', '\t', '\n', '\r':
			return false
		}
	}
	return json.Valid(d)
}

// CompactData returns d compacted (nil for empty or JSON null), or an error
// wrapping ErrInvalid when d is not valid JSON. The store keeps event data
// compacted so that the hash is independent of whitespace.
func CompactData(d json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(d)) == 0 {
		return nil, nil
	}
	if isCompact(d) {
		if string(d) == "null" {
			return nil, nil
		}
		return d, nil
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

// VerifyJSONL reads an export written by Store.ExportJSONL and verifies
// every chain in it. Each chain's first event in the export is taken as
// where it starts (its PrevHash as its anchor: an export cannot prove what
// was pruned before it); an empty export verifies.
func VerifyJSONL(r io.Reader) (ChainStatus, error) { return VerifyJSONLAgainst(r, nil) }

// VerifyJSONLAgainst is VerifyJSONL that also checks the export against a
// checkpoint: each head cp signed that the export reaches must be in it
// unchanged, and no chain cp signed may end before its signed head (an
// export that starts after a signed head, because the store was pruned,
// cannot show it).
func VerifyJSONLAgainst(r io.Reader, cp *Checkpoint) (ChainStatus, error) {
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
			v = NewChainVerifier(nil, 0, "")
			v.fromFirst, v.PrunedSince = true, true
			v.Cover(cp)
		}
		if err := v.Next(&e); err != nil {
			return v.Status(), fmt.Errorf("store: verify export: line %d: %w", line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return ChainStatus{}, fmt.Errorf("store: verify export: %w", err)
	}
	if v == nil {
		v = NewChainVerifier(nil, 0, "")
		v.PrunedSince = true
		v.Cover(cp)
	}
	if err := v.CheckCover(); err != nil {
		return v.Status(), fmt.Errorf("store: verify export: %w", err)
	}
	return v.Status(), nil
}
