package postgres

import (
	"testing"

	"github.com/statewright-go/statewright/store"
)

// TestSessionCacheBackoff: a session found stale again and again reads for
// longer each time (8, 16, 32 transactions), a transaction that reads keeps
// the countdown, and one that commits from the copy starts over.
func TestSessionCacheBackoff(t *testing.T) {
	var c sessionCache
	entry := func() *cachedSession {
		return &cachedSession{heads: map[string]store.Head{"session:k": {Chain: "session:k"}}}
	}
	reads := func() int { // transactions that read before the copy is tried again
		n := 0
		for c.get("k") == nil {
			n++
			c.put("k", entry(), false)
			if n > 1000 {
				t.Fatal("the copy is never tried again")
			}
		}
		return n
	}
	c.put("k", entry(), false)
	if c.get("k") == nil {
		t.Fatal("a fresh copy is not used")
	}
	for _, want := range []int{8, 16, 32} {
		c.stale("k")
		if got := reads(); got != want {
			t.Fatalf("after a stale copy: %d reading transactions, want %d", got, want)
		}
	}
	c.put("k", entry(), true) // committed from the copy
	c.stale("k")
	if got := reads(); got != staleSkip {
		t.Fatalf("after a commit from the copy and one stale copy: %d reading transactions, want %d", got, staleSkip)
	}
}
