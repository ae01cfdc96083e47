package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
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
	r, err := backend.ScanRun(s.db.QueryRowContext(ctx, "SELECT "+backend.RunSelect(tables)+" FROM runs WHERE id = ?", id))
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
		"SELECT "+backend.RunSelect(tables)+" FROM runs WHERE session_key = ? AND status IN "+backend.LiveStatusSQL, sessionKey))
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
	rows, err := s.db.QueryContext(ctx, backend.CallsQuery(tables), runID, runID)
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

// eachEvent streams the whole log in Seq order, after what it starts from.
func (s *Store) eachEvent(ctx context.Context, op string, start func(backend.LogStart), fn func(e *store.Event) error) error {
	return s.readSnapshot(ctx, op, func(conn *sql.Conn) error {
		var ls backend.LogStart
		var err error
		if ls.Heads, err = readHeads(ctx, conn); err != nil {
			return mapErr(op+": heads", err)
		}
		if ls.LastPrunedSeq, ls.LastPrunedHash, err = readPruned(ctx, conn); err != nil {
			return mapErr(op+": anchor", err)
		}
		start(ls)
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

type queryer interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

// readHeads reads every chain's head.
func readHeads(ctx context.Context, q queryer) ([]store.Head, error) {
	rows, err := q.QueryContext(ctx, "SELECT chain, seq, hash, anchor_seq, anchor_hash FROM heads ORDER BY chain")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return backend.Collect(rows, backend.ScanHead)
}

// readPruned returns the last event pruned from the log (0, "" when never pruned).
func readPruned(ctx context.Context, q queryer) (int64, string, error) {
	var seq int64
	var hash string
	err := q.QueryRowContext(ctx, `SELECT
		COALESCE((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'anchor_seq'), 0),
		COALESCE((SELECT value FROM meta WHERE key = 'anchor_hash'), '')`).Scan(&seq, &hash)
	return seq, hash, err
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
	return backend.VerifyStream(s.stream(ctx, "verify"), nil)
}

// VerifyAgainst verifies the whole event log and checks it against cp.
func (s *Store) VerifyAgainst(ctx context.Context, cp *store.Checkpoint) (store.ChainStatus, error) {
	if err := s.check("verify"); err != nil {
		return store.ChainStatus{}, err
	}
	return backend.VerifyStream(s.stream(ctx, "verify"), cp)
}

// stream is eachEvent as a backend.EventStream.
func (s *Store) stream(ctx context.Context, op string) backend.EventStream {
	return func(start func(backend.LogStart), fn func(*store.Event) error) error {
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
	if err := backend.ValidRetention("set retention", r); err != nil {
		return err
	}
	v, err := backend.EncodeRetention(r)
	if err != nil {
		return err
	}
	return s.write(ctx, "set retention", func(b *batch) error {
		if _, err := b.w.exec(ctx, "INSERT INTO meta (key, value) VALUES ('retention', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", v); err != nil {
			return mapErr("set retention", err)
		}
		return nil
	})
}

// Prune removes the prefix of the log (by Seq) that r no longer retains,
// anchoring each chain it cuts at the last event it removes from it, and
// appends an admin event to the store's chain that records the prune. Call
// records older than r.MaxAge are removed unless they are still reserved
// by a live run.
func (s *Store) Prune(ctx context.Context, r store.Retention) (store.Pruned, error) {
	var p store.Pruned
	if err := backend.ValidRetention("prune", r); err != nil {
		return p, err
	}
	if r.MaxAge == 0 && r.Keep == 0 {
		return p, s.check("prune")
	}
	err := s.write(ctx, "prune", func(b *batch) error {
		p = store.Pruned{}
		w := b.w
		now := s.now().UTC()
		last, _, err := readPruned(ctx, w.conn)
		if err != nil {
			return mapErr("prune: anchor", err)
		}
		var cut int64
		if r.MaxAge > 0 {
			if err := w.queryRow(ctx, "SELECT COALESCE(MAX(seq), 0) FROM events WHERE time < ?", now.Add(-r.MaxAge).UnixNano()).Scan(&cut); err != nil {
				return mapErr("prune", err)
			}
		}
		if r.Keep > 0 {
			var byKeep int64
			err := w.queryRow(ctx, "SELECT seq FROM events ORDER BY seq DESC LIMIT 1 OFFSET ?", r.Keep).Scan(&byKeep)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return mapErr("prune", err)
			}
			cut = max(cut, byKeep)
		}
		if cut > last {
			if err := s.cutChains(ctx, b, cut, &p); err != nil {
				return err
			}
		}
		if r.MaxAge > 0 {
			res, err := w.exec(ctx, `DELETE FROM calls WHERE created_at < ? AND (status <> 'reserved'
				OR run_id NOT IN (SELECT id FROM runs WHERE status IN `+backend.LiveStatusSQL+`))`, now.Add(-r.MaxAge).UnixNano())
			if err != nil {
				return mapErr("prune: delete calls", err)
			}
			p.Calls, _ = res.RowsAffected()
		}
		if p.Events > 0 || p.Calls > 0 {
			t := &tx{TxBase: backend.TxBase{At: now}, ctx: ctx, b: b}
			e := &store.Event{Kind: store.KindAdmin, Reason: "retention: pruned the event log", Data: backend.PruneData(p, r)}
			if err := t.Append(e); err != nil {
				return err
			}
			t.merge(b)
		}
		return b.writeHeads(ctx)
	})
	return p, err
}

// cutChains removes every event up to Seq cut: each chain it cuts is
// anchored at the last event removed from it, and the log's last pruned
// event is recorded, before the rows go (the delete trigger checks them).
func (s *Store) cutChains(ctx context.Context, b *batch, cut int64, p *store.Pruned) error {
	w := b.w
	rows, err := w.query(ctx, `SELECT chain, CASE WHEN chain = '' THEN seq ELSE chain_seq END, hash FROM events
		WHERE seq IN (SELECT max(seq) FROM events WHERE seq <= ? GROUP BY chain)`, cut)
	if err != nil {
		return mapErr("prune: new anchors", err)
	}
	anchors, err := backend.Collect(rows, func(sc backend.Scanner) (store.Head, error) {
		var h store.Head
		err := sc.Scan(&h.Chain, &h.AnchorSeq, &h.AnchorHash)
		return h, err
	})
	rows.Close()
	if err != nil {
		return mapErr("prune: new anchors", err)
	}
	for _, a := range anchors {
		if _, err := w.exec(ctx, `INSERT INTO heads (chain, seq, hash, anchor_seq, anchor_hash) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (chain) DO UPDATE SET anchor_seq = excluded.anchor_seq, anchor_hash = excluded.anchor_hash`,
			a.Chain, a.AnchorSeq, a.AnchorHash, a.AnchorSeq, a.AnchorHash); err != nil {
			return mapErr("prune: write anchors", err)
		}
		delete(b.heads, a.Chain) // re-read with its anchor
	}
	var hash string
	if err := w.queryRow(ctx, "SELECT hash FROM events WHERE seq = ?", cut).Scan(&hash); err != nil {
		return mapErr("prune: new anchor", err)
	}
	if _, err := w.exec(ctx, `INSERT INTO meta (key, value) VALUES ('anchor_seq', ?), ('anchor_hash', ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, strconv.FormatInt(cut, 10), hash); err != nil {
		return mapErr("prune: write anchor", err)
	}
	res, err := w.exec(ctx, "DELETE FROM events WHERE seq <= ?", cut)
	if err != nil {
		return mapErr("prune: delete events", err)
	}
	p.Events, _ = res.RowsAffected()
	p.AnchorSeq, p.AnchorHash = cut, hash
	return nil
}

// Heads returns every chain's head and anchor.
func (s *Store) Heads(ctx context.Context) ([]store.Head, error) {
	if err := s.check("heads"); err != nil {
		return nil, err
	}
	h, err := readHeads(ctx, s.db)
	if err != nil {
		return nil, mapErr("heads", err)
	}
	return h, nil
}

// Checkpoint verifies the log against the previous checkpoint (refusing
// to vouch for a log rewritten since), then signs every chain's head as
// the writer's transaction sees it and appends the checkpoint; older
// checkpoints drop their heads. Events appended between the verification
// and the signature are signed unverified (they are checked by the next
// checkpoint's verification, like every event).
func (s *Store) Checkpoint(ctx context.Context, opts store.CheckpointOptions) (store.Checkpoint, error) {
	var c store.Checkpoint
	if err := backend.VerifyBeforeCheckpoint(ctx, s, s.stream(ctx, "checkpoint: verify"), opts.AfterPrune); err != nil {
		return c, err
	}
	err := s.write(ctx, "checkpoint", func(b *batch) error {
		w := b.w
		heads, err := readHeads(ctx, w.conn)
		if err != nil {
			return mapErr("checkpoint: heads", err)
		}
		prev, err := backend.ScanCheckpoint(w.queryRow(ctx, "SELECT "+backend.CheckpointColumnList+" FROM checkpoints ORDER BY seq DESC LIMIT 1"))
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return mapErr("checkpoint: the previous one", err)
		}
		if c, err = store.NewCheckpoint(prev, heads, s.now(), opts); err != nil {
			return err
		}
		args, err := backend.CheckpointArgs(&c)
		if err != nil {
			return err
		}
		if _, err := w.exec(ctx, "UPDATE checkpoints SET heads = NULL WHERE heads IS NOT NULL"); err != nil {
			return mapErr("checkpoint", err)
		}
		if _, err := w.exec(ctx, "INSERT INTO checkpoints ("+backend.CheckpointColumnList+") VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", args...); err != nil {
			return mapErr("checkpoint", err)
		}
		return nil
	})
	return c, err
}

// Checkpoints lists the checkpoints, oldest first.
func (s *Store) Checkpoints(ctx context.Context) ([]store.Checkpoint, error) {
	if err := s.check("checkpoints"); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, "SELECT "+backend.CheckpointColumnList+" FROM checkpoints ORDER BY seq")
	if err != nil {
		return nil, mapErr("checkpoints", err)
	}
	defer rows.Close()
	out, err := backend.Collect(rows, backend.ScanCheckpointValue)
	if err != nil {
		return nil, mapErr("checkpoints", err)
	}
	return out, nil
}
