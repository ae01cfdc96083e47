package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/internal/backend"
)

// tables names the tables for the shared queries.
var tables = backend.Tables{Runs: "statewright_runs", Events: "statewright_events", Calls: "statewright_calls",
	Snapshots: "statewright_snapshots", RunsOrder: "ord DESC", Dollar: true, SessionByRuns: true}

const (
	// qSessionRun reads the session's live run, or its newest when none
	// is live (a session has at most one live run).
	qSessionRun = "SELECT " + backend.RunColumnsNoSnapshot + " FROM statewright_runs WHERE session_key = $1 " +
		"ORDER BY status IN " + backend.LiveStatusSQL + " DESC, created_at DESC, ord DESC LIMIT 1"
	// qSessionHeads reads the heads of the chains a session's transaction
	// usually appends to: its live run's and its own.
	qSessionHeads = `SELECT chain, seq, hash, anchor_seq, anchor_hash FROM statewright_heads
		WHERE chain = 'session:' || $1 OR chain IN (SELECT id FROM statewright_runs WHERE session_key = $1 AND status IN ` +
		backend.LiveStatusSQL + `)`
	// qLock takes the session's lock and reads the schema version (which
	// needs no lock).
	qLock = "SELECT pg_advisory_xact_lock($1)::text, (SELECT COALESCE(max(version), 0) FROM statewright_migrations)"
	qCall = "SELECT " + backend.CallColumnList + " FROM statewright_calls WHERE session_key = $1 AND tool_use_id = $2 AND phase = $3"
)

// Update runs fn in one transaction on sessionKey, holding the session's
// advisory lock from before it reads the live run until it commits. No
// lock is shared between sessions: each run's events chain to that run's
// previous event.
//
// The transaction travels in few round trips: BEGIN, the lock, the schema
// version, the session's runs and chain heads in one pipeline; the call
// lookups fn makes; then every write fn buffered (the run, the events,
// the call records, the heads, the notification of a change other
// replicas must see) with COMMIT in a second pipeline. Writes that must
// touch exactly one row check it in SQL, so a mismatch aborts the whole
// transaction rather than committing the rest.
func (s *Store) Update(ctx context.Context, sessionKey string, fn func(tx store.Tx) error) (err error) {
	if err := s.check("update"); err != nil {
		return err
	}
	if sessionKey == "" {
		return fmt.Errorf("store: update: %w: empty session key", store.ErrInvalid)
	}
	if c := s.sessions.get(sessionKey); c != nil {
		var err error
		if groupable(c) {
			err = s.updateGrouped(ctx, sessionKey, fn, c)
		} else {
			err = s.update(ctx, sessionKey, fn, c, nil)
		}
		var cu *commitUnknown
		switch {
		case errors.Is(err, errStale):
			s.sessions.stale(sessionKey)
		case errors.As(err, &cu):
			// The group may have committed: run alone unless it did.
			return s.update(ctx, sessionKey, fn, nil, cu)
		case errors.Is(err, errRetry):
			// The group failed for another session's sake: run alone.
		default:
			return err
		}
	}
	return s.update(ctx, sessionKey, fn, nil, nil)
}

