package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/internal/backend"
)

// tables names the tables for the shared queries.
var tables = backend.Tables{Runs: "statewright_runs", Events: "statewright_events", Calls: "statewright_calls",
	RunsOrder: "ord DESC", Dollar: true}

// Update runs fn in one transaction on sessionKey, holding the session's
// advisory lock from before it reads the live run until it commits.
//
// The transaction is driven by hand on one pooled connection so that
// statements travel in pipelines: BEGIN, the lock and the read of the run
// are one round trip; the buffered event inserts, the chain head and
// COMMIT another.
func (s *Store) Update(ctx context.Context, sessionKey string, fn func(tx store.Tx) error) (err error) {
	if err := s.check("update"); err != nil {
		return err
	}
	if sessionKey == "" {
		return fmt.Errorf("store: update: %w: empty session key", store.ErrInvalid)
	}
	op := "update " + sessionKey
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return s.mapErr(op+": connect", err)
	}
	t := &tx{TxBase: backend.TxBase{Key: sessionKey, At: s.now().UTC()}, ctx: ctx, s: s, conn: conn.Conn()}
	committed := false
	defer func() {
		if !committed {
			t.rollback(conn)
		}
		conn.Release()
	}()
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue("SELECT pg_advisory_xact_lock($1)", lockKey("session", s.schema, sessionKey))
	b.Queue("SELECT "+backend.RunColumnList+" FROM statewright_runs WHERE session_key = $1 AND status IN "+backend.LiveStatusSQL, sessionKey)
	br := t.conn.SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		br.Close()
		return s.mapErr(op+": begin", err)
	}
	if _, err := br.Exec(); err != nil {
		br.Close()
		return s.mapErr(op+": lock the session", err)
	}
	live, err := backend.ScanRun(br.QueryRow())
	if cerr := br.Close(); err == nil && cerr != nil {
		err = cerr
	}
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return s.mapErr(op+": read run", err)
	default:
		t.Begin(live)
	}
	ferr := fn(t)
	t.Done = true
	if ferr != nil {
		return ferr
	}
	if err := t.commit(); err != nil {
		return s.mapErr(op+": commit", err)
	}
	committed = true
	return nil
}

type tx struct {
	backend.TxBase
	ctx  context.Context
	s    *Store
	conn *pgx.Conn

	headLocked bool
	headSeq    int64
	headHash   string
	events     []store.Event // appended, inserted at commit
}

// rollback ends an uncommitted transaction; a connection that cannot roll
// back (broken, or cancelled mid-statement) is closed so the pool drops it.
func (t *tx) rollback(conn *pgxpool.Conn) {
	c := conn.Conn()
	if c.IsClosed() {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(t.ctx), 5*time.Second)
	defer cancel()
	if _, err := c.Exec(ctx, "ROLLBACK"); err != nil {
		c.Close(ctx)
	}
}

// commit inserts the buffered events, advances the chain head and commits
// in one round trip; a COMMIT that rolled back (an earlier statement
// failed) is an error.
func (t *tx) commit() error {
	b := &pgx.Batch{}
	for i := range t.events {
		e := &t.events[i]
		var data *string
		if e.Data != nil {
			d := string(e.Data)
			data = &d
		}
		b.Queue(`INSERT INTO statewright_events (seq, run_id, session_key, time, kind, state, tool,
			input_digest, decision, rule, reason, tool_use_id, data, prev_hash, hash)
			VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15)`,
			e.Seq, e.RunID, e.SessionKey, e.Time.UnixNano(), string(e.Kind), e.State, e.Tool, e.InputDigest,
			e.Decision, e.Rule, e.Reason, e.ToolUseID, data, e.PrevHash, e.Hash)
	}
	if t.headLocked && len(t.events) > 0 {
		b.Queue("UPDATE statewright_chain SET head_seq = $1, head_hash = $2 WHERE id = 1", t.headSeq, t.headHash)
	}
	b.Queue("COMMIT")
	br := t.conn.SendBatch(t.ctx, b)
	defer br.Close()
	for i := 0; i < b.Len()-1; i++ {
		if _, err := br.Exec(); err != nil {
			return err
		}
	}
	tag, err := br.Exec()
	if err != nil {
		return err
	}
	if tag.String() != "COMMIT" {
		return fmt.Errorf("the transaction was rolled back (%s): an earlier statement failed", tag)
	}
	return br.Close()
}

