package backend

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/statewright-go/statewright/store"
)

// Tables names a backend's tables.
type Tables struct {
	Runs, Events, Calls, Snapshots string
	// RunsOrder breaks ties between runs created at the same time, newest
	// first ("rowid DESC", "ord DESC").
	RunsOrder string
	// Dollar numbers placeholders $1, $2, ... (PostgreSQL) instead of ?.
	Dollar bool
	// SessionByRuns finds a session's events through its runs' chains and
	// an index of the events outside any run, for a schema with no index
	// on every event's session (one index leaf fewer per decision).
	SessionByRuns bool
}

// Column lists, in the order the Scan functions read them.
const (
	// RunColumnsNoSnapshot are RunColumnList with NULL for the snapshot:
	// transactions take the snapshot from a cache by its digest.
	RunColumnsNoSnapshot = `id, session_key, workflow_id, workflow_source, NULL, snapshot_digest, state,
	context, history, iterations, counters, files_edited, pending_approval, status, audit_only,
	evidence, revision, created_at, updated_at`
	// RunColumnList are a run's columns as stored: the snapshot column is
	// NULL since schema 3 (snapshots live in their own table; see
	// RunSelect for reading a run with its snapshot).
	RunColumnList = `id, session_key, workflow_id, workflow_source, snapshot, snapshot_digest, state,
	context, history, iterations, counters, files_edited, pending_approval, status, audit_only,
	evidence, revision, created_at, updated_at`
	CallColumnList  = `tool_use_id, phase, session_key, run_id, state, outcome, effects, status, created_at, settled_at`
	EventColumnList = `seq, run_id, session_key, time, kind, state, tool, input_digest, decision, rule, reason,
	tool_use_id, data, prev_hash, hash, chain, chain_seq`
	// LiveStatusSQL is the SQL list of live statuses.
	LiveStatusSQL = `('active', 'awaiting_approval', 'paused')`
)

// RunSelect lists the columns ScanRun reads, the snapshot taken from t's
// snapshots table by the run's digest.
func RunSelect(t Tables) string {
	return strings.Replace(RunColumnsNoSnapshot, "NULL", "(SELECT body FROM "+t.Snapshots+" WHERE digest = snapshot_digest)", 1)
}

// Scanner is a row: *sql.Row, *sql.Rows, pgx.Row, pgx.Rows.
type Scanner interface{ Scan(dest ...any) error }

// Bool scans a boolean stored as a BOOLEAN or as an INTEGER 0/1.
type Bool bool

// Scan implements sql.Scanner.
func (b *Bool) Scan(src any) error {
	switch v := src.(type) {
	case bool:
		*b = Bool(v)
	case int64:
		*b = v != 0
	case nil:
		*b = false
	default:
		return fmt.Errorf("store: cannot scan %T into a boolean", src)
	}
	return nil
}

// ScanRun reads a run selected with RunColumnList.
func ScanRun(sc Scanner) (*store.Run, error) {
	var (
		r                                        store.Run
		snapshot, ctxJSON, hist, counters, files []byte
		approval, evidence                       []byte
		status                                   string
		audit                                    Bool
		created, updated                         int64
	)
	if err := sc.Scan(&r.ID, &r.SessionKey, &r.WorkflowID, &r.WorkflowSource, &snapshot, &r.SnapshotDigest,
		&r.State, &ctxJSON, &hist, &r.Iterations, &counters, &files, &approval, &status, &audit,
		&evidence, &r.Revision, &created, &updated); err != nil {
		return nil, err
	}
	r.Status = store.Status(status)
	r.AuditOnly = bool(audit)
	if len(snapshot) > 0 {
		r.Snapshot = snapshot
	}
	r.Context, r.History, r.Evidence = RawJSON(ctxJSON), RawJSON(hist), RawJSON(evidence)
	r.CreatedAt, r.UpdatedAt = FromNanos(created), FromNanos(updated)
	if err := DecodeRunColumns(&r, counters, files, approval); err != nil {
		return nil, err
	}
	return &r, nil
}

// ScanCall reads a call record selected with CallColumnList.
func ScanCall(sc Scanner) (*store.Call, error) {
	var (
		c                store.Call
		phase, status    string
		outcome, effects []byte
		created, settled int64
	)
	if err := sc.Scan(&c.ToolUseID, &phase, &c.SessionKey, &c.RunID, &c.State, &outcome, &effects, &status, &created, &settled); err != nil {
		return nil, err
	}
	c.Phase, c.Status = store.Phase(phase), store.CallStatus(status)
	c.Outcome, c.Effects = RawJSON(outcome), RawJSON(effects)
	c.CreatedAt, c.SettledAt = FromNanos(created), FromNanos(settled)
	return &c, nil
}

// ScanEvent reads an event selected with EventColumnList into e.
func ScanEvent(sc Scanner, e *store.Event) error {
	var (
		t    int64
		kind string
		data []byte
	)
	if err := sc.Scan(&e.Seq, &e.RunID, &e.SessionKey, &t, &kind, &e.State, &e.Tool, &e.InputDigest,
		&e.Decision, &e.Rule, &e.Reason, &e.ToolUseID, &data, &e.PrevHash, &e.Hash, &e.Chain, &e.ChainSeq); err != nil {
		return err
	}
	e.Time = FromNanos(t)
	e.Kind = store.EventKind(kind)
	e.Data = RawJSON(data)
	return nil
}

// where collects a query's conditions and their arguments.
type where struct {
	dollar bool
	conds  []string
	args   []any
}

