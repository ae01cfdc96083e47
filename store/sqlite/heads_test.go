package sqlite

import (
	"fmt"
	"sync"
	"testing"

	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/storetest"
)

// TestHeadsAreEachChainsLastEvent holds writeHeads (an UPDATE of an
// existing head, an INSERT only of a new chain's) to what the upsert it
// replaced wrote: after batches that start new chains beside moving old
// ones, and a prune that set anchors, every chain in the log has exactly
// one head, at its newest event's chain_seq and hash, some with the anchor
// the prune left; and a head without events is its chain's anchor.
func TestHeadsAreEachChainsLastEvent(t *testing.T) {
	s, path := openTemp(t, Options{})
	const sessions = 12
	// Round r runs sessions r*sessions/2 .. r*sessions/2+sessions-1: half
	// of them start their run (a new chain) in the batches where the
	// other half's chains move.
	round := func(r int) {
		var wg sync.WaitGroup
		errs := make(chan error, sessions)
		for i := r * sessions / 2; i < r*sessions/2+sessions; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				key := fmt.Sprintf("cc:h%d", i)
				if r == 0 || i >= r*sessions/2+sessions/2 {
					if err := s.Update(bg, key, func(tx store.Tx) error { return tx.Put(storetest.NewRun(key)) }); err != nil {
						errs <- err
						return
					}
				}
				for j := 0; j < 3; j++ {
					if _, _, err := storetest.Decide(bg, s, key, fmt.Sprintf("toolu_%d_%d_%d", r, i, j)); err != nil {
						errs <- err
						return
					}
				}
			}(i)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
	round(0)
	if _, err := s.Prune(bg, store.Retention{Keep: 30}); err != nil {
		t.Fatal(err)
	}
	round(1)
	if _, err := s.VerifyChain(bg); err != nil {
		t.Fatalf("VerifyChain: %v", err)
	}

	db := rawDB(t, path)
	want := map[string][2]any{}
	rows, err := db.Query(`SELECT chain, chain_seq, hash FROM events e WHERE chain <> ''
		AND chain_seq = (SELECT max(chain_seq) FROM events WHERE chain = e.chain)`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var chain, hash string
		var seq int64
		if err := rows.Scan(&chain, &seq, &hash); err != nil {
			t.Fatal(err)
		}
		want[chain] = [2]any{seq, hash}
	}
	rows.Close()
	if len(want) < sessions {
		t.Fatalf("%d chains in the log, want at least %d", len(want), sessions)
	}
	rows, err = db.Query("SELECT chain, seq, hash, anchor_seq FROM heads WHERE chain <> ''")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][2]any{}
	anchors := map[string]int64{}
	anchored := 0
	for rows.Next() {
		var chain, hash string
		var seq, anchor int64
		if err := rows.Scan(&chain, &seq, &hash, &anchor); err != nil {
			t.Fatal(err)
		}
		if _, dup := got[chain]; dup {
			t.Fatalf("chain %s has two heads", chain)
		}
		got[chain] = [2]any{seq, hash}
		anchors[chain] = anchor
		if anchor > 0 {
			anchored++
		}
	}
	rows.Close()
	for chain, w := range want {
		if g, ok := got[chain]; !ok || g != w {
			t.Errorf("head of %s: %v (present %v), want %v", chain, g, ok, w)
		}
	}
	for chain := range got {
		// A chain pruned to its head keeps the head as its anchor.
		if _, ok := want[chain]; !ok && anchors[chain] != got[chain][0] {
			t.Errorf("a head for %s, which has no events and is not pruned to it", chain)
		}
	}
	if anchored == 0 {
		t.Error("no head kept the prune's anchor through the later updates")
	}
}
