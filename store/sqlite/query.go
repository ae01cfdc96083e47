package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/internal/backend"
)

// Run returns the run with this id.
func (s *Store) Run(ctx context.Context, id string) (*store.Run, error) {
	if err := s.check("run"); err != nil {
		return nil, err
	}
	r, err := backend.ScanRun(s.db.QueryRowContext(ctx, "SELECT "+backend.RunColumnList+" FROM runs WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: run %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, mapErr("run "+id, err)
	}
	return r, nil
}

// LiveRun returns the session's live run.
func (s *Store) LiveRun(ctx context.Context, sessionKey string) (*store.Run, error) {
	if err := s.check("live run"); err != nil {
		return nil, err
	}
	r, err := backend.ScanRun(s.db.QueryRowContext(ctx,
		"SELECT "+backend.RunColumnList+" FROM runs WHERE session_key = ? AND status IN "+backend.LiveStatusSQL, sessionKey))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: live run of %s: %w", sessionKey, store.ErrNotFound)
	}
	if err != nil {
		return nil, mapErr("live run of "+sessionKey, err)
	}
	return r, nil
}

// Runs lists runs, newest first.
func (s *Store) Runs(ctx context.Context, f store.RunFilter) ([]*store.Run, error) {
	if err := s.check("runs"); err != nil {
		return nil, err
	}
	q, args := backend.RunsQuery(tables, f)
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, mapErr("runs", err)
	}
	defer rows.Close()
	out, err := backend.Collect(rows, backend.ScanRun)
	if err != nil {
		return nil, mapErr("runs", err)
	}
	return out, nil
}

// Revision returns a run's revision.
func (s *Store) Revision(ctx context.Context, runID string) (int64, error) {
	if err := s.check("revision"); err != nil {
		return 0, err
	}
	var rev int64
	err := s.db.QueryRowContext(ctx, "SELECT revision FROM runs WHERE id = ?", runID).Scan(&rev)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("store: revision of %s: %w", runID, store.ErrNotFound)
	}
	if err != nil {
		return 0, mapErr("revision of "+runID, err)
	}
	return rev, nil
}

// Calls lists a run's call records, oldest first.
func (s *Store) Calls(ctx context.Context, runID string) ([]store.Call, error) {
	if err := s.check("calls"); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, "SELECT "+backend.CallColumnList+" FROM calls WHERE run_id = ? ORDER BY created_at, tool_use_id, phase DESC", runID)
	if err != nil {
		return nil, mapErr("calls of "+runID, err)
	}
	defer rows.Close()
	out, err := backend.Collect(rows, backend.ScanCallValue)
	if err != nil {
		return nil, mapErr("calls of "+runID, err)
	}
	return out, nil
}

// Events lists events matching f in Seq order.
func (s *Store) Events(ctx context.Context, f store.EventFilter) ([]store.Event, error) {
	if err := s.check("events"); err != nil {
		return nil, err
	}
	q, args := backend.EventsQuery(tables, f)
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, mapErr("events", err)
	}
	defer rows.Close()
	out, err := backend.Collect(rows, backend.ScanEventValue)
	if err != nil {
		return nil, mapErr("events", err)
	}
	return out, nil
}

// readSnapshot runs fn in a read transaction (BEGIN DEFERRED on a dedicated
// connection), so the anchor and the events it reads belong to one snapshot
// of the file, without taking the write lock.
func (s *Store) readSnapshot(ctx context.Context, op string, fn func(conn *sql.Conn) error) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return mapErr(op, err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN DEFERRED"); err != nil {
		return mapErr(op+": begin", err)
	}
	ferr := fn(conn)
	if _, err := conn.ExecContext(context.WithoutCancel(ctx), "COMMIT"); err != nil {
		// Never hand a connection with an open transaction back to the pool.
		conn.Raw(func(any) error { return driver.ErrBadConn })
		if ferr == nil {
			return mapErr(op+": end", err)
		}
	}
	return ferr
}

