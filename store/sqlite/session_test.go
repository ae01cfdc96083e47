package sqlite

import (
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
	storetest.SessionEvents(t, s)

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