// update is one attempt of Update: with the reads of the first round trip,
// or, with c, from the session as this replica left it, in one round trip
// (cache.go); then it fails with errStale when c was not what the store
// holds, or fn needed a read. With cu (a grouped attempt whose COMMIT's
// outcome was lost), it first looks whether that attempt's chain heads
// are the store's: then the attempt committed, its answer stands and fn
// does not run again (it would decide and record the same call twice).
func (s *Store) update(ctx context.Context, sessionKey string, fn func(tx store.Tx) error, c *cachedSession, cu *commitUnknown) (err error) {
	op := "update " + sessionKey
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return s.mapErr(op+": connect", err)
	}
	t := &tx{TxBase: backend.TxBase{Key: sessionKey, At: s.now().UTC()}, ctx: ctx, s: s, conn: conn.Conn(),
		heads: map[string]store.Head{}, known: map[string]bool{}, opt: c != nil}
	committed := false
	defer func() {
		if !committed && t.sent {
			t.rollback(conn)
		}
		conn.Release()
	}()
	if c != nil {
		t.beginCached(c)
	} else if err := t.begin(); err != nil {
		return err
	}
	if cu != nil && cu.landed(t.heads) {
		s.sessions.put(sessionKey, nil, false)
		s.notifyAfter(cu.changes)
		return nil
	}
	ferr := fn(t)
	t.Done = true
	if t.aborted {
		return errStale
	}
	if ferr != nil {
		return ferr
	}
	if err := t.commit(); err != nil {
		if t.opt && errors.Is(err, errStale) {
			return errStale
		}
		s.sessions.put(sessionKey, nil, false)
		return err
	}
	committed = true
	if t.opt {
		s.cachedCommits.Add(1)
	}
	s.sessions.put(sessionKey, t.cacheEntry(), t.opt)
	s.notifyAfter(t.changes)
	return nil
}

type tx struct {
	backend.TxBase
	ctx  context.Context
	s    *Store
	conn *pgx.Conn

	read    *store.Run                     // the live run as read at the start (for what changed)
	heads   map[string]store.Head          // chain heads read or moved
	moved   map[string]bool                // heads to write at commit
	known   map[string]bool                // call records known not to exist yet ("id\x00phase")
	writes  pgx.Batch                      // buffered writes, sent with COMMIT
	results []func(pgx.BatchResults) error // how each buffered write's result is read (nil: Exec)
	notify  []string                       // payloads to NOTIFY with the commit
	changes []store.Change                 // changes to announce after the commit

	// opt: the transaction runs from a cached session (cache.go): nothing
	// is read; aborted: fn needed a read, so nothing is sent and Update
	// runs it again with reads. sent: statements reached the server.
	opt, aborted, sent bool
	// group: the transaction commits in a group (group.go), with its
	// copy's check and lock there; done answers it.
	group bool
	check groupCheck
	done  chan error
	set   setWrites // the writes as rows a group merges (group.go)
	// order is every write of a grouped transaction in the order fn made
	// it: a statement in writes, or a row of set, which becomes a
	// statement only when the group sends the transaction's statements as
	// they are (statements).
	order []write
	// written is the live run as the last Put left it in the store
	// (RETURNING); created, uncacheable: what the transaction did cannot
	// be cached without reading.
	written              *store.Run
	created, uncacheable bool

	assumed     store.CallRef // the call a transaction from the cache took as unrecorded
	prefetch    store.CallRef // the call record read with the first round trip
	prefetched  *store.Call   // nil: not found (when prefetch is set)
	hasPrefetch bool
}