// Call implements store.Tx.
func (t *tx) Call(toolUseID string, phase store.Phase) (*store.Call, error) {
	if err := t.Use("call"); err != nil {
		return nil, err
	}
	c, err := backend.ScanCall(t.conn.QueryRow(t.ctx, "SELECT "+backend.CallColumnList+
		" FROM statewright_calls WHERE session_key = $1 AND tool_use_id = $2 AND phase = $3", t.Key, toolUseID, string(phase)))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("store: call %s/%s: %w", toolUseID, phase, store.ErrNotFound)
	}
	if err != nil {
		return nil, t.s.mapErr("call "+toolUseID, err)
	}
	return c, nil
}

// Put implements store.Tx: insert, or update with compare-and-swap on
// revision. Either statement also queues the run's NOTIFY for the commit.
func (t *tx) Put(r *store.Run) error {
	if err := t.Use("put run"); err != nil {
		return err
	}
	if err := backend.PrepareRun(r, t.Key); err != nil {
		return err
	}
	cols, err := backend.EncodeRunColumns(r)
	if err != nil {
		return err
	}
	if r.ID == "" {
		err = t.insertRun(r, cols)
	} else {
		err = t.updateRun(r, cols)
	}
	if err != nil {
		return err
	}
	t.Wrote(r)
	return nil
}

// notifyPayload is the JSON a NOTIFY carries: the store.Change of the write.
func notifyPayload(r *store.Run) (string, error) {
	b, err := json.Marshal(backend.ChangeOf(r))
	return string(b), err
}

func (t *tx) insertRun(r *store.Run, c backend.RunColumns) error {
	id, err := backend.NewID("run_", 12)
	if err != nil {
		return err
	}
	dg := backend.SnapshotDigestOf(r.Snapshot)
	w := r.Clone()
	w.ID, w.Revision, w.SnapshotDigest = id, 1, dg
	payload, err := notifyPayload(w)
	if err != nil {
		return fmt.Errorf("store: create run: %w", err)
	}
	n := t.At.UnixNano()
	var inserted int64
	err = t.conn.QueryRow(t.ctx, `WITH i AS (
		INSERT INTO statewright_runs (`+backend.RunColumnList+`)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,1,$17,$17)
		ON CONFLICT DO NOTHING RETURNING 1)
		SELECT count(*) FROM (SELECT pg_notify($18, $19) FROM i) n`,
		id, r.SessionKey, r.WorkflowID, r.WorkflowSource, r.Snapshot, dg, r.State, c.Context, c.History,
		r.Iterations, c.Counters, c.FilesEdited, c.PendingApproval, string(r.Status), r.AuditOnly, c.Evidence,
		n, t.s.channel, payload).Scan(&inserted)
	if err != nil {
		return t.s.mapErr("create run for "+t.Key, err)
	}
	if inserted == 0 {
		return fmt.Errorf("store: create run for %s: %w: the session already has a live run", t.Key, store.ErrConflict)
	}
	r.ID, r.SnapshotDigest, r.Revision, r.CreatedAt, r.UpdatedAt = id, dg, 1, t.At, t.At
	return nil
}

func (t *tx) updateRun(r *store.Run, c backend.RunColumns) error {
	// Making a run live beside another live run of the session would break
	// the unique index and abort the whole transaction: refuse it first
	// (the session lock keeps the answer true until commit).
	if r.Status.Live() && (t.Live == nil || t.Live.ID != r.ID) {
		var (
			rev   *int64
			other bool
		)
		if err := t.conn.QueryRow(t.ctx, `SELECT (SELECT revision FROM statewright_runs WHERE id = $2 AND session_key = $1),
			EXISTS (SELECT 1 FROM statewright_runs WHERE session_key = $1 AND status IN `+backend.LiveStatusSQL+` AND id <> $2)`,
			t.Key, r.ID).Scan(&rev, &other); err != nil {
			return t.s.mapErr("update run "+r.ID, err)
		}
		if rev != nil && *rev == r.Revision && other {
			return fmt.Errorf("store: update run %s: %w: the session already has another live run", r.ID, store.ErrConflict)
		}
	}
	next := r.Revision + 1
	sameSnapshot := t.SameWorkflow(r)
	dg := t.Live.SnapshotDigest
	if !sameSnapshot {
		dg = backend.SnapshotDigestOf(r.Snapshot)
	}
	w := r.Clone()
	w.Revision, w.SnapshotDigest = next, dg
	payload, err := notifyPayload(w)
	if err != nil {
		return fmt.Errorf("store: update run %s: %w", r.ID, err)
	}
	const set = `state = $1, context = $2, history = $3, iterations = $4, counters = $5, files_edited = $6,
		pending_approval = $7, status = $8, audit_only = $9, evidence = $10, revision = $11, updated_at = $12`
	args := []any{r.State, c.Context, c.History, r.Iterations, c.Counters, c.FilesEdited, c.PendingApproval,
		string(r.Status), r.AuditOnly, c.Evidence, next, t.At.UnixNano(), r.ID, t.Key, r.Revision, t.s.channel, payload}
	q := "UPDATE statewright_runs SET " + set
	if !sameSnapshot {
		// The snapshot rarely changes: rewrite it (and its digest) only when it did.
		q += ", workflow_id = $18, workflow_source = $19, snapshot = $20, snapshot_digest = $21"
		args = append(args, r.WorkflowID, r.WorkflowSource, r.Snapshot, dg)
	}
	q = "WITH u AS (" + q + " WHERE id = $13 AND session_key = $14 AND revision = $15 RETURNING 1) SELECT count(*) FROM (SELECT pg_notify($16, $17) FROM u) n"
	var n int64
	if err := t.conn.QueryRow(t.ctx, q, args...).Scan(&n); err != nil {
		return t.s.mapErr("update run "+r.ID, err)
	}
	if n == 0 {
		var rev int64
		err := t.conn.QueryRow(t.ctx, "SELECT revision FROM statewright_runs WHERE id = $1 AND session_key = $2", r.ID, t.Key).Scan(&rev)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("store: update run %s: %w in session %s", r.ID, store.ErrNotFound, t.Key)
		}
		if err != nil {
			return t.s.mapErr("update run "+r.ID, err)
		}
		return fmt.Errorf("store: update run %s: %w: revision %d is stale (stored %d)", r.ID, store.ErrConflict, r.Revision, rev)
	}
	r.Revision, r.SnapshotDigest, r.UpdatedAt = next, dg, t.At
	return nil
}

