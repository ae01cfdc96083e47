package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/internal/backend"
)

// Run returns the run with this id.
func (s *Store) Run(ctx context.Context, id string) (*store.Run, error) {
	if err := s.check("run"); err != nil {
		return nil, err
	}
	r, err := backend.ScanRun(s.pool.QueryRow(ctx, "SELECT "+backend.RunSelect(tables)+" FROM statewright_runs WHERE id = $1", id))
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
		"SELECT "+backend.RunSelect(tables)+" FROM statewright_runs WHERE session_key = $1 AND status IN "+backend.LiveStatusSQL, sessionKey))
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
	rows, err := s.pool.Query(ctx, backend.CallsQuery(tables), runID, runID)
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

// eachEvent streams the whole log in Seq order after what it starts from,
// in one REPEATABLE READ snapshot (so heads, anchors and events agree)
// that takes no lock.
func (s *Store) eachEvent(ctx context.Context, op string, start func(backend.LogStart), fn func(e *store.Event) error) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return s.mapErr(op+": begin", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	var ls backend.LogStart
	if ls.Heads, err = readHeads(ctx, tx); err != nil {
		return s.mapErr(op+": heads", err)
	}
	if ls.LastPrunedSeq, ls.LastPrunedHash, err = readPruned(ctx, tx); err != nil {
		return s.mapErr(op+": anchor", err)
	}
	start(ls)
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

type queryer interface {
	Query(ctx context.Context, q string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, q string, args ...any) pgx.Row
}

// readHeads reads every chain's head.
func readHeads(ctx context.Context, q queryer) ([]store.Head, error) {
	rows, err := q.Query(ctx, "SELECT chain, seq, hash, anchor_seq, anchor_hash FROM statewright_heads ORDER BY chain COLLATE \"C\"")
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
	err := q.QueryRow(ctx, `SELECT
		COALESCE((SELECT value::bigint FROM statewright_meta WHERE key = 'anchor_seq'), 0),
		COALESCE((SELECT value FROM statewright_meta WHERE key = 'anchor_hash'), '')`).Scan(&seq, &hash)
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

// Prune removes the prefix of the log (by Seq) that r no longer retains,
// anchoring each chain it cuts at the last event it removes from it, and
// appends an admin event to the store's chain that records the prune. Call
// records older than r.MaxAge are removed unless they are still reserved
// by a live run. Sessions keep writing meanwhile: the cut is made chain by
// chain, so an event a session commits during the prune is never lost.
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
	t := &tx{TxBase: backend.TxBase{At: s.now().UTC()}, ctx: ctx, s: s, conn: conn.Conn(), heads: map[string]store.Head{}, known: map[string]bool{}}
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
	if _, err := t.conn.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", lockKey("store-chain", s.schema)); err != nil {
		return p, s.mapErr("prune: lock", err)
	}
	last, _, err := readPruned(ctx, t.conn)
	if err != nil {
		return p, s.mapErr("prune: anchor", err)
	}
	var cut int64
	if r.MaxAge > 0 {
		if err := t.conn.QueryRow(ctx, "SELECT COALESCE(MAX(seq), 0) FROM statewright_events WHERE time < $1",
			t.At.Add(-r.MaxAge).UnixNano()).Scan(&cut); err != nil {
			return p, s.mapErr("prune", err)
		}
	}
	if r.Keep > 0 {
		var byKeep int64
		err := t.conn.QueryRow(ctx, "SELECT seq FROM statewright_events ORDER BY seq DESC LIMIT 1 OFFSET $1", r.Keep).Scan(&byKeep)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return p, s.mapErr("prune", err)
		}
		cut = max(cut, byKeep)
	}
	if cut > last {
		if err := s.cutChains(ctx, t.conn, cut, &p); err != nil {
			return p, err
		}
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
		if err := t.Append(&store.Event{Kind: store.KindAdmin, Reason: "retention: pruned the event log", Data: backend.PruneData(p, r)}); err != nil {
			return p, err
		}
	}
	if err := t.commit(); err != nil {
		return p, err
	}
	committed = true
	return p, nil
}