// begin sends BEGIN, the session lock, the schema check and the reads of
// the session's runs and chain heads in one pipeline.
func (t *tx) begin() error {
	op := "update " + t.Key
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(qLock, lockKey("session", t.s.schema, t.Key))
	b.Queue(qSessionRun, t.Key)
	b.Queue(qSessionHeads, t.Key)
	if ref, ok := store.CallPrefetch(t.ctx); ok {
		t.prefetch, t.hasPrefetch = ref, true
		b.Queue(qCall, t.Key, ref.ToolUseID, string(ref.Phase))
	}
	t.sent = true
	br := t.conn.SendBatch(t.ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return t.s.mapErr(op+": begin", err)
	}
	var (
		locked string
		v      int
	)
	if err := br.QueryRow().Scan(&locked, &v); err != nil {
		return t.s.mapErr(op+": lock the session", err)
	}
	if want := SchemaVersion(); v != want {
		return fmt.Errorf("store: %s %s: %w: the schema is at version %d, this process at %d (another replica migrated the store: replicas of different versions must not serve together; restart this one with a matching binary)",
			op, t.s.where, store.ErrCorrupt, v, want)
	}
	var live, last *store.Run
	r, err := scanOptionalRun(br.QueryRow())
	if err != nil {
		return t.s.mapErr(op+": read run", err)
	}
	if r != nil && r.Status.Live() {
		live = r
	} else {
		last = r
	}
	rows, err := br.Query()
	if err != nil {
		return t.s.mapErr(op+": chain heads", err)
	}
	heads, err := backend.Collect(rows, backend.ScanHead)
	rows.Close()
	if err != nil {
		return t.s.mapErr(op+": chain heads", err)
	}
	if t.hasPrefetch {
		c, err := backend.ScanCall(br.QueryRow())
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return t.s.mapErr(op+": call "+t.prefetch.ToolUseID, err)
		default:
			t.prefetched = c
		}
	}
	if err := br.Close(); err != nil {
		return t.s.mapErr(op, err)
	}
	for _, h := range heads {
		t.heads[h.Chain] = h
	}
	for _, r := range []*store.Run{live, last} {
		if err := t.s.fillSnapshot(t.ctx, t.conn, r); err != nil {
			return err
		}
	}
	t.read = live
	t.Begin(live)
	if live == nil {
		t.BeginEnded(last)
	}
	return nil
}

// beginCached starts a transaction from a cached session: the runs and
// heads are c's, and BEGIN, the lock, the schema check and qVerify open
// the pipeline commit sends.
func (t *tx) beginCached(c *cachedSession) {
	if ref, ok := store.CallPrefetch(t.ctx); ok {
		t.prefetch, t.hasPrefetch = ref, true
	}
	for ch, h := range c.heads {
		t.heads[ch] = h
	}
	live, last := c.live.Clone(), c.last.Clone()
	t.read = live
	t.Begin(live)
	if live == nil {
		t.BeginEnded(last)
	}
	if t.group {
		t.check = groupCheck{lock: lockKey("session", t.s.schema, t.Key), runID: live.ID, rev: live.Revision,
			sessionSeq: c.heads[store.ChainOf("", t.Key)].Seq, runSeq: c.heads[live.ID].Seq}
		return
	}
	t.queue(nil, "BEGIN")
	t.queue(func(br pgx.BatchResults) error {
		var (
			locked string
			v      int
		)
		if err := br.QueryRow().Scan(&locked, &v); err != nil {
			return t.s.mapErr("update "+t.Key+": lock the session", err)
		}
		if want := SchemaVersion(); v != want {
			return fmt.Errorf("store: update %s %s: %w: the schema is at version %d, this process at %d (another replica migrated the store: replicas of different versions must not serve together; restart this one with a matching binary)",
				t.Key, t.s.where, store.ErrCorrupt, v, want)
		}
		return nil
	}, qLock, lockKey("session", t.s.schema, t.Key))
	if live != nil {
		t.queue(nil, qVerifyLive, t.Key, live.ID, live.Revision, c.heads[store.ChainOf("", t.Key)].Seq, c.heads[live.ID].Seq)
		return
	}
	run, heads := c.fingerprint(t.Key)
	t.queue(nil, qVerify, t.Key, run, heads)
}

// abort stops a transaction from a cached session that needs a read:
// nothing has been sent; Update runs fn again with reads.
func (t *tx) abort() error {
	t.aborted = true
	return errStale
}

// queue buffers a write for the commit; read reads its result (nil: the
// statement's tag only).
func (t *tx) queue(read func(pgx.BatchResults) error, sql string, args ...any) {
	t.writes.Queue(sql, args...)
	t.results = append(t.results, read)
	if t.group {
		t.order = append(t.order, write{i: len(t.results) - 1})
	}
}

