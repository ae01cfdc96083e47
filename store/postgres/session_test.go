package postgres

import (
	"strings"
	"testing"

	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/internal/backend"
	"github.com/statewright-go/statewright/store/storetest"
)

// TestSessionEventsThroughRuns: without an index on every event's session
// (migration 5), a session's events are exactly those whose session_key
// is the session's, whatever the filter, and the query can read them
// through index probes only (with sequential scans priced out: on a small
// table the planner would rightly prefer one).
func TestSessionEventsThroughRuns(t *testing.T) {
	s, u := openTemp(t, Options{})
	storetest.SessionEvents(t, s)

	q, args := backend.EventsQuery(tables, store.EventFilter{SessionKey: "cc:a", Kinds: []store.EventKind{store.KindDecision}})
	c := rawConn(t, u)
	if _, err := c.Exec(bg, "SET enable_seqscan = off"); err != nil {
		t.Fatal(err)
	}
	rows, err := c.Query(bg, "EXPLAIN "+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, strings.TrimSpace(line))
	}
	// Each arm probes its index: a scan of a whole partial index filtered
	// by a hashed subplan (IN (subquery) under OR) reads every event.
	if p := strings.Join(plan, "; "); strings.Contains(p, "Seq Scan on statewright_events") || strings.Contains(p, "SubPlan") ||
		!strings.Contains(p, "statewright_events_outside_runs") || !strings.Contains(p, "Index Cond: (chain = ") {
		t.Errorf("a session's events are read with plan %q; want the indexes only", p)
	}
}