// add appends cond, whose ? placeholders take args in order.
func (w *where) add(cond string, args ...any) {
	if !w.dollar {
		w.conds = append(w.conds, cond)
		w.args = append(w.args, args...)
		return
	}
	var b strings.Builder
	for _, r := range cond {
		if r != '?' {
			b.WriteRune(r)
			continue
		}
		w.args = append(w.args, args[0])
		args = args[1:]
		b.WriteString("$" + strconv.Itoa(len(w.args)))
	}
	w.conds = append(w.conds, b.String())
}

// in adds "col IN (...)" for vals.
func (w *where) in(col string, vals []string) {
	args := make([]any, len(vals))
	for i, v := range vals {
		args[i] = v
	}
	w.add(col+" IN ("+strings.TrimSuffix(strings.Repeat("?,", len(vals)), ",")+")", args...)
}

func (w *where) sql() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}

// CallsQuery is the query behind Store.Calls: a run's call records,
// oldest first, found through the calls' primary key by the run's session.
func CallsQuery(t Tables) string {
	p := func(n int) string {
		if t.Dollar {
			return "$" + strconv.Itoa(n)
		}
		return "?"
	}
	return "SELECT " + CallColumnList + " FROM " + t.Calls + " WHERE session_key = (SELECT session_key FROM " + t.Runs +
		" WHERE id = " + p(1) + ") AND run_id = " + p(2) + " ORDER BY created_at, tool_use_id, phase DESC"
}

// RunsQuery is the query behind Store.Runs: runs matching f, newest first.
func RunsQuery(t Tables, f store.RunFilter) (string, []any) {
	w := where{dollar: t.Dollar}
	if f.SessionKey != "" {
		w.add("session_key = ?", f.SessionKey)
	}
	if f.LiveOnly {
		w.add("status IN " + LiveStatusSQL)
	}
	if len(f.Statuses) > 0 {
		st := make([]string, len(f.Statuses))
		for i, x := range f.Statuses {
			st[i] = string(x)
		}
		w.in("status", st)
	}
	q := "SELECT " + RunSelect(t) + " FROM " + t.Runs + w.sql() + " ORDER BY created_at DESC, " + t.RunsOrder
	if f.Limit > 0 {
		q += " LIMIT " + strconv.Itoa(f.Limit)
	}
	return q, w.args
}

// EventsQuery is the query behind Store.Events: events matching f in Seq order.
func EventsQuery(t Tables, f store.EventFilter) (string, []any) {
	w := where{dollar: t.Dollar}
	if f.RunID != "" {
		// A run's events are its chain, found through the chain index;
		// the legacy chain's through its own index on run_id. The
		// chain <> '' and chain = '' terms let each partial index serve.
		w.add("((chain = ? AND chain <> '') OR (chain = '' AND run_id = ?))", f.RunID, f.RunID)
	}
	switch {
	case f.SessionKey != "" && t.SessionByRuns:
		// Each arm is one index: the events outside any run by session,
		// the chains of the session's runs, the legacy chain by run_id
		// (every event of a run belongs to the run's session).
		// PostgreSQL cannot probe an index with IN (subquery) under OR
		// (it filters a scan of every event by a hashed subplan), but can
		// with = ANY of the subquery's array.
		in := func(col string) string {
			runs := "(SELECT id FROM " + t.Runs + " WHERE session_key = ?)"
			if t.Dollar {
				return col + " = ANY(ARRAY" + runs + ")"
			}
			return col + " IN " + runs
		}
		w.add("session_key = ? AND ((session_key = ? AND run_id = '') OR (chain <> '' AND "+in("chain")+
			") OR (chain = '' AND "+in("run_id")+"))", f.SessionKey, f.SessionKey, f.SessionKey, f.SessionKey)
	case f.SessionKey != "":
		w.add("session_key = ?", f.SessionKey)
	}
	if f.ToolUseID != "" {
		w.add("tool_use_id = ?", f.ToolUseID)
	}
	if len(f.Kinds) > 0 {
		k := make([]string, len(f.Kinds))
		for i, x := range f.Kinds {
			k[i] = string(x)
		}
		w.in("kind", k)
	}
	if f.AfterSeq > 0 {
		w.add("seq > ?", f.AfterSeq)
	}
	if !f.Since.IsZero() {
		w.add("time >= ?", f.Since.UnixNano())
	}
	q := "SELECT " + EventColumnList + " FROM " + t.Events + w.sql()
	if f.Newest && f.Limit > 0 {
		q = "SELECT * FROM (" + q + " ORDER BY seq DESC LIMIT " + strconv.Itoa(f.Limit) + ") newest ORDER BY seq"
	} else {
		q += " ORDER BY seq"
		if f.Limit > 0 {
			q += " LIMIT " + strconv.Itoa(f.Limit)
		}
	}
	return q, w.args
}

// Rows is a result set: *sql.Rows, pgx.Rows.
type Rows interface {
	Scanner
	Next() bool
	Err() error
}

// Collect scans every row with scan, then checks the rows' error.
func Collect[T any](rows Rows, scan func(Scanner) (T, error)) ([]T, error) {
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// ScanEventValue is ScanEvent for Collect.
func ScanEventValue(sc Scanner) (store.Event, error) {
	var e store.Event
	err := ScanEvent(sc, &e)
	return e, err
}

// ScanCallValue is ScanCall for Collect.
func ScanCallValue(sc Scanner) (store.Call, error) {
	c, err := ScanCall(sc)
	if err != nil {
		return store.Call{}, err
	}
	return *c, nil
}