func scanOptionalRun(row pgx.Row) (*store.Run, error) {
	r, err := backend.ScanRun(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return r, err
}

// fillSnapshot sets r's snapshot from the store's cache, reading it once.
func (s *Store) fillSnapshot(ctx context.Context, conn *pgx.Conn, r *store.Run) error {
	if r == nil || r.SnapshotDigest == "" {
		return nil
	}
	if snap, ok := s.snapshots.Get(r.SnapshotDigest); ok {
		r.Snapshot = snap
		return nil
	}
	var snap []byte
	if err := conn.QueryRow(ctx, "SELECT body FROM statewright_snapshots WHERE digest = $1", r.SnapshotDigest).Scan(&snap); err != nil {
		return s.mapErr("read the workflow of run "+r.ID, err)
	}
	if len(snap) > 0 {
		r.Snapshot = snap
		s.snapshots.Put(r.SnapshotDigest, snap)
	}
	return nil
}

// rollback ends an uncommitted transaction (rollbackConn).
func (t *tx) rollback(conn *pgxpool.Conn) { rollbackConn(t.ctx, conn) }

// commit sends the buffered writes, the moved heads, the notifications
// and COMMIT in one pipeline; a COMMIT that rolled back (an earlier
// statement failed) is an error.
func (t *tx) commit() error {
	if a := t.assumed; a.ToolUseID != "" && t.known[a.ToolUseID+"\x00"+string(a.Phase)] {
		t.queue(nil, qCallAbsent, t.Key, a.ToolUseID, string(a.Phase))
	}
	t.queueCommitWrites()
	t.queue(nil, "COMMIT")
	return t.flush(true)
}

// queueCommitWrites buffers what every commit writes last: the moved
// heads and the notifications.
func (t *tx) queueCommitWrites() {
	for c := range t.moved {
		h := t.heads[c]
		if !t.group {
			t.queue(nil, qPutHead, c, h.Seq, h.Hash)
			continue
		}
		// The head before this transaction: its first event here
		// followed it.
		from := h.Seq
		for _, w := range t.set.events {
			if w.e.Chain == c {
				from = min(from, w.e.ChainSeq-1)
			}
		}
		t.set.heads = append(t.set.heads, headRow{h: store.Head{Chain: c, Seq: h.Seq, Hash: h.Hash}, from: from})
		t.order = append(t.order, write{rows: rowHead, i: len(t.set.heads) - 1})
	}
	for _, p := range t.notify {
		t.queue(nil, "SELECT pg_notify($1, $2)", t.s.channel, p)
	}
}

// flush sends the buffered writes; the event inserts return their Seq, in
// order. It runs before any statement fn makes at once, which must see
// them. With commit, the last statement is COMMIT, which must not have
// turned into a rollback.
func (t *tx) flush(commit bool) error {
	op := "update " + t.Key
	b := &t.writes
	if b.Len() == 0 {
		return nil
	}
	if t.opt && !commit {
		return t.abort() // (the methods that read abort first)
	}
	results := t.results
	defer func() { t.writes, t.results = pgx.Batch{}, nil }()
	t.sent = true
	br := t.conn.SendBatch(t.ctx, b)
	defer br.Close()
	n := b.Len()
	if commit {
		n--
	}
	for i := 0; i < n; i++ {
		read := results[i]
		if err := readResult(br, read); err != nil {
			if c := pgCode(err); t.opt && (c == "SW001" || c == "23505") {
				// The store is not what the cached session said (or a call
				// taken as unrecorded is recorded): run again with reads.
				return errStale
			}
			if read == nil {
				err = t.s.mapErr(op, err)
			}
			return err
		}
	}
	if commit {
		tag, err := br.Exec()
		if err != nil {
			return t.s.mapErr(op+": commit", err)
		}
		if tag.String() != "COMMIT" {
			return fmt.Errorf("store: %s %s: the transaction was rolled back (%s): an earlier statement failed", op, t.s.where, tag)
		}
	}
	if err := br.Close(); err != nil {
		return t.s.mapErr(op, err)
	}
	return nil
}

// Call implements store.Tx.
func (t *tx) Call(toolUseID string, phase store.Phase) (*store.Call, error) {
	if err := t.Use("call"); err != nil {
		return nil, err
	}
	var (
		c   *store.Call
		err error
	)
	if ref := (store.CallRef{ToolUseID: toolUseID, Phase: phase}); t.opt {
		if !t.hasPrefetch || ref != t.prefetch {
			return nil, t.abort()
		}
		// Taken as unrecorded (the prefetch hint says it usually is),
		// checked with the commit: by its Record's insert, which expects
		// one new row, or else by qCallAbsent.
		t.hasPrefetch = false
		t.assumed = ref
		err = pgx.ErrNoRows
	} else if t.hasPrefetch && ref == t.prefetch {
		// Read with the first round trip; a Record of the same call
		// since would have dropped the hint.
		t.hasPrefetch = false
		c, err = t.prefetched, nil
		if c == nil {
			err = pgx.ErrNoRows
		}
	} else {
		if err := t.flush(false); err != nil {
			return nil, err
		}
		c, err = backend.ScanCall(t.conn.QueryRow(t.ctx, qCall, t.Key, toolUseID, string(phase)))
	}
	if errors.Is(err, pgx.ErrNoRows) {
		// Under the session's lock nobody else records this session's
		// calls: a Record of it may be buffered.
		t.known[toolUseID+"\x00"+string(phase)] = true
		return nil, fmt.Errorf("store: call %s/%s: %w", toolUseID, phase, store.ErrNotFound)
	}
	if err != nil {
		return nil, t.s.mapErr("call "+toolUseID, err)
	}
	return c, nil
}

// Put implements store.Tx: insert, or update with compare-and-swap on
// revision. The write is buffered for the commit; the live run read under
// the session's lock answers the compare-and-swap at once.
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

// announce records the change r's write makes: notified with the commit
// when other replicas must see it (a run created or ended, a new state, an
// approval asked or answered, a pause), after the commit otherwise.
func (t *tx) announce(r *store.Run, before *store.Run) error {
	c := backend.ChangeOf(r)
	if before != nil && before.ID == r.ID && before.Status == r.Status && before.State == r.State &&
		(before.PendingApproval == nil) == (r.PendingApproval == nil) &&
		(r.PendingApproval == nil || before.PendingApproval.ID == r.PendingApproval.ID) {
		t.changes = append(t.changes, c)
		return nil
	}
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("store: put run: %w", err)
	}
	t.notify = append(t.notify, string(b))
	return nil
}

