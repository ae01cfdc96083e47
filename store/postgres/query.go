package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5"

	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/internal/backend"
)

// Run returns the run with this id.
func (s *Store) Run(ctx context.Context, id string) (*store.Run, error) {
	if err := s.check("run"); err != nil {
		return nil, err
	}
	r, err := backend.ScanRun(s.pool.QueryRow(ctx, "SELECT "+backend.RunColumnList+" FROM statewright_runs WHERE id = $1", id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("store: run %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, s.mapErr("run "+id, err)
	}
	return r, nil
}

// LiveRun returns the session's live run.
func (s *Store) LiveRun(ctx context.Context, sessionKey string) (*store.Run, error) {
	if err := s.check("live run"); err != nil {
		return nil, err
	}
	r, err := backend.ScanRun(s.pool.QueryRow(ctx,
		"SELECT "+backend.RunColumnList+" FROM statewright_runs WHERE session_key = $1 AND status IN "+backend.LiveStatusSQL, sessionKey))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("store: live run of %s: %w", sessionKey, store.ErrNotFound)
	}
	if err != nil {
		return nil, s.mapErr("live run of "+sessionKey, err)
	}
	return r, nil
}

// Runs lists runs, newest first.
func (s *Store) Runs(ctx context.Context, f store.RunFilter) ([]*store.Run, error) {
	if err := s.check("runs"); err != nil {
		return nil, err
	}
	q, args := backend.RunsQuery(tables, f)
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, s.mapErr("runs", err)
	}
	defer rows.Close()
	out, err := backend.Collect(rows, backend.ScanRun)
	if err != nil {
		return nil, s.mapErr("runs", err)
	}
	return out, nil
}

// Revision returns a run's revision.
func (s *Store) Revision(ctx context.Context, runID string) (int64, error) {
	if err := s.check("revision"); err != nil {
		return 0, err
	}
	var rev int64
	err := s.pool.QueryRow(ctx, "SELECT revision FROM statewright_runs WHERE id = $1", runID).Scan(&rev)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("store: revision of %s: %w", runID, store.ErrNotFound)
	}
	if err != nil {
		return 0, s.mapErr("revision of "+runID, err)
	}
	return rev, nil
}

// Calls lists a run's call records, oldest first.
func (s *Store) Calls(ctx context.Context, runID string) ([]store.Call, error) {
	if err := s.check("calls"); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, "SELECT "+backend.CallColumnList+
		" FROM statewright_calls WHERE run_id = $1 ORDER BY created_at, tool_use_id, phase DESC", runID)
	if err != nil {
		return nil, s.mapErr("calls of "+runID, err)
	}
	defer rows.Close()
	out, err := backend.Collect(rows, backend.ScanCallValue)
	if err != nil {
		return nil, s.mapErr("calls of "+runID, err)
	}
	return out, nil
}

// Events lists events matching f in Seq order.
func (s *Store) Events(ctx context.Context, f store.EventFilter) ([]store.Event, error) {
	if err := s.check("events"); err != nil {
		return nil, err
	}
	q, args := backend.EventsQuery(tables, f)
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, s.mapErr("events", err)
	}
	defer rows.Close()
	out, err := backend.Collect(rows, backend.ScanEventValue)
	if err != nil {
		return nil, s.mapErr("events", err)
	}
	return out, nil
}

// eachEvent streams the whole log in Seq order with its anchor, in one
// REPEATABLE READ snapshot (so the anchor and the events agree) that takes
// no lock.
func (s *Store) eachEvent(ctx context.Context, op string, start func(anchorSeq int64, anchorHash string), fn func(e *store.Event) error) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return s.mapErr(op+": begin", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	var (
		seq  int64
		hash string
	)
	if err := tx.QueryRow(ctx, "SELECT anchor_seq, anchor_hash FROM statewright_chain WHERE id = 1").Scan(&seq, &hash); err != nil {
		return s.mapErr(op+": anchor", err)
	}
	start(seq, hash)
	rows, err := tx.Query(ctx, "SELECT "+backend.EventColumnList+" FROM statewright_events ORDER BY seq")
	if err != nil {
		return s.mapErr(op, err)
	}
	defer rows.Close()
	var e store.Event
	for rows.Next() {
		e = store.Event{}
		if err := backend.ScanEvent(rows, &e); err != nil {
			return s.mapErr(op, err)
		}
		if err := fn(&e); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return s.mapErr(op, err)
	}
	return nil
}

// ExportJSONL writes the whole event log as JSON lines in Seq order.
func (s *Store) ExportJSONL(ctx context.Context, w io.Writer) error {
	if err := s.check("export"); err != nil {
		return err
	}
	return backend.ExportStream(w, s.stream(ctx, "export"))
}

// VerifyChain verifies the whole event log from its anchor.
func (s *Store) VerifyChain(ctx context.Context) (store.ChainStatus, error) {
	if err := s.check("verify"); err != nil {
		return store.ChainStatus{}, err
	}
	return backend.VerifyStream(s.stream(ctx, "verify"))
}

