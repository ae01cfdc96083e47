package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/statewright-go/statewright/store"
)

// SharedFactory opens two handles on one fresh, empty store, as two
// processes (hooks, or two `serve` replicas) would: separate connections,
// nothing shared in memory. The suite closes both.
type SharedFactory func(t *testing.T) (a, b store.Store)

// RunShared runs the tests of what several processes sharing one store
// must see: each other's writes, exact counts under concurrent writers on
// both handles, and (for a store.Watcher) each other's changes pushed.
func RunShared(t *testing.T, open SharedFactory) {
	tests := []struct {
		name string
		fn   func(t *testing.T, a, b store.Store)
	}{
		{"SameStore", testSameStore},
		{"ConcurrentAcrossHandles", testConcurrentAcross},
		{"WatchAcrossHandles", testWatchAcross},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := open(t)
			defer a.Close()
			defer b.Close()
			tc.fn(t, a, b)
		})
	}
}

func testSameStore(t *testing.T, a, b store.Store) {
	if a.StoreID() == "" || a.StoreID() != b.StoreID() {
		t.Fatalf("store ids %q and %q; want one id", a.StoreID(), b.StoreID())
	}
	r := Create(t, a, "cc:shared")
	if _, _, err := Decide(bg, b, "cc:shared", "toolu_1"); err != nil {
		t.Fatal(err)
	}
	// The retry reaches the other handle: replayed, not counted.
	if out, rep, err := Decide(bg, a, "cc:shared", "toolu_1"); err != nil || !rep || out != "allow #1" {
		t.Fatalf("retry on the other handle = %q, replayed %v, %v", out, rep, err)
	}
	got, err := a.Run(bg, r.ID)
	if err != nil || got.Iterations != 1 || got.Revision != 2 {
		t.Fatalf("run read through a = %+v, %v; want 1 iteration at revision 2", got, err)
	}
	// A stale revision from one handle loses against a write through the other.
	stale := mustLive(t, b, "cc:shared")
	if _, _, err := Decide(bg, a, "cc:shared", "toolu_2"); err != nil {
		t.Fatal(err)
	}
	err = b.Update(bg, "cc:shared", func(tx store.Tx) error { return tx.Put(stale) })
	if !errors.Is(err, store.ErrConflict) {
		t.Errorf("stale put through b: err = %v, want ErrConflict", err)
	}
	for _, s := range []store.Store{a, b} {
		if st := mustVerify(t, s); st.Events != 2 {
			t.Errorf("chain seen through one handle has %d events, want 2", st.Events)
		}
	}
}

// testConcurrentAcross: writers on both handles, on shared and own
// sessions, every call sent twice (to either handle): no count lost or
// doubled, one gapless chain.
func testConcurrentAcross(t *testing.T, a, b store.Store) {
	const workers, per, sessions = 8, 20, 4
	for i := 0; i < sessions; i++ {
		Create(t, a, fmt.Sprintf("cc:x%d", i))
	}
	handles := []store.Store{a, b}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < per; i++ {
				key := fmt.Sprintf("cc:x%d", (w+i)%sessions)
				id := fmt.Sprintf("toolu_%d_%d", w, i)
				for k := 0; k < 2; k++ {
					if _, _, err := Decide(bg, handles[(w+i+k)%2], key, id); err != nil {
						errs <- err
						return
					}
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var total int64
	for i := 0; i < sessions; i++ {
		r := mustLive(t, b, fmt.Sprintf("cc:x%d", i))
		total += r.Iterations
		if r.Revision != r.Iterations+1 {
			t.Errorf("session %d: revision %d after %d iterations", i, r.Revision, r.Iterations)
		}
	}
	if total != workers*per {
		t.Errorf("iterations = %d, want %d", total, workers*per)
	}
	if st := mustVerify(t, a); st.Events != workers*per {
		t.Errorf("events = %d, want %d", st.Events, workers*per)
	}
}

// testWatchAcross: a watcher on one handle sees the other handle's
// writes: a start, decisions, a park for approval (with its id), the
// approval, the end.
func testWatchAcross(t *testing.T, a, b store.Store) {
	w, ok := b.(store.Watcher)
	if !ok {
		t.Skip("the backend does not implement store.Watcher")
	}
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	ch, err := w.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := Create(t, a, "cc:w")
	wait := func(what string, ok func(c store.Change) bool) store.Change {
		t.Helper()
		timeout := time.After(20 * time.Second) // a liveness bound, not a latency assertion
		for {
			select {
			case c, open := <-ch:
				if !open {
					t.Fatalf("%s: the watch channel closed", what)
				}
				if !c.Resync() && c.RunID != r.ID {
					t.Fatalf("%s: change of an unknown run %+v", what, c)
				}
				if ok(c) {
					return c
				}
			case <-timeout:
				t.Fatalf("%s: no change arrived", what)
			}
		}
	}
	wait("start", func(c store.Change) bool { return c.RunID == r.ID && c.Status == store.StatusActive })
	if _, _, err := Decide(bg, a, "cc:w", "toolu_w1"); err != nil {
		t.Fatal(err)
	}
	wait("decision", func(c store.Change) bool { return c.Revision >= 2 })
	err = a.Update(bg, "cc:w", func(tx store.Tx) error {
		run := tx.Run()
		run.Status = store.StatusAwaitingApproval
		run.PendingApproval = &store.Approval{ID: "apr_w", From: run.State, To: "review", Revision: run.Revision,
			RequestedAt: tx.Now(), ExpiresAt: tx.Now().Add(time.Hour)}
		if err := tx.Put(run); err != nil {
			return err
		}
		data, _ := json.Marshal(map[string]string{"approval": "apr_w", "status": "requested"})
		return tx.Append(&store.Event{Kind: store.KindApproval, Data: data})
	})
	if err != nil {
		t.Fatal(err)
	}
	c := wait("approval requested", func(c store.Change) bool { return c.Status == store.StatusAwaitingApproval })
	if c.ApprovalID != "apr_w" || c.SessionKey != "cc:w" || c.Revision != 3 {
		t.Errorf("approval change = %+v; want apr_w on cc:w at revision 3", c)
	}
	err = a.Update(bg, "cc:w", func(tx store.Tx) error {
		run := tx.Run()
		run.Status, run.State, run.PendingApproval = store.StatusActive, "review", nil
		return tx.Put(run)
	})
	if err != nil {
		t.Fatal(err)
	}
	c = wait("approval granted", func(c store.Change) bool { return c.State == "review" })
	if c.Status != store.StatusActive || c.ApprovalID != "" || c.Revision != 4 {
		t.Errorf("granted change = %+v; want active in review at revision 4", c)
	}
	err = a.Update(bg, "cc:w", func(tx store.Tx) error {
		run := tx.Run()
		run.Status = store.StatusCompleted
		return tx.Put(run)
	})
	if err != nil {
		t.Fatal(err)
	}
	wait("completed", func(c store.Change) bool { return c.Status == store.StatusCompleted && c.Revision == 5 })
	// Closing the store ends the watch.
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	for range ch {
	}
}
