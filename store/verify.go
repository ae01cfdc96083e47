package store

import "fmt"

// ChainVerifier checks a log's events against the chain rules, one at a
// time: each event's Hash is HashEvent; its Chain is ChainOf its run and
// session; in its chain, its ChainSeq follows the previous one's without a
// gap and its PrevHash is the previous event's Hash (the chain's anchor's
// for its first). Events of the legacy global chain follow one another by
// Seq. Events of one chain must come in chain order; chains may
// interleave. Backends and VerifyJSONL share it.
type ChainVerifier struct {
	status ChainStatus
	heads  map[string]*Head
	// fromFirst: a chain without a known anchor starts wherever its first
	// event says (an export, which cannot prove what was pruned).
	fromFirst bool

	// cover is the checkpoint the log is checked against (Cover).
	cover    *Checkpoint
	covered  map[string]Head // the heads it signed, by chain
	found    map[string]bool // covered heads met in the log
	anchors  map[string]Head // the anchors the log started from, by chain
	coverErr error           // the first covered head found rewritten

	// PrunedSince accepts anchors that moved after the checkpoint (the
	// signer that has just pruned); the heads it signed must then still
	// be in their chains or be exactly their anchors.
	PrunedSince bool
}

// NewChainVerifier starts a verification from the chains' anchors (the
// stored heads of pruned chains; a chain without one starts at #1 after
// ""). lastPrunedSeq and lastPrunedHash are the last event pruned from the
// whole log (0, "" when never pruned).
func NewChainVerifier(anchors []Head, lastPrunedSeq int64, lastPrunedHash string) *ChainVerifier {
	v := &ChainVerifier{heads: map[string]*Head{}, status: ChainStatus{
		AnchorSeq: lastPrunedSeq, AnchorHash: lastPrunedHash, HeadSeq: lastPrunedSeq, HeadHash: lastPrunedHash}}
	v.anchors = map[string]Head{}
	for _, a := range anchors {
		if a.AnchorSeq > 0 || a.AnchorHash != "" {
			v.heads[a.Chain] = &Head{Chain: a.Chain, Seq: a.AnchorSeq, Hash: a.AnchorHash, AnchorSeq: a.AnchorSeq, AnchorHash: a.AnchorHash}
			v.anchors[a.Chain] = a
		}
	}
	return v
}

// Cover makes the verification check the log against a checkpoint too
// (call it before the first Next): each head cp signed must still be in
// its chain with the same hash, and each chain's anchor must be the one cp
// signed (a prune since is covered by no checkpoint). Events after the
// heads cp signed are counted in ChainStatus.Uncovered.
func (v *ChainVerifier) Cover(cp *Checkpoint) {
	if cp == nil {
		return
	}
	v.cover = cp
	v.covered = make(map[string]Head, len(cp.Heads))
	v.found = map[string]bool{}
	for _, h := range cp.Heads {
		v.covered[h.Chain] = h
	}
}

// where names an event for messages: its Seq, chain and place in it.
func where(e *Event) string {
	if e.Chain == "" {
		return fmt.Sprintf("event seq %d (legacy chain)", e.Seq)
	}
	return fmt.Sprintf("event seq %d (chain %s #%d)", e.Seq, e.Chain, e.ChainSeq)
}

// Next checks the next event; the error wraps ErrChainBroken and names the
// event.
func (v *ChainVerifier) Next(e *Event) error {
	if e.Chain != "" && e.Chain != ChainOf(e.RunID, e.SessionKey) {
		return fmt.Errorf("%w: %s: the chain is not that of its run and session (%s)", ErrChainBroken, where(e), ChainOf(e.RunID, e.SessionKey))
	}
	pos := e.ChainSeq
	if e.Chain == "" {
		pos = e.Seq
	}
	hd := v.heads[e.Chain]
	if hd == nil {
		hd = &Head{Chain: e.Chain}
		if v.fromFirst {
			hd.Seq, hd.Hash, hd.AnchorSeq, hd.AnchorHash = pos-1, e.PrevHash, pos-1, e.PrevHash
			v.anchors[e.Chain] = *hd
		}
		v.heads[e.Chain] = hd
	}
	if pos != hd.Seq+1 {
		return fmt.Errorf("%w: %s follows #%d of its chain (gap or reorder)", ErrChainBroken, where(e), hd.Seq)
	}
	if e.PrevHash != hd.Hash {
		return fmt.Errorf("%w: %s: prev_hash %q does not match the hash %q before it", ErrChainBroken, where(e), e.PrevHash, hd.Hash)
	}
	if got := HashEvent(e); got != e.Hash {
		return fmt.Errorf("%w: %s: content does not match its hash (stored %s, computed %s)", ErrChainBroken, where(e), e.Hash, got)
	}
	hd.Seq, hd.Hash = pos, e.Hash
	if v.cover != nil {
		switch c, ok := v.covered[e.Chain]; {
		case !ok || pos > c.Seq:
			v.status.Uncovered++
		case pos == c.Seq:
			v.found[e.Chain] = true
			if e.Hash != c.Hash && v.coverErr == nil {
				v.coverErr = fmt.Errorf("%w: %s is not the event checkpoint %d signed (history rewritten and its hashes recomputed)",
					ErrChainBroken, where(e), v.cover.Seq)
			}
		}
	}
	v.status.Events++
	if e.Chain == "" {
		v.status.Legacy++
	}
	if e.Seq > v.status.HeadSeq {
		v.status.HeadSeq, v.status.HeadHash = e.Seq, e.Hash
	}
	return nil
}

