package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/statewright-go/statewright/store"
)

const runColumns = `id, session_key, workflow_id, workflow_source, snapshot, snapshot_digest, state,
	context, history, iterations, counters, files_edited, pending_approval, status, audit_only,
	evidence, revision, created_at, updated_at`

const liveStatusSQL = `('active', 'awaiting_approval', 'paused')`

type rowScanner interface{ Scan(dest ...any) error }

func scanRun(sc rowScanner) (*store.Run, error) {
	var (
		r                                        store.Run
		snapshot, ctxJSON, hist, counters, files []byte
		approval, evidence                       []byte
		status                                   string
		audit                                    int64
		created, updated                         int64
	)
	if err := sc.Scan(&r.ID, &r.SessionKey, &r.WorkflowID, &r.WorkflowSource, &snapshot, &r.SnapshotDigest,
		&r.State, &ctxJSON, &hist, &r.Iterations, &counters, &files, &approval, &status, &audit,
		&evidence, &r.Revision, &created, &updated); err != nil {
		return nil, err
	}
	r.Status = store.Status(status)
	r.AuditOnly = audit != 0
	r.Snapshot = snapshot
	r.Context = store.RawJSON(ctxJSON)
	r.History = store.RawJSON(hist)
	r.Evidence = store.RawJSON(evidence)
	r.CreatedAt = store.FromNanos(created)
	r.UpdatedAt = store.FromNanos(updated)
	if err := store.DecodeRunColumns(&r, counters, files, approval); err != nil {
		return nil, err
	}
	return &r, nil
}

// runArgs encodes the mutable columns of r in runColumns order from state on.
func runArgs(r *store.Run) ([]any, error) {
	c, err := store.EncodeRunColumns(r)
	if err != nil {
		return nil, err
	}
	audit := 0
	if r.AuditOnly {
		audit = 1
	}
	return []any{r.State, c.Context, c.History, r.Iterations, c.Counters, c.FilesEdited, c.PendingApproval,
		string(r.Status), audit, c.Evidence}, nil
}

// Update runs fn in one BEGIN IMMEDIATE transaction on sessionKey.
func (s *Store) Update(ctx context.Context, sessionKey string, fn func(tx store.Tx) error) error {
	if err := s.check("update"); err != nil {
		return err
	}
	if sessionKey == "" {
		return fmt.Errorf("store: update: %w: empty session key", store.ErrInvalid)
	}
	sqlTx, release, err := s.beginWrite(ctx, "update "+sessionKey)
	if err != nil {
		return err
	}
	defer release()
	t := &tx{ctx: ctx, s: s, tx: sqlTx, key: sessionKey, now: s.now().UTC()}
	row := sqlTx.QueryRowContext(ctx, "SELECT "+runColumns+" FROM runs WHERE session_key = ? AND status IN "+liveStatusSQL, sessionKey)
	live, err := scanRun(row)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return mapErr("update "+sessionKey+": read run", err)
	default:
		t.live = live
		t.runID = live.ID
	}
	err = fn(t)
	t.done = true
	if err != nil {
		return err
	}
	if err := sqlTx.Commit(); err != nil {
		return mapErr("update "+sessionKey+": commit", err)
	}
	return nil
}

type tx struct {
	ctx   context.Context
	s     *Store
	tx    *sql.Tx
	key   string
	now   time.Time
	live  *store.Run // the live run as last read or written
	runID string     // the run events and calls default to
	done  bool

	headLoaded bool
	headSeq    int64
	headHash   string
}

// SessionKey implements store.Tx.
func (t *tx) SessionKey() string { return t.key }

// Now implements store.Tx.
func (t *tx) Now() time.Time { return t.now }

// Run implements store.Tx.
func (t *tx) Run() *store.Run { return t.live.Clone() }

func (t *tx) use(op string) error {
	if t.done {
		return fmt.Errorf("store: %s: %w: transaction is over", op, store.ErrInvalid)
	}
	return nil
}