// stream is eachEvent as a backend.EventStream.
func (s *Store) stream(ctx context.Context, op string) backend.EventStream {
	return func(start func(int64, string), fn func(*store.Event) error) error {
		return s.eachEvent(ctx, op, start, fn)
	}
}

// Retention returns the stored retention setting (zero when never set).
func (s *Store) Retention(ctx context.Context) (store.Retention, error) {
	var r store.Retention
	if err := s.check("retention"); err != nil {
		return r, err
	}
	var v string
	err := s.pool.QueryRow(ctx, "SELECT value FROM statewright_meta WHERE key = 'retention'").Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, nil
	}
	if err != nil {
		return r, s.mapErr("retention", err)
	}
	return backend.DecodeRetention(v)
}

// SetRetention stores the retention setting.
func (s *Store) SetRetention(ctx context.Context, r store.Retention) error {
	if err := s.check("set retention"); err != nil {
		return err
	}
	if err := backend.ValidRetention("set retention", r); err != nil {
		return err
	}
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("store: set retention: %w", err)
	}
	if _, err := s.pool.Exec(ctx, `INSERT INTO statewright_meta (key, value) VALUES ('retention', $1)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, string(b)); err != nil {
		return s.mapErr("set retention", err)
	}
	return nil
}

// Prune removes the prefix of the log that r no longer retains, anchoring
// the chain at the last removed event, and appends an admin event that
// records the prune. Call records older than r.MaxAge are removed unless
// they are still reserved by a live run. It holds the chain head's lock, so
// it queues behind appending transactions like one of them.
func (s *Store) Prune(ctx context.Context, r store.Retention) (store.Pruned, error) {
	var p store.Pruned
	if err := s.check("prune"); err != nil {
		return p, err
	}
	if err := backend.ValidRetention("prune", r); err != nil {
		return p, err
	}
	if r.MaxAge == 0 && r.Keep == 0 {
		return p, nil
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return p, s.mapErr("prune: connect", err)
	}
	t := &tx{TxBase: backend.TxBase{At: s.now().UTC()}, ctx: ctx, s: s, conn: conn.Conn()}
	committed := false
	defer func() {
		if !committed {
			t.rollback(conn)
		}
		conn.Release()
	}()
	if _, err := t.conn.Exec(ctx, "BEGIN"); err != nil {
		return p, s.mapErr("prune: begin", err)
	}
	if err := t.lockHead(); err != nil {
		return p, err
	}
	var anchorSeq int64
	if err := t.conn.QueryRow(ctx, "SELECT anchor_seq FROM statewright_chain WHERE id = 1").Scan(&anchorSeq); err != nil {
		return p, s.mapErr("prune: anchor", err)
	}
	head := t.headSeq
	var cut int64
	if r.MaxAge > 0 {
		if err := t.conn.QueryRow(ctx, "SELECT COALESCE(MAX(seq), 0) FROM statewright_events WHERE time < $1",
			t.At.Add(-r.MaxAge).UnixNano()).Scan(&cut); err != nil {
			return p, s.mapErr("prune", err)
		}
	}
	if r.Keep > 0 && head-r.Keep > cut {
		cut = head - r.Keep
	}
	if cut > anchorSeq {
		var hash string
		if err := t.conn.QueryRow(ctx, "SELECT hash FROM statewright_events WHERE seq = $1", cut).Scan(&hash); err != nil {
			return p, s.mapErr("prune: new anchor", err)
		}
		if _, err := t.conn.Exec(ctx, "UPDATE statewright_chain SET anchor_seq = $1, anchor_hash = $2 WHERE id = 1", cut, hash); err != nil {
			return p, s.mapErr("prune: write anchor", err)
		}
		tag, err := t.conn.Exec(ctx, "DELETE FROM statewright_events WHERE seq <= $1", cut)
		if err != nil {
			return p, s.mapErr("prune: delete events", err)
		}
		p.Events = tag.RowsAffected()
		p.AnchorSeq, p.AnchorHash = cut, hash
	}
	if r.MaxAge > 0 {
		tag, err := t.conn.Exec(ctx, `DELETE FROM statewright_calls WHERE created_at < $1 AND (status <> 'reserved'
			OR run_id NOT IN (SELECT id FROM statewright_runs WHERE status IN `+backend.LiveStatusSQL+`))`, t.At.Add(-r.MaxAge).UnixNano())
		if err != nil {
			return p, s.mapErr("prune: delete calls", err)
		}
		p.Calls = tag.RowsAffected()
	}
	if p.Events > 0 || p.Calls > 0 {
		data, _ := json.Marshal(map[string]any{"action": "prune", "events": p.Events, "calls": p.Calls,
			"anchor_seq": p.AnchorSeq, "max_age": r.MaxAge.String(), "keep": r.Keep})
		if err := t.Append(&store.Event{Kind: store.KindAdmin, Reason: "retention: pruned the event log", Data: data}); err != nil {
			return p, err
		}
	}
	if err := t.commit(); err != nil {
		return p, s.mapErr("prune: commit", err)
	}
	committed = true
	return p, nil
}