const (
	qInsertRun = `WITH i AS (
	INSERT INTO statewright_runs (` + backend.RunColumnList + `)
	VALUES ($1,$2,$3,$4,NULL,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,1,$16,$16)
	ON CONFLICT DO NOTHING RETURNING 1)
	SELECT count(*) FROM i`
	qInsertSnapshot = "INSERT INTO statewright_snapshots (digest, body) VALUES ($1, $2) ON CONFLICT (digest) DO NOTHING"
)

func (t *tx) insertRun(r *store.Run, c backend.RunColumns) error {
	if t.Live != nil {
		return fmt.Errorf("store: create run for %s: %w: the session already has a live run", t.Key, store.ErrConflict)
	}
	if t.opt {
		return t.abort()
	}
	t.created = true
	id, err := backend.NewID("run_", 12)
	if err != nil {
		return err
	}
	dg := backend.SnapshotDigestOf(r.Snapshot)
	n := t.At.UnixNano()
	// Not buffered: the session's live run was read under its lock, but a
	// live run written behind the store's back would break the commit.
	if err := t.flush(false); err != nil {
		return err
	}
	if dg != "" {
		if _, err := t.conn.Exec(t.ctx, qInsertSnapshot, dg, r.Snapshot); err != nil {
			return t.s.mapErr("store the workflow snapshot", err)
		}
	}
	var inserted int64
	if err := t.conn.QueryRow(t.ctx, qInsertRun,
		id, r.SessionKey, r.WorkflowID, r.WorkflowSource, dg, r.State, c.Context, c.History,
		r.Iterations, c.Counters, c.FilesEdited, c.PendingApproval, string(r.Status), r.AuditOnly, c.Evidence, n).Scan(&inserted); err != nil {
		return t.s.mapErr("create run for "+t.Key, err)
	}
	if inserted == 0 {
		return fmt.Errorf("store: create run for %s: %w: the session already has a live run", t.Key, store.ErrConflict)
	}
	t.s.snapshots.Put(dg, r.Snapshot)
	r.ID, r.SnapshotDigest, r.Revision, r.CreatedAt, r.UpdatedAt = id, dg, 1, t.At, t.At
	t.heads[id] = store.Head{Chain: id}
	return t.announce(r, nil)
}