// Call implements store.Tx.
func (t *tx) Call(toolUseID string, phase store.Phase) (*store.Call, error) {
	if err := t.use("call"); err != nil {
		return nil, err
	}
	row := t.tx.QueryRowContext(t.ctx, "SELECT "+callColumns+" FROM calls WHERE session_key = ? AND tool_use_id = ? AND phase = ?",
		t.key, toolUseID, string(phase))
	c, err := scanCall(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: call %s/%s: %w", toolUseID, phase, store.ErrNotFound)
	}
	if err != nil {
		return nil, mapErr("call "+toolUseID, err)
	}
	return c, nil
}

// Put implements store.Tx: insert, or update with compare-and-swap on revision.
func (t *tx) Put(r *store.Run) error {
	if err := t.use("put run"); err != nil {
		return err
	}
	if err := store.PrepareRun(r, t.key); err != nil {
		return err
	}
	args, err := runArgs(r)
	if err != nil {
		return err
	}
	if r.ID == "" {
		err = t.insertRun(r, args)
	} else {
		err = t.updateRun(r, args)
	}
	if err != nil {
		return err
	}
	t.runID = r.ID
	switch {
	case r.Status.Live():
		t.live = r.Clone()
	case t.live != nil && t.live.ID == r.ID:
		t.live = nil
	}
	return nil
}

func (t *tx) insertRun(r *store.Run, args []any) error {
	id, err := newID("run_", 12)
	if err != nil {
		return err
	}
	dg := store.SnapshotDigestOf(r.Snapshot)
	all := append([]any{id, r.SessionKey, r.WorkflowID, r.WorkflowSource, r.Snapshot, dg}, args...)
	all = append(all, int64(1), t.now.UnixNano(), t.now.UnixNano())
	_, err = t.tx.ExecContext(t.ctx, "INSERT INTO runs ("+runColumns+") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", all...)
	if err != nil {
		if isConstraint(err) {
			return fmt.Errorf("store: create run for %s: %w: the session already has a live run", t.key, store.ErrConflict)
		}
		return mapErr("create run for "+t.key, err)
	}
	r.ID, r.SnapshotDigest, r.Revision, r.CreatedAt, r.UpdatedAt = id, dg, 1, t.now, t.now
	return nil
}

func (t *tx) updateRun(r *store.Run, args []any) error {
	const set = `state = ?, context = ?, history = ?, iterations = ?, counters = ?, files_edited = ?,
		pending_approval = ?, status = ?, audit_only = ?, evidence = ?, revision = ?, updated_at = ?`
	next := r.Revision + 1
	var (
		q   string
		all []any
		dg  = r.SnapshotDigest
	)
	// The snapshot rarely changes: rewrite it (and its digest) only when it did.
	if t.live != nil && t.live.ID == r.ID && bytes.Equal(t.live.Snapshot, r.Snapshot) &&
		t.live.WorkflowID == r.WorkflowID && t.live.WorkflowSource == r.WorkflowSource {
		dg = t.live.SnapshotDigest
		q = "UPDATE runs SET " + set + " WHERE id = ? AND session_key = ? AND revision = ?"
		all = append(args, next, t.now.UnixNano(), r.ID, t.key, r.Revision)
	} else {
		dg = store.SnapshotDigestOf(r.Snapshot)
		q = "UPDATE runs SET workflow_id = ?, workflow_source = ?, snapshot = ?, snapshot_digest = ?, " + set +
			" WHERE id = ? AND session_key = ? AND revision = ?"
		all = append([]any{r.WorkflowID, r.WorkflowSource, r.Snapshot, dg}, args...)
		all = append(all, next, t.now.UnixNano(), r.ID, t.key, r.Revision)
	}
	res, err := t.tx.ExecContext(t.ctx, q, all...)
	if err != nil {
		if isConstraint(err) {
			return fmt.Errorf("store: update run %s: %w: the session already has another live run", r.ID, store.ErrConflict)
		}
		return mapErr("update run "+r.ID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return mapErr("update run "+r.ID, err)
	}
	if n == 0 {
		var rev int64
		err := t.tx.QueryRowContext(t.ctx, "SELECT revision FROM runs WHERE id = ? AND session_key = ?", r.ID, t.key).Scan(&rev)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("store: update run %s: %w in session %s", r.ID, store.ErrNotFound, t.key)
		}
		if err != nil {
			return mapErr("update run "+r.ID, err)
		}
		return fmt.Errorf("store: update run %s: %w: revision %d is stale (stored %d)", r.ID, store.ErrConflict, r.Revision, rev)
	}
	r.Revision, r.SnapshotDigest, r.UpdatedAt = next, dg, t.now
	return nil
}

