package sqlite

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/internal/backend"
	"github.com/statewright-go/statewright/store/storetest"
)

// TestSessionEventsThroughRuns: without an index on every event's session
// (migration 5), a session's events are still exactly those whose
// session_key is the session's, whatever the filter: events outside any
// run, in its runs' chains, in a run that ended, beside other sessions'
// and the store's own; and the query reads indexes only.
func TestSessionEventsThroughRuns(t *testing.T) {
	s, _ := openTemp(t, Options{})
	dormant := func(key, id string) {
		t.Helper()
		if err := s.Update(bg, key, func(tx store.Tx) error {
			return tx.Append(&store.Event{Kind: store.KindDecision, Tool: "Read", ToolUseID: id})
		}); err != nil {
			t.Fatal(err)
		}
	}
	dormant("cc:a", "a0")
	first := storetest.Create(t, s, "cc:a")
	storetest.Create(t, s, "cc:b")
	for i := 0; i < 3; i++ {
		for _, key := range []string{"cc:a", "cc:b"} {
			if _, _, err := storetest.Decide(bg, s, key, fmt.Sprintf("%s-%d", key, i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The first run ends; the session decides dormant, then runs again.
	if err := s.Update(bg, "cc:a", func(tx store.Tx) error {
		r := tx.Run()
		r.Status = store.StatusCompleted
		return tx.Put(r)
	}); err != nil {
		t.Fatal(err)
	}
	dormant("cc:a", "a-between")
	storetest.Create(t, s, "cc:a")
	if _, _, err := storetest.Decide(bg, s, "cc:a", "a-second"); err != nil {
		t.Fatal(err)
	}
	dormant("cc:c", "c0")
	if _, err := s.Prune(bg, store.Retention{Keep: 100}); err != nil { // an event of the store's own
		t.Fatal(err)
	}

	all, err := s.Events(bg, store.EventFilter{})
	if err != nil {
		t.Fatal(err)
	}
	filters := []store.EventFilter{
		{},
		{Kinds: []store.EventKind{store.KindDecision}},
		{AfterSeq: 4},
		{Limit: 3},
		{Limit: 3, Newest: true},
		{RunID: first.ID},
	}
	for _, key := range []string{"cc:a", "cc:b", "cc:c", "cc:nobody", ""} {
		for _, f := range filters {
			f.SessionKey = key
			var want []int64
			n := 0
			for _, e := range all {
				if key != "" && e.SessionKey != key || f.RunID != "" && e.RunID != f.RunID || e.Seq <= f.AfterSeq ||
					len(f.Kinds) > 0 && !slices.Contains(f.Kinds, e.Kind) {
					continue
				}
				want = append(want, e.Seq)
				n++
			}
			if f.Limit > 0 && len(want) > f.Limit {
				if f.Newest {
					want = want[len(want)-f.Limit:]
				} else {
					want = want[:f.Limit]
				}
			}
			evs, err := s.Events(bg, f)
			var got []int64
			for _, e := range evs {
				got = append(got, e.Seq)
			}
			if err != nil || !slices.Equal(got, want) {
				t.Errorf("Events(%+v) = %v, %v; want %v", f, got, err, want)
			}
		}
	}
	if evs, _ := s.Events(bg, store.EventFilter{SessionKey: "cc:a"}); len(evs) != 6 {
		t.Errorf("session cc:a has %d events; want 6 (two outside runs, three in the first run, one in the second)", len(evs))
	}

	q, args := backend.EventsQuery(tables, store.EventFilter{SessionKey: "cc:a", Kinds: []store.EventKind{store.KindDecision}})
	rows, err := s.db.QueryContext(bg, "EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if p := strings.Join(plan, "; "); strings.Contains(p, "SCAN events") || !strings.Contains(p, "events_outside_runs") || !strings.Contains(p, "events_chain") {
		t.Errorf("a session's events are read with plan %q; want the indexes only", p)
	}
}