const (
	runSet = `state = $1, context = $2, history = $3, iterations = $4, counters = $5, files_edited = $6,
		pending_approval = $7, status = $8, audit_only = $9, evidence = $10, revision = $11, updated_at = $12`
	runWhere = " WHERE id = $13 AND session_key = $14 AND revision = $15 RETURNING " + backend.RunColumnsNoSnapshot + ") " +
		"SELECT u.* FROM (SELECT statewright_expect(count(*), 1, 'update run') FROM u) AS x, u"
	// qUpdateRun is the compare-and-swap update of a run whose workflow
	// did not change; it returns the run as stored (readWritten).
	qUpdateRun = "WITH u AS (UPDATE statewright_runs SET " + runSet + runWhere
	// qUpdateRunWorkflow is qUpdateRun for a run whose workflow changed:
	// it rewrites the snapshot's digest (the snapshot rarely changes).
	qUpdateRunWorkflow = "WITH u AS (UPDATE statewright_runs SET " + runSet +
		", workflow_id = $16, workflow_source = $17, snapshot = NULL, snapshot_digest = $18" + runWhere
	// qPutHead writes a chain's head.
	qPutHead = `INSERT INTO statewright_heads (chain, seq, hash) VALUES ($1, $2, $3)
			ON CONFLICT (chain) DO UPDATE SET seq = excluded.seq, hash = excluded.hash`
)

// readWritten reads the run an update returned: the run as the store now
// holds it, what the next transaction from this replica's cache starts
// from.
func (t *tx) readWritten(br pgx.BatchResults) error {
	w, err := backend.ScanRun(br.QueryRow())
	if err != nil {
		return err
	}
	t.written = w
	return nil
}

