package sqlite

import (
	"crypto/ed25519"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/internal/backend"
	"github.com/statewright-go/statewright/store/storetest"
)

// auditFixture is a store with two sessions' runs, a checkpoint over their
// first three decisions each, and two more decisions each after it.
type auditFixture struct {
	s      *Store
	db     *sql.DB
	pub    ed25519.PublicKey
	key    ed25519.PrivateKey
	runs   []*store.Run
	cp     store.Checkpoint
	before int64 // events the checkpoint covers
}

func newAuditFixture(t *testing.T) *auditFixture {
	t.Helper()
	s, path := openTemp(t, Options{})
	f := &auditFixture{s: s}
	f.pub, f.key, _ = ed25519.GenerateKey(nil)
	for _, key := range []string{"cc:a", "cc:b"} {
		f.runs = append(f.runs, storetest.Create(t, s, key))
	}
	decide := func(n int, tag string) {
		for i := 0; i < n; i++ {
			for _, key := range []string{"cc:a", "cc:b"} {
				if _, _, err := storetest.Decide(bg, s, key, fmt.Sprintf("%s-%s-%d", key, tag, i)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	decide(3, "covered")
	var err error
	if f.cp, err = s.Checkpoint(bg, store.CheckpointOptions{Key: f.key}); err != nil {
		t.Fatal(err)
	}
	f.before = 6
	decide(2, "tail")
	f.db = rawDB(t, path)
	if _, err := f.db.Exec("DROP TRIGGER events_no_update; DROP TRIGGER events_prune_only"); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *auditFixture) audit() (store.Verdict, error) {
	return store.Audit(bg, f.s, []ed25519.PublicKey{f.pub}, nil)
}

// rechain recomputes every hash and link of chain from its anchor and
// rewrites its head, as someone who edited it and wants it to verify would.
func (f *auditFixture) rechain(t *testing.T, chain string) {
	t.Helper()
	var h store.Head
	if err := f.db.QueryRow("SELECT anchor_seq, anchor_hash FROM heads WHERE chain = ?", chain).Scan(&h.AnchorSeq, &h.AnchorHash); err != nil {
		t.Fatal(err)
	}
	h.Chain, h.Seq, h.Hash = chain, h.AnchorSeq, h.AnchorHash
	rows, err := f.db.Query("SELECT "+backend.EventColumnList+" FROM events WHERE chain = ? ORDER BY chain_seq", chain)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := backend.Collect(rows, backend.ScanEventValue)
	rows.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		h = backend.Link(&e, h)
		if _, err := f.db.Exec("UPDATE events SET prev_hash = ?, hash = ? WHERE seq = ?", e.PrevHash, e.Hash, e.Seq); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.db.Exec("UPDATE heads SET seq = ?, hash = ? WHERE chain = ?", h.Seq, h.Hash, chain); err != nil {
		t.Fatal(err)
	}
}

func wantBroken(t *testing.T, err error, sentinel error, parts ...string) {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("err = %v, want %v", err, sentinel)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("err = %v; want it to say %q", err, p)
		}
	}
}

// TestAuditCatchesTampering tampers with a store in each way issue 20
// names, and checks what VerifyChain alone sees and what the audit
// against the signed checkpoint sees.
func TestAuditCatchesTampering(t *testing.T) {
	t.Run("intact", func(t *testing.T) {
		f := newAuditFixture(t)
		v, err := f.audit()
		if err != nil {
			t.Fatal(err)
		}
		if v.Checkpoints != 1 || v.Newest == nil || v.Chain.Checkpoint != 1 || v.Chain.Events != 10 || v.Chain.Uncovered != 4 {
			t.Errorf("verdict = %+v", v)
		}
	})
	t.Run("flip a decision", func(t *testing.T) {
		f := newAuditFixture(t)
		if _, err := f.db.Exec("UPDATE events SET decision = 'deny' WHERE tool_use_id = 'cc:a-covered-1'"); err != nil {
			t.Fatal(err)
		}
		_, err := f.audit()
		wantBroken(t, err, store.ErrChainBroken, "seq 3 (chain "+f.runs[0].ID+" #2)", "content does not match its hash")
	})
	t.Run("recompute after an edit", func(t *testing.T) {
		f := newAuditFixture(t)
		if _, err := f.db.Exec("UPDATE events SET decision = 'deny' WHERE tool_use_id = 'cc:a-covered-1'"); err != nil {
			t.Fatal(err)
		}
		f.rechain(t, f.runs[0].ID)
		if _, err := f.s.VerifyChain(bg); err != nil {
			t.Fatalf("the recomputed chain should pass VerifyChain alone: %v", err)
		}
		_, err := f.audit()
		wantBroken(t, err, store.ErrChainBroken, "chain "+f.runs[0].ID+" #3", "not the event checkpoint 1 signed")
	})
	t.Run("cut what a checkpoint covered", func(t *testing.T) {
		f := newAuditFixture(t)
		if _, err := f.db.Exec("DELETE FROM events WHERE chain = ? AND chain_seq >= 3", f.runs[1].ID); err != nil {
			t.Fatal(err)
		}
		f.rechain(t, f.runs[1].ID)
		if _, err := f.s.VerifyChain(bg); err != nil {
			t.Fatalf("the cut chain should pass VerifyChain alone: %v", err)
		}
		_, err := f.audit()
		wantBroken(t, err, store.ErrChainBroken, "chain "+f.runs[1].ID+" ends at #2", "checkpoint 1 signed it up to #3")
	})
	t.Run("cut the tail after the newest checkpoint is not detectable", func(t *testing.T) {
		f := newAuditFixture(t)
		if _, err := f.db.Exec("DELETE FROM events WHERE chain = ? AND chain_seq >= 4", f.runs[1].ID); err != nil {
			t.Fatal(err)
		}
		f.rechain(t, f.runs[1].ID)
		v, err := f.audit()
		if err != nil {
			t.Fatalf("a tail no checkpoint covered was cut: the audit cannot know, yet it failed: %v", err)
		}
		if v.Chain.Uncovered != 2 {
			t.Errorf("uncovered = %d, want the 2 events the other run appended since", v.Chain.Uncovered)
		}
	})
	t.Run("faked prune", func(t *testing.T) {
		f := newAuditFixture(t)
		var seq int64
		var hash string
		if err := f.db.QueryRow("SELECT chain_seq, hash FROM events WHERE chain = ? AND chain_seq = 2", f.runs[0].ID).Scan(&seq, &hash); err != nil {
			t.Fatal(err)
		}
		if _, err := f.db.Exec("DELETE FROM events WHERE chain = ? AND chain_seq <= 2", f.runs[0].ID); err != nil {
			t.Fatal(err)
		}
		if _, err := f.db.Exec("UPDATE heads SET anchor_seq = ?, anchor_hash = ? WHERE chain = ?", seq, hash, f.runs[0].ID); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.VerifyChain(bg); err != nil {
			t.Fatalf("the faked prune should pass VerifyChain alone: %v", err)
		}
		_, err := f.audit()
		wantBroken(t, err, store.ErrChainBroken, "chain "+f.runs[0].ID+" was pruned after checkpoint 1")
		// And no later checkpoint launders it.
		if _, err := f.s.Checkpoint(bg, store.CheckpointOptions{Key: f.key}); !errors.Is(err, store.ErrChainBroken) {
			t.Errorf("Checkpoint over a faked prune: %v, want a refusal", err)
		}
	})
	t.Run("a real prune, signed", func(t *testing.T) {
		f := newAuditFixture(t)
		if _, err := f.s.Prune(bg, store.Retention{Keep: 3}); err != nil {
			t.Fatal(err)
		}
		_, err := f.audit()
		wantBroken(t, err, store.ErrChainBroken, "pruned after checkpoint 1")
		if _, err := f.s.Checkpoint(bg, store.CheckpointOptions{Key: f.key}); !errors.Is(err, store.ErrChainBroken) {
			t.Errorf("Checkpoint after a prune without AfterPrune: %v, want a refusal", err)
		}
		if _, err := f.s.Checkpoint(bg, store.CheckpointOptions{Key: f.key, AfterPrune: true}); err != nil {
			t.Fatal(err)
		}
		if v, err := f.audit(); err != nil || v.Chain.Checkpoint != 2 || v.Chain.Uncovered != 0 {
			t.Errorf("audit after a signed prune = %+v, %v", v, err)
		}
	})
	t.Run("forged checkpoint", func(t *testing.T) {
		f := newAuditFixture(t)
		_, other, _ := ed25519.GenerateKey(nil)
		if _, err := f.s.Checkpoint(bg, store.CheckpointOptions{Key: other}); err != nil {
			t.Fatal(err)
		}
		_, err := f.audit()
		wantBroken(t, err, store.ErrCheckpoint, "checkpoint 2 is signed by key "+store.KeyID(other.Public().(ed25519.PublicKey)), "not trusted")
	})
	t.Run("checkpoints removed, kept outside", func(t *testing.T) {
		f := newAuditFixture(t)
		exported := []store.Checkpoint{f.cp}
		if _, err := f.db.Exec("DELETE FROM checkpoints"); err != nil {
			t.Fatal(err)
		}
		if v, err := f.audit(); err != nil || v.Newest != nil {
			t.Fatalf("without checkpoints the audit checks the chains only: %+v, %v", v, err)
		}
		_, err := store.Audit(bg, f.s, []ed25519.PublicKey{f.pub}, exported)
		wantBroken(t, err, store.ErrCheckpoint, "exported checkpoint 1 is not in the store")
	})
	t.Run("across a key rotation", func(t *testing.T) {
		f := newAuditFixture(t)
		nextPub, nextKey, _ := ed25519.GenerateKey(nil)
		if _, err := f.s.Checkpoint(bg, store.CheckpointOptions{Key: f.key, NextKey: nextPub}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := storetest.Decide(bg, f.s, "cc:a", "after-rotation"); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.Checkpoint(bg, store.CheckpointOptions{Key: nextKey}); err != nil {
			t.Fatal(err)
		}
		v, err := f.audit() // trusting the old key only
		if err != nil || v.Checkpoints != 3 || v.Newest.KeyID != store.KeyID(nextPub) {
			t.Errorf("audit across a rotation = %+v, %v", v, err)
		}
		// The exported checkpoints verify on their own too.
		cps, err := f.s.Checkpoints(bg)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(cps)
		var back []store.Checkpoint
		json.Unmarshal(b, &back)
		if _, err := store.VerifyCheckpoints(back, []ed25519.PublicKey{f.pub}); err != nil {
			t.Errorf("exported checkpoints: %v", err)
		}
	})
}
