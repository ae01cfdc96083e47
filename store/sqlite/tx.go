package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/internal/backend"
)

// tables names the tables for the shared queries.
var tables = backend.Tables{Runs: "runs", Events: "events", Calls: "calls", RunsOrder: "rowid DESC"}

// runArgs encodes the mutable columns of r in backend.RunColumnList order from state on.
func runArgs(r *store.Run) ([]any, error) {
	c, err := backend.EncodeRunColumns(r)
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
	t := &tx{TxBase: backend.TxBase{Key: sessionKey, At: s.now().UTC()}, ctx: ctx, s: s, tx: sqlTx}
	row := sqlTx.QueryRowContext(ctx, "SELECT "+backend.RunColumnList+" FROM runs WHERE session_key = ? AND status IN "+backend.LiveStatusSQL, sessionKey)
	live, err := backend.ScanRun(row)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return mapErr("update "+sessionKey+": read run", err)
	default:
		t.Begin(live)
	}
	err = fn(t)
	t.Done = true
	if err != nil {
		return err
	}
	if err := sqlTx.Commit(); err != nil {
		return mapErr("update "+sessionKey+": commit", err)
	}
	return nil
}

type tx struct {
	backend.TxBase
	ctx context.Context
	s   *Store
	tx  *sql.Tx

	headLoaded bool
	headSeq    int64
	headHash   string
}

// Call implements store.Tx.
func (t *tx) Call(toolUseID string, phase store.Phase) (*store.Call, error) {
	if err := t.Use("call"); err != nil {
		return nil, err
	}
	row := t.tx.QueryRowContext(t.ctx, "SELECT "+backend.CallColumnList+" FROM calls WHERE session_key = ? AND tool_use_id = ? AND phase = ?",
		t.Key, toolUseID, string(phase))
	c, err := backend.ScanCall(row)
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
	if err := t.Use("put run"); err != nil {
		return err
	}
	if err := backend.PrepareRun(r, t.Key); err != nil {
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
	t.Wrote(r)
	return nil
}

func (t *tx) insertRun(r *store.Run, args []any) error {
	id, err := backend.NewID("run_", 12)
	if err != nil {
		return err
	}
	dg := backend.SnapshotDigestOf(r.Snapshot)
	all := append([]any{id, r.SessionKey, r.WorkflowID, r.WorkflowSource, r.Snapshot, dg}, args...)
	all = append(all, int64(1), t.At.UnixNano(), t.At.UnixNano())
	_, err = t.tx.ExecContext(t.ctx, "INSERT INTO runs ("+backend.RunColumnList+") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", all...)
	if err != nil {
		if isConstraint(err) {
			return fmt.Errorf("store: create run for %s: %w: the session already has a live run", t.Key, store.ErrConflict)
		}
		return mapErr("create run for "+t.Key, err)
	}
	r.ID, r.SnapshotDigest, r.Revision, r.CreatedAt, r.UpdatedAt = id, dg, 1, t.At, t.At
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
	if t.SameWorkflow(r) {
		dg = t.Live.SnapshotDigest
		q = "UPDATE runs SET " + set + " WHERE id = ? AND session_key = ? AND revision = ?"
		all = append(args, next, t.At.UnixNano(), r.ID, t.Key, r.Revision)
	} else {
		dg = backend.SnapshotDigestOf(r.Snapshot)
		q = "UPDATE runs SET workflow_id = ?, workflow_source = ?, snapshot = ?, snapshot_digest = ?, " + set +
			" WHERE id = ? AND session_key = ? AND revision = ?"
		all = append([]any{r.WorkflowID, r.WorkflowSource, r.Snapshot, dg}, args...)
		all = append(all, next, t.At.UnixNano(), r.ID, t.Key, r.Revision)
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
		err := t.tx.QueryRowContext(t.ctx, "SELECT revision FROM runs WHERE id = ? AND session_key = ?", r.ID, t.Key).Scan(&rev)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("store: update run %s: %w in session %s", r.ID, store.ErrNotFound, t.Key)
		}
		if err != nil {
			return mapErr("update run "+r.ID, err)
		}
		return fmt.Errorf("store: update run %s: %w: revision %d is stale (stored %d)", r.ID, store.ErrConflict, r.Revision, rev)
	}
	r.Revision, r.SnapshotDigest, r.UpdatedAt = next, dg, t.At
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
	if err := t.Use("append"); err != nil {
		return err
	}
	if len(events) == 0 {
		return nil
	}
	if err := t.loadHead(); err != nil {
		return err
	}
	for _, e := range events {
		if err := backend.PrepareEvent(e, t.RunID, t.Key, t.At); err != nil {
			return err
		}
		backend.ChainEvent(e, t.headSeq, t.headHash)
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

// Record implements store.Tx; a post record settles the reserved pre record.
func (t *tx) Record(c *store.Call) error {
	if err := t.Use("record call"); err != nil {
		return err
	}
	cols, err := backend.PrepareCall(c, t.Key, t.RunID, t.At)
	if err != nil {
		return err
	}
	outcome, effects, settled := cols.Outcome, cols.Effects, cols.SettledAt
	if _, err := t.tx.ExecContext(t.ctx, "INSERT INTO calls ("+backend.CallColumnList+") VALUES (?,?,?,?,?,?,?,?,?,?)",
		c.ToolUseID, string(c.Phase), c.SessionKey, c.RunID, c.State, outcome, effects, string(c.Status),
		t.At.UnixNano(), settled); err != nil {
		if isConstraint(err) {
			return fmt.Errorf("store: record call %s/%s: %w", c.ToolUseID, c.Phase, store.ErrDuplicate)
		}
		return mapErr("record call "+c.ToolUseID, err)
	}
	if c.Phase == store.PhasePost {
		st := c.SettlesAs()
		if _, err := t.tx.ExecContext(t.ctx, `UPDATE calls SET status = ?, settled_at = ?
			WHERE session_key = ? AND tool_use_id = ? AND phase = 'pre' AND status = 'reserved'`,
			string(st), t.At.UnixNano(), t.Key, c.ToolUseID); err != nil {
			return mapErr("settle call "+c.ToolUseID, err)
		}
	}
	return nil
}