func (t *tx) updateRun(r *store.Run, c backend.RunColumns) error {
	live := t.Live != nil && t.Live.ID == r.ID
	before := t.Live
	if !live {
		// A run other than the live one (an ended run, or one read before
		// this transaction): check it now.
		var (
			rev   *int64
			other bool
		)
		if t.opt {
			return t.abort()
		}
		t.uncacheable = true
		if err := t.flush(false); err != nil {
			return err
		}
		if err := t.conn.QueryRow(t.ctx, `SELECT (SELECT revision FROM statewright_runs WHERE id = $2 AND session_key = $1),
			EXISTS (SELECT 1 FROM statewright_runs WHERE session_key = $1 AND status IN `+backend.LiveStatusSQL+` AND id <> $2)`,
			t.Key, r.ID).Scan(&rev, &other); err != nil {
			return t.s.mapErr("update run "+r.ID, err)
		}
		switch {
		case rev == nil:
			return fmt.Errorf("store: update run %s: %w in session %s", r.ID, store.ErrNotFound, t.Key)
		case *rev != r.Revision:
			return fmt.Errorf("store: update run %s: %w: revision %d is stale (stored %d)", r.ID, store.ErrConflict, r.Revision, *rev)
		case r.Status.Live() && other:
			return fmt.Errorf("store: update run %s: %w: the session already has another live run", r.ID, store.ErrConflict)
		}
		before = nil
	} else if r.Revision != t.Live.Revision {
		return fmt.Errorf("store: update run %s: %w: revision %d is stale (stored %d)", r.ID, store.ErrConflict, r.Revision, t.Live.Revision)
	}
	next := r.Revision + 1
	same := t.SameWorkflow(r)
	dg := backend.SnapshotDigestOf(r.Snapshot)
	if same {
		dg = t.Live.SnapshotDigest
	}
	switch {
	case t.group && same:
		t.set.runs = append(t.set.runs, runRow{id: r.ID, rev: r.Revision, next: next, at: t.At.UnixNano(),
			state: r.State, status: string(r.Status), iterations: r.Iterations, audit: r.AuditOnly, cols: c,
			workflowID: t.Live.WorkflowID, workflowSource: t.Live.WorkflowSource, digest: dg, created: t.Live.CreatedAt})
		t.order = append(t.order, write{rows: rowRun, i: len(t.set.runs) - 1})
	case same:
		t.queue(t.readWritten, qUpdateRun, runArgs(runRow{id: r.ID, rev: r.Revision, next: next, at: t.At.UnixNano(),
			state: r.State, status: string(r.Status), iterations: r.Iterations, audit: r.AuditOnly, cols: c}, t.Key)...)
	default:
		// The snapshot rarely changes: rewrite it (and its digest) only when it did.
		if dg != "" {
			t.queue(nil, qInsertSnapshot, dg, r.Snapshot)
		}
		t.queue(t.readWritten, qUpdateRunWorkflow, r.State, c.Context, c.History, r.Iterations, c.Counters, c.FilesEdited,
			c.PendingApproval, string(r.Status), r.AuditOnly, c.Evidence, next, t.At.UnixNano(), r.ID, t.Key, r.Revision,
			r.WorkflowID, r.WorkflowSource, dg)
	}
	t.s.snapshots.Put(dg, r.Snapshot)
	r.Revision, r.SnapshotDigest, r.UpdatedAt = next, dg, t.At
	return t.announce(r, before)
}

// head returns a chain's head, reading it when the transaction has not.
func (t *tx) head(chain string) (store.Head, error) {
	if h, ok := t.heads[chain]; ok {
		return h, nil
	}
	h := store.Head{Chain: chain}
	if t.opt {
		return h, t.abort()
	}
	t.uncacheable = true // a chain outside the session's usual two
	if err := t.flush(false); err != nil {
		return h, err
	}
	err := t.conn.QueryRow(t.ctx, "SELECT seq, hash, anchor_seq, anchor_hash FROM statewright_heads WHERE chain = $1", chain).
		Scan(&h.Seq, &h.Hash, &h.AnchorSeq, &h.AnchorHash)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return h, t.s.mapErr("append: read the chain head", err)
	}
	t.heads[chain] = h
	return h, nil
}

// queueEvent buffers the insert of one event (eventInsert).
func (t *tx) queueEvent(w eventRow) {
	read, args := t.eventInsert(w)
	t.queue(read, qInsertEvent, args...)
}

// eventInsert is qInsertEvent's arguments for one event, and how to read
// its result: it sets the event's Seq.
func (t *tx) eventInsert(w eventRow) (func(pgx.BatchResults) error, []any) {
	e := w.e
	return func(br pgx.BatchResults) error {
			if err := br.QueryRow().Scan(&e.Seq); err != nil {
				return t.s.mapErr("update "+t.Key, err)
			}
			return nil
		}, []any{e.RunID, e.SessionKey, e.Time.UnixNano(), string(e.Kind), e.State, e.Tool, e.InputDigest,
			e.Decision, e.Rule, e.Reason, e.ToolUseID, w.data, e.PrevHash, e.Hash, e.Chain, e.ChainSeq}
}

const qInsertEvent = `INSERT INTO statewright_events (run_id, session_key, time, kind, state, tool,
	input_digest, decision, rule, reason, tool_use_id, data, prev_hash, hash, chain, chain_seq)
	VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16) RETURNING seq`