// Heads returns every chain's head as verified so far (chains known only
// from their anchor included), sorted by chain.
func (v *ChainVerifier) Heads() []Head {
	out := make([]Head, 0, len(v.heads))
	for _, h := range v.heads {
		out = append(out, *h)
	}
	SortHeads(out)
	return out
}

// Status returns what was verified so far.
func (v *ChainVerifier) Status() ChainStatus {
	st := v.status
	if v.cover != nil {
		st.Checkpoint = v.cover.Seq
	}
	st.Chains = int64(len(v.heads))
	st.HeadsHash = HeadsHash(v.Heads())
	return st
}

// CheckHeads compares what was verified with the heads the store keeps:
// every chain must end exactly where its stored head says, and no chain
// may have events its stored head does not know of. A chain cut short is
// the usual finding: the error names it and where it ends.
func (v *ChainVerifier) CheckHeads(stored []Head) error {
	seen := make(map[string]bool, len(stored))
	for _, s := range stored {
		seen[s.Chain] = true
		h := v.heads[s.Chain]
		if h == nil {
			if s.Seq == 0 && s.Hash == "" {
				continue
			}
			return fmt.Errorf("%w: chain %s: its head is #%d but it has no events", ErrChainBroken, chainName(s.Chain), s.Seq)
		}
		if h.Seq != s.Seq || h.Hash != s.Hash {
			return fmt.Errorf("%w: chain %s ends at #%d, but its head is #%d (events cut off, or written behind the store's back)",
				ErrChainBroken, chainName(s.Chain), h.Seq, s.Seq)
		}
	}
	for c := range v.heads {
		if !seen[c] {
			return fmt.Errorf("%w: chain %s has events the store's heads do not know of", ErrChainBroken, chainName(c))
		}
	}
	return nil
}

// CheckCover reports what Cover found: the first covered head rewritten,
// or a chain the checkpoint signed that now ends before its signed head,
// is gone, or was pruned since (its anchor is not the one signed). The
// error wraps ErrChainBroken and names the chain and place.
func (v *ChainVerifier) CheckCover() error {
	if v.cover == nil {
		return nil
	}
	if v.coverErr != nil {
		return v.coverErr
	}
	for _, c := range v.cover.Heads {
		a := v.anchors[c.Chain]
		if v.PrunedSince && a.AnchorSeq >= c.Seq {
			if a.AnchorSeq > c.Seq || a.AnchorHash == c.Hash {
				continue // pruned at or past the signed head
			}
		}
		if !v.PrunedSince && (a.AnchorSeq != c.AnchorSeq || a.AnchorHash != c.AnchorHash) {
			return fmt.Errorf("%w: chain %s was pruned after checkpoint %d (its anchor is #%d, the checkpoint signed #%d), and no checkpoint covers that prune",
				ErrChainBroken, chainName(c.Chain), v.cover.Seq, a.AnchorSeq, c.AnchorSeq)
		}
		if v.found[c.Chain] || (c.Seq == c.AnchorSeq && c.Hash == c.AnchorHash) {
			continue
		}
		hd := v.heads[c.Chain]
		switch {
		case hd == nil:
			return fmt.Errorf("%w: chain %s, which checkpoint %d signed up to #%d, is gone", ErrChainBroken, chainName(c.Chain), v.cover.Seq, c.Seq)
		default:
			return fmt.Errorf("%w: chain %s ends at #%d, but checkpoint %d signed it up to #%d: events were cut off",
				ErrChainBroken, chainName(c.Chain), hd.Seq, v.cover.Seq, c.Seq)
		}
	}
	return nil
}

func chainName(c string) string {
	if c == "" {
		return "(legacy)"
	}
	return c
}