// cutChains removes every event up to Seq cut, chain by chain: each chain
// it cuts is anchored at the last event removed from it, and the log's
// last pruned event is recorded, before the rows go (the delete trigger
// checks them).
func (s *Store) cutChains(ctx context.Context, conn *pgx.Conn, cut int64, p *store.Pruned) error {
	rows, err := conn.Query(ctx, `SELECT chain, CASE WHEN chain = '' THEN seq ELSE chain_seq END, hash FROM statewright_events
		WHERE seq IN (SELECT max(seq) FROM statewright_events WHERE seq <= $1 GROUP BY chain)`, cut)
	if err != nil {
		return s.mapErr("prune: new anchors", err)
	}
	anchors, err := backend.Collect(rows, func(sc backend.Scanner) (store.Head, error) {
		var h store.Head
		err := sc.Scan(&h.Chain, &h.AnchorSeq, &h.AnchorHash)
		return h, err
	})
	rows.Close()
	if err != nil {
		return s.mapErr("prune: new anchors", err)
	}
	var hash string
	if err := conn.QueryRow(ctx, "SELECT hash FROM statewright_events WHERE seq = (SELECT max(seq) FROM statewright_events WHERE seq <= $1)", cut).Scan(&hash); err != nil {
		return s.mapErr("prune: new anchor", err)
	}
	chains, pos, hashes := make([]string, len(anchors)), make([]int64, len(anchors)), make([]string, len(anchors))
	for i, a := range anchors {
		chains[i], pos[i], hashes[i] = a.Chain, a.AnchorSeq, a.AnchorHash
	}
	if _, err := conn.Exec(ctx, `INSERT INTO statewright_heads (chain, seq, hash, anchor_seq, anchor_hash)
		SELECT c, n, h, n, h FROM unnest($1::text[], $2::bigint[], $3::text[]) AS a(c, n, h)
		ON CONFLICT (chain) DO UPDATE SET anchor_seq = excluded.anchor_seq, anchor_hash = excluded.anchor_hash`, chains, pos, hashes); err != nil {
		return s.mapErr("prune: write anchors", err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO statewright_meta (key, value) VALUES ('anchor_seq', $1), ('anchor_hash', $2)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, strconv.FormatInt(cut, 10), hash); err != nil {
		return s.mapErr("prune: write anchor", err)
	}
	tag, err := conn.Exec(ctx, `DELETE FROM statewright_events e USING unnest($1::text[], $2::bigint[]) AS a(c, n)
		WHERE e.chain = a.c AND (CASE WHEN e.chain = '' THEN e.seq ELSE e.chain_seq END) <= a.n`, chains, pos)
	if err != nil {
		return s.mapErr("prune: delete events", err)
	}
	p.Events = tag.RowsAffected()
	p.AnchorSeq, p.AnchorHash = cut, hash
	return nil
}

// Heads returns every chain's head and anchor, as of one statement.
func (s *Store) Heads(ctx context.Context) ([]store.Head, error) {
	if err := s.check("heads"); err != nil {
		return nil, err
	}
	h, err := readHeads(ctx, s.pool)
	if err != nil {
		return nil, s.mapErr("heads", err)
	}
	return h, nil
}

// Checkpoint verifies the log against the previous checkpoint (refusing
// to vouch for a log rewritten since), then signs every chain's head as
// one statement sees them (each
// transaction moves its chains' heads with its events, so any statement
// sees a consistent set) and appends the checkpoint; older checkpoints
// drop their heads. Checkpointers queue on an advisory lock.
func (s *Store) Checkpoint(ctx context.Context, opts store.CheckpointOptions) (store.Checkpoint, error) {
	var c store.Checkpoint
	if err := backend.VerifyBeforeCheckpoint(ctx, s, s.stream(ctx, "checkpoint: verify"), opts.AfterPrune); err != nil {
		return c, err
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return c, s.mapErr("checkpoint: begin", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", lockKey("checkpoint", s.schema)); err != nil {
		return c, s.mapErr("checkpoint: lock", err)
	}
	heads, err := readHeads(ctx, tx)
	if err != nil {
		return c, s.mapErr("checkpoint: heads", err)
	}
	prev, err := backend.ScanCheckpoint(tx.QueryRow(ctx, "SELECT "+backend.CheckpointColumnList+" FROM statewright_checkpoints ORDER BY seq DESC LIMIT 1"))
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return c, s.mapErr("checkpoint: the previous one", err)
	}
	if c, err = store.NewCheckpoint(prev, heads, s.now(), opts); err != nil {
		return c, err
	}
	args, err := backend.CheckpointArgs(&c)
	if err != nil {
		return c, err
	}
	if _, err := tx.Exec(ctx, "UPDATE statewright_checkpoints SET heads = NULL WHERE heads IS NOT NULL"); err != nil {
		return c, s.mapErr("checkpoint", err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO statewright_checkpoints ("+backend.CheckpointColumnList+") VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12)", args...); err != nil {
		return c, s.mapErr("checkpoint", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return c, s.mapErr("checkpoint: commit", err)
	}
	return c, nil
}

// Checkpoints lists the checkpoints, oldest first.
func (s *Store) Checkpoints(ctx context.Context) ([]store.Checkpoint, error) {
	if err := s.check("checkpoints"); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, "SELECT "+backend.CheckpointColumnList+" FROM statewright_checkpoints ORDER BY seq")
	if err != nil {
		return nil, s.mapErr("checkpoints", err)
	}
	defer rows.Close()
	out, err := backend.Collect(rows, backend.ScanCheckpointValue)
	if err != nil {
		return nil, s.mapErr("checkpoints", err)
	}
	return out, nil
}