// Append implements store.Tx: each event joins its chain (ChainSeq,
// PrevHash and Hash are set at once); the rows are written at commit,
// which sets Seq. Appending to a chain needs no lock beyond the session's:
// a chain belongs to one session.
func (t *tx) Append(events ...*store.Event) error {
	if err := t.Use("append"); err != nil {
		return err
	}
	for _, e := range events {
		if err := t.PrepareAppend(e); err != nil {
			return err
		}
		h, err := t.head(e.Chain)
		if err != nil {
			return err
		}
		t.heads[e.Chain] = backend.Link(e, h)
		if t.moved == nil {
			t.moved = map[string]bool{}
		}
		t.moved[e.Chain] = true
		var data *string
		if e.Data != nil {
			d := string(e.Data)
			data = &d
		}
		if t.group {
			t.set.events = append(t.set.events, eventRow{e: e, data: data})
			t.order = append(t.order, write{rows: rowEvent, i: len(t.set.events) - 1})
			continue
		}
		t.queueEvent(eventRow{e: e, data: data})
	}
	return nil
}

const (
	qRecordInsert = `INSERT INTO statewright_calls (` + backend.CallColumnList + `) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)
		ON CONFLICT DO NOTHING RETURNING 1`
	// qRecordPre inserts a call record (with a SELECT of i after it).
	qRecordPre = `WITH i AS (` + qRecordInsert + `)`
	// qRecordPost inserts a post record and settles the reserved pre
	// record as $11.
	qRecordPost = `WITH i AS (` + qRecordInsert + `), u AS (UPDATE statewright_calls SET status = $11, settled_at = $10
			WHERE session_key = $3 AND tool_use_id = $1 AND phase = 'pre' AND status = 'reserved'
			AND EXISTS (SELECT 1 FROM i))`
	// qExpectRecorded ends qRecordPre or qRecordPost: the record must be
	// new.
	qExpectRecorded = " SELECT statewright_expect(count(*), 1, 'record call') FROM i"
)

// Record implements store.Tx; a post record settles the reserved pre
// record. A record whose absence the transaction saw (Call) is buffered
// for the commit; otherwise a duplicate is found at once with ON CONFLICT
// DO NOTHING, which leaves the transaction usable, as on SQLite.
func (t *tx) Record(c *store.Call) error {
	if err := t.Use("record call"); err != nil {
		return err
	}
	cols, err := backend.PrepareCall(c, t.Key, t.RunID, t.At)
	if err != nil {
		return err
	}
	if t.hasPrefetch && t.prefetch.ToolUseID == c.ToolUseID {
		t.hasPrefetch = false // the prefetched record is no longer what is stored
	}
	k := c.ToolUseID + "\x00" + string(c.Phase)
	if t.known[k] && t.group && c.Phase == store.PhasePre {
		delete(t.known, k)
		t.set.calls = append(t.set.calls, callRow{c: c, cols: cols})
		t.order = append(t.order, write{rows: rowCall, i: len(t.set.calls) - 1})
		return nil
	}
	args := []any{c.ToolUseID, string(c.Phase), c.SessionKey, c.RunID, c.State, cols.Outcome, cols.Effects, string(c.Status),
		t.At.UnixNano(), cols.SettledAt}
	q := qRecordPre
	if c.Phase == store.PhasePost {
		q = qRecordPost
		args = append(args, string(c.SettlesAs()))
	}
	if t.known[k] {
		delete(t.known, k)
		t.queue(nil, q+qExpectRecorded, args...)
		return nil
	}
	if t.opt {
		return t.abort()
	}
	if err := t.flush(false); err != nil {
		return err
	}
	var n int64
	if err := t.conn.QueryRow(t.ctx, q+" SELECT count(*) FROM i", args...).Scan(&n); err != nil {
		return t.s.mapErr("record call "+c.ToolUseID, err)
	}
	if n == 0 {
		return fmt.Errorf("store: record call %s/%s: %w", c.ToolUseID, c.Phase, store.ErrDuplicate)
	}
	return nil
}