func (t *tx) loadHead() error {
	if t.headLoaded {
		return nil
	}
	err := t.tx.QueryRowContext(t.ctx, "SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1").Scan(&t.headSeq, &t.headHash)
	if errors.Is(err, sql.ErrNoRows) {
		t.headSeq, t.headHash, err = readAnchor(t.ctx, t.tx)
	}
	if err != nil {
		return mapErr("append: read chain head", err)
	}
	t.headLoaded = true
	return nil
}

type querier interface {
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

// readAnchor returns the prune anchor (0, "" when never pruned).
func readAnchor(ctx context.Context, q querier) (int64, string, error) {
	var seq int64
	var hash string
	err := q.QueryRowContext(ctx, `SELECT
		COALESCE((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'anchor_seq'), 0),
		COALESCE((SELECT value FROM meta WHERE key = 'anchor_hash'), '')`).Scan(&seq, &hash)
	return seq, hash, err
}

// Append implements store.Tx: each event is chained to the one before it.
func (t *tx) Append(events ...*store.Event) error {
	if err := t.use("append"); err != nil {
		return err
	}
	if len(events) == 0 {
		return nil
	}
	if err := t.loadHead(); err != nil {
		return err
	}
	for _, e := range events {
		if err := store.PrepareEvent(e, t.runID, t.key, t.now); err != nil {
			return err
		}
		store.ChainEvent(e, t.headSeq, t.headHash)
		data := e.Data
		var d any
		if data != nil {
			d = string(data)
		}
		if _, err := t.tx.ExecContext(t.ctx, `INSERT INTO events (seq, run_id, session_key, time, kind, state, tool,
			input_digest, decision, rule, reason, tool_use_id, data, prev_hash, hash)
			VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			e.Seq, e.RunID, e.SessionKey, e.Time.UnixNano(), string(e.Kind), e.State, e.Tool, e.InputDigest,
			e.Decision, e.Rule, e.Reason, e.ToolUseID, d, e.PrevHash, e.Hash); err != nil {
			return mapErr(fmt.Sprintf("append %s event", e.Kind), err)
		}
		t.headSeq, t.headHash = e.Seq, e.Hash
	}
	return nil
}

const callColumns = `tool_use_id, phase, session_key, run_id, state, outcome, effects, status, created_at, settled_at`

func scanCall(sc rowScanner) (*store.Call, error) {
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
	c.Outcome, c.Effects = store.RawJSON(outcome), store.RawJSON(effects)
	c.CreatedAt, c.SettledAt = store.FromNanos(created), store.FromNanos(settled)
	return &c, nil
}

// Record implements store.Tx; a post record settles the reserved pre record.
func (t *tx) Record(c *store.Call) error {
	if err := t.use("record call"); err != nil {
		return err
	}
	cols, err := store.PrepareCall(c, t.key, t.runID, t.now)
	if err != nil {
		return err
	}
	outcome, effects, settled := cols.Outcome, cols.Effects, cols.SettledAt
	if _, err := t.tx.ExecContext(t.ctx, "INSERT INTO calls ("+callColumns+") VALUES (?,?,?,?,?,?,?,?,?,?)",
		c.ToolUseID, string(c.Phase), c.SessionKey, c.RunID, c.State, outcome, effects, string(c.Status),
		t.now.UnixNano(), settled); err != nil {
		if isConstraint(err) {
			return fmt.Errorf("store: record call %s/%s: %w", c.ToolUseID, c.Phase, store.ErrDuplicate)
		}
		return mapErr("record call "+c.ToolUseID, err)
	}
	if c.Phase == store.PhasePost {
		st := c.SettlesAs()
		if _, err := t.tx.ExecContext(t.ctx, `UPDATE calls SET status = ?, settled_at = ?
			WHERE session_key = ? AND tool_use_id = ? AND phase = 'pre' AND status = 'reserved'`,
			string(st), t.now.UnixNano(), t.key, c.ToolUseID); err != nil {
			return mapErr("settle call "+c.ToolUseID, err)
		}
	}
	return nil
}
