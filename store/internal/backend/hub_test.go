package backend

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/statewright-go/statewright/store"
)

func recv(t *testing.T, ch <-chan store.Change) store.Change {
	t.Helper()
	select {
	case c, ok := <-ch:
		if !ok {
			t.Fatal("channel closed")
		}
		return c
	case <-time.After(10 * time.Second): // liveness bound
		t.Fatal("no change")
	}
	return store.Change{}
}

func TestHubCoalescesPerRun(t *testing.T) {
	h := NewHub()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := h.Subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Nobody receives yet: three writes to run a, one to b, a stale one to a.
	// The publisher never blocks.
	h.Publish(store.Change{RunID: "a", Revision: 2})
	h.Publish(store.Change{RunID: "b", Revision: 7})
	h.Publish(store.Change{RunID: "a", Revision: 4, State: "review"})
	h.Publish(store.Change{RunID: "a", Revision: 3})
	// The receiver goroutine may already hold a's first change; after it,
	// a arrives once at its newest revision, and b once.
	got := map[string][]int64{}
	for len(got["b"]) == 0 || len(got["a"]) == 0 || got["a"][len(got["a"])-1] != 4 {
		c := recv(t, ch)
		got[c.RunID] = append(got[c.RunID], c.Revision)
	}
	if a := got["a"]; len(a) > 2 || (len(a) == 2 && a[0] != 2) {
		t.Errorf("run a delivered as %v; want [4] or [2 4]", a)
	}
	if b := got["b"]; len(b) != 1 || b[0] != 7 {
		t.Errorf("run b delivered as %v; want [7]", b)
	}
	if h.Subscribers() != 1 {
		t.Errorf("subscribers = %d", h.Subscribers())
	}
	// Resync has its own slot.
	h.Publish(store.Change{})
	if c := recv(t, ch); !c.Resync() {
		t.Errorf("got %+v, want a resync", c)
	}
	// Closing the hub closes the channel and refuses new subscribers.
	h.Close()
	for range ch {
	}
	if _, err := h.Subscribe(ctx); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Subscribe after Close: %v", err)
	}
}

func TestHubContextEndsSubscription(t *testing.T) {
	h := NewHub()
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := h.Subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	for range ch {
	}
	deadline := time.Now().Add(10 * time.Second)
	for h.Subscribers() != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := h.Subscribers(); n != 0 {
		t.Errorf("subscribers after cancel = %d", n)
	}
	h.Publish(store.Change{RunID: "x", Revision: 1}) // no one left: must not block
}

func TestChangeOf(t *testing.T) {
	r := &store.Run{ID: "run_1", SessionKey: "cc:s", Revision: 3, Status: store.StatusAwaitingApproval, State: "review",
		PendingApproval: &store.Approval{ID: "apr_1"}}
	want := store.Change{RunID: "run_1", SessionKey: "cc:s", Revision: 3, Status: store.StatusAwaitingApproval, State: "review", ApprovalID: "apr_1"}
	if got := ChangeOf(r); got != want {
		t.Errorf("ChangeOf = %+v, want %+v", got, want)
	}
}