// lockHead locks the chain's head row until the commit and reads it.
func (t *tx) lockHead() error {
	if t.headLocked {
		return nil
	}
	if err := t.conn.QueryRow(t.ctx, "SELECT head_seq, head_hash FROM statewright_chain WHERE id = 1 FOR UPDATE").
		Scan(&t.headSeq, &t.headHash); err != nil {
		return t.s.mapErr("append: lock the chain head", err)
	}
	t.headLocked = true
	return nil
}

// Append implements store.Tx: each event is chained to the one before it
// (Seq, PrevHash and Hash are set at once); the rows are written at commit.
func (t *tx) Append(events ...*store.Event) error {
	if err := t.Use("append"); err != nil {
		return err
	}
	if len(events) == 0 {
		return nil
	}
	for _, e := range events {
		if err := backend.PrepareEvent(e, t.RunID, t.Key, t.At); err != nil {
			return err
		}
	}
	if err := t.lockHead(); err != nil {
		return err
	}
	for _, e := range events {
		backend.ChainEvent(e, t.headSeq, t.headHash)
		t.events = append(t.events, *e)
		t.headSeq, t.headHash = e.Seq, e.Hash
	}
	return nil
}

// Record implements store.Tx; a post record settles the reserved pre record.
// A duplicate is found with ON CONFLICT DO NOTHING, so it leaves the
// transaction usable, as on SQLite.
func (t *tx) Record(c *store.Call) error {
	if err := t.Use("record call"); err != nil {
		return err
	}
	cols, err := backend.PrepareCall(c, t.Key, t.RunID, t.At)
	if err != nil {
		return err
	}
	outcome, effects, settled := cols.Outcome, cols.Effects, cols.SettledAt
	insert := `INSERT INTO statewright_calls (` + backend.CallColumnList + `) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)
		ON CONFLICT DO NOTHING RETURNING 1`
	args := []any{c.ToolUseID, string(c.Phase), c.SessionKey, c.RunID, c.State, outcome, effects, string(c.Status),
		t.At.UnixNano(), settled}
	var q string
	if c.Phase == store.PhasePost {
		q = `WITH i AS (` + insert + `), u AS (UPDATE statewright_calls SET status = $11, settled_at = $10
			WHERE session_key = $3 AND tool_use_id = $1 AND phase = 'pre' AND status = 'reserved'
			AND EXISTS (SELECT 1 FROM i)) SELECT count(*) FROM i`
		args = append(args, string(c.SettlesAs()))
	} else {
		q = `WITH i AS (` + insert + `) SELECT count(*) FROM i`
	}
	var n int64
	if err := t.conn.QueryRow(t.ctx, q, args...).Scan(&n); err != nil {
		return t.s.mapErr("record call "+c.ToolUseID, err)
	}
	if n == 0 {
		return fmt.Errorf("store: record call %s/%s: %w", c.ToolUseID, c.Phase, store.ErrDuplicate)
	}
	return nil
}