// eachEvent streams the whole log in Seq order with its anchor.
func (s *Store) eachEvent(ctx context.Context, op string, start func(anchorSeq int64, anchorHash string), fn func(e *store.Event) error) error {
	return s.readSnapshot(ctx, op, func(conn *sql.Conn) error {
		seq, hash, err := readAnchor(ctx, conn)
		if err != nil {
			return mapErr(op+": anchor", err)
		}
		start(seq, hash)
		rows, err := conn.QueryContext(ctx, "SELECT "+backend.EventColumnList+" FROM events ORDER BY seq")
		if err != nil {
			return mapErr(op, err)
		}
		defer rows.Close()
		var e store.Event
		for rows.Next() {
			e = store.Event{}
			if err := backend.ScanEvent(rows, &e); err != nil {
				return mapErr(op, err)
			}
			if err := fn(&e); err != nil {
				return err
			}
		}
		if err := rows.Err(); err != nil {
			return mapErr(op, err)
		}
		return nil
	})
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
	err := s.db.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'retention'").Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return r, nil
	}
	if err != nil {
		return r, mapErr("retention", err)
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
	tx, release, err := s.beginWrite(ctx, "set retention")
	if err != nil {
		return err
	}
	defer release()
	if _, err := tx.ExecContext(ctx, "INSERT INTO meta (key, value) VALUES ('retention', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", string(b)); err != nil {
		return mapErr("set retention", err)
	}
	if err := tx.Commit(); err != nil {
		return mapErr("set retention: commit", err)
	}
	return nil
}

// Prune removes the prefix of the log that r no longer retains, anchoring
// the chain at the last removed event, and appends an admin event that
// records the prune. Call records older than r.MaxAge are removed unless
// they are still reserved by a live run.
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
	sqlTx, release, err := s.beginWrite(ctx, "prune")
	if err != nil {
		return p, err
	}
	defer release()
	now := s.now().UTC()
	anchorSeq, _, err := readAnchor(ctx, sqlTx)
	if err != nil {
		return p, mapErr("prune: anchor", err)
	}
	var head int64
	if err := sqlTx.QueryRowContext(ctx, "SELECT COALESCE(MAX(seq), 0) FROM events").Scan(&head); err != nil {
		return p, mapErr("prune", err)
	}
	var cut int64
	if r.MaxAge > 0 {
		if err := sqlTx.QueryRowContext(ctx, "SELECT COALESCE(MAX(seq), 0) FROM events WHERE time < ?",
			now.Add(-r.MaxAge).UnixNano()).Scan(&cut); err != nil {
			return p, mapErr("prune", err)
		}
	}
	if r.Keep > 0 && head-r.Keep > cut {
		cut = head - r.Keep
	}
	if cut > anchorSeq {
		var hash string
		if err := sqlTx.QueryRowContext(ctx, "SELECT hash FROM events WHERE seq = ?", cut).Scan(&hash); err != nil {
			return p, mapErr("prune: new anchor", err)
		}
		if _, err := sqlTx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('anchor_seq', ?), ('anchor_hash', ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, strconv.FormatInt(cut, 10), hash); err != nil {
			return p, mapErr("prune: write anchor", err)
		}
		res, err := sqlTx.ExecContext(ctx, "DELETE FROM events WHERE seq <= ?", cut)
		if err != nil {
			return p, mapErr("prune: delete events", err)
		}
		p.Events, _ = res.RowsAffected()
		p.AnchorSeq, p.AnchorHash = cut, hash
	}
	if r.MaxAge > 0 {
		res, err := sqlTx.ExecContext(ctx, `DELETE FROM calls WHERE created_at < ? AND (status <> 'reserved'
			OR run_id NOT IN (SELECT id FROM runs WHERE status IN `+backend.LiveStatusSQL+`))`, now.Add(-r.MaxAge).UnixNano())
		if err != nil {
			return p, mapErr("prune: delete calls", err)
		}
		p.Calls, _ = res.RowsAffected()
	}
	if p.Events > 0 || p.Calls > 0 {
		data, _ := json.Marshal(map[string]any{"action": "prune", "events": p.Events, "calls": p.Calls,
			"anchor_seq": p.AnchorSeq, "max_age": r.MaxAge.String(), "keep": r.Keep})
		t := &tx{TxBase: backend.TxBase{At: now}, ctx: ctx, s: s, tx: sqlTx}
		if err := t.Append(&store.Event{Kind: store.KindAdmin, Reason: "retention: pruned the event log", Data: data}); err != nil {
			return p, err
		}
	}
	if err := sqlTx.Commit(); err != nil {
		return p, mapErr("prune: commit", err)
	}
	return p, nil
}
