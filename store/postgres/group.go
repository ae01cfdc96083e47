package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/internal/backend"
)

// Group commit. A transaction that decides from a cached session with a
// live run (cache.go) reads nothing before its commit, so a replica can
// commit many sessions' transactions in one PostgreSQL transaction: the
// committer sends BEGIN, every session's lock (in one order, so two
// replicas' groups never deadlock) and one check of every cached copy in
// a first pipeline, then the writes of the sessions whose copies hold and
// COMMIT in a second. Each caller is answered only after that COMMIT (or
// with why its transaction did not commit). A session whose copy is stale
// runs again with reads, as before; when the group's second pipeline fails
// as a whole (a write that had to touch one row did not), the session that
// failed is stale and every other one runs alone with reads (errRetry).
//
// PostgreSQL then pays one BEGIN, one lock statement, one check and one
// COMMIT (and one WAL flush) per group instead of per decision. A group
// whose transactions are all guarded by their own writes (guarded) skips
// the check and its round trip: one pipeline from BEGIN to COMMIT; when a
// write finds a copy stale, nothing was written and the group goes the
// checked way.

// errRetry: the transaction's group did not commit for a reason that is
// not the transaction's own; Update runs it again alone, with reads.
var errRetry = errors.New("store: the group commit failed; run alone")

// errCommitUnknown is errRetry when the group may have committed (an error
// at or after COMMIT's sending): the transaction runs again alone only if
// the store does not hold its writes (commitUnknown).
var errCommitUnknown = fmt.Errorf("%w (whether it committed is not known)", errRetry)

// commitUnknown is errCommitUnknown for one transaction, with the chain
// heads it moved and the changes it would have announced: a retry that
// finds those heads in the store knows the group committed.
type commitUnknown struct {
	heads   map[string]store.Head
	changes []store.Change
}

func (e *commitUnknown) Error() string { return errCommitUnknown.Error() }
func (e *commitUnknown) Unwrap() error { return errCommitUnknown }

// landed reports whether heads (read under the session's lock) are the
// ones the transaction moved: each head's hash covers the chain before it
// and the event it names, so only this transaction's commit wrote them.
func (e *commitUnknown) landed(heads map[string]store.Head) bool {
	if len(e.heads) == 0 {
		return false // it moved no chain: nothing tells
	}
	for ch, h := range e.heads {
		if got, ok := heads[ch]; !ok || got.Seq != h.Seq || got.Hash != h.Hash {
			return false
		}
	}
	return true
}

const (
	// groupCommitters is how many groups a replica alone has in flight at
	// once: while one is at the server, the next gathers (a replica that
	// sees others has one; replicas.go).
	groupCommitters = 2
	// maxGroup caps the transactions in one group.
	maxGroup = 128
	// groupTimeout bounds one group's round trips: a group must not wait
	// on one caller's context, so it has its own.
	groupTimeout = 30 * time.Second
)

// qGroupLock takes every session's lock, in the order of the array
// (sorted by the committer), and reads the schema version. It also sets
// plan_cache_mode for the rest of the transaction (set_config's third
// argument: as SET LOCAL), so that the check and the merged writes after
// it are planned generically: the check's custom plan (the planner sees
// the arrays' lengths) is cheaper than its generic one for small groups,
// so PostgreSQL would plan it again for every group, and the merged
// writes' generic plans serve every group as well. (A statement of its
// own, SET LOCAL cost the server one more statement per group.) The
// statements after it are bound, and so planned, after it ran.
const qGroupLock = `SELECT count(pg_advisory_xact_lock(k)),
	(SELECT COALESCE(max(version), 0) FROM statewright_migrations),
	set_config('plan_cache_mode', 'force_generic_plan', true) FROM unnest($1::bigint[]) AS k`

// qGroupVerify is qVerifyLive for many sessions, under their locks: it
// returns the places (1-based) of the sessions whose store no longer holds
// what their copies say, or where the call the transaction took as
// unrecorded is recorded. (The call is probed by a scalar subquery: NOT
// EXISTS under OR lets the planner hash the whole calls table instead.)
const qGroupVerify = `SELECT v.i FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::text[], $7::text[])
	WITH ORDINALITY AS v(key, id, rev, sseq, rseq, tuid, phase, i)
	WHERE NOT (
		COALESCE((SELECT revision FROM statewright_runs WHERE session_key = v.key AND status IN ` + backend.LiveStatusSQL + ` AND id = v.id), -1) = v.rev
		AND COALESCE((SELECT seq FROM statewright_heads WHERE chain = 'session:' || v.key), 0) = v.sseq
		AND COALESCE((SELECT seq FROM statewright_heads WHERE chain = v.id), 0) = v.rseq
		AND (v.tuid = '' OR (SELECT count(*) FROM statewright_calls
			WHERE session_key = v.key AND tool_use_id = v.tuid AND phase = v.phase) = 0))`

// groupCheck is what a grouped transaction's copy says the store holds.
type groupCheck struct {
	lock        int64
	runID       string
	rev         int64
	sessionSeq  int64
	runSeq      int64
	assumedID   string
	assumedWhen string
}

// groups gathers a replica's grouped transactions.
type groups struct {
	mu      sync.Mutex
	pending []*tx
	running int
	wg      sync.WaitGroup
	// active holds when each session's transaction last joined a group
	// (Unix nanoseconds), while a replica sees others (gather); full is
	// closed when want transactions are pending; lastTrip is how long the
	// last group took at the server.
	active   map[string]int64
	full     chan struct{}
	want     int
	lastTrip atomic.Int64
}

// groupable reports whether a transaction from c may join a group: its
// session has a live run (the check by index probes).
func groupable(c *cachedSession) bool { return c != nil && c.live != nil }

// updateGrouped is update for a transaction from a cached session with a
// live run: fn runs without I/O, and the writes join a group.
func (s *Store) updateGrouped(ctx context.Context, sessionKey string, fn func(tx store.Tx) error, c *cachedSession) error {
	t := &tx{TxBase: backend.TxBase{Key: sessionKey, At: s.now().UTC()}, ctx: ctx, s: s,
		heads: map[string]store.Head{}, known: map[string]bool{}, opt: true, group: true}
	t.beginCached(c)
	ferr := fn(t)
	t.Done = true
	if t.aborted {
		return errStale
	}
	if ferr != nil {
		return ferr
	}
	t.check.assumedID, t.check.assumedWhen = t.assumed.ToolUseID, string(t.assumed.Phase)
	t.queueCommitWrites()
	if err := s.commitGrouped(t); err != nil {
		if errors.Is(err, errCommitUnknown) {
			cu := &commitUnknown{heads: map[string]store.Head{}, changes: t.changes}
			for ch := range t.moved {
				cu.heads[ch] = t.heads[ch]
			}
			return cu
		}
		if !errors.Is(err, errStale) && !errors.Is(err, errRetry) {
			s.sessions.put(sessionKey, nil, false)
		}
		return err
	}
	if t.merged() && len(t.set.runs) == 1 {
		// The merged update returned no row: the run as stored is the
		// one it wrote.
		w, err := t.set.runs[0].stored(sessionKey)
		t.written, t.uncacheable = w, t.uncacheable || err != nil
	}
	s.cachedCommits.Add(1)
	s.groupedCommits.Add(1)
	s.sessions.put(sessionKey, t.cacheEntry(), true)
	s.notifyAfter(t.changes)
	return nil
}

// commitGrouped hands t to the committers and waits for its group.
func (s *Store) commitGrouped(t *tx) error {
	t.done = make(chan error, 1)
	g := &s.groups
	g.mu.Lock()
	if s.closed.Load() {
		g.mu.Unlock()
		return errRetry // alone, the closed store says so
	}
	g.addLocked(t)
	if g.running < s.committers() {
		g.running++
		g.wg.Add(1)
		go s.runGroups()
	}
	g.mu.Unlock()
	select {
	case err := <-t.done:
		return err
	case <-t.ctx.Done():
		// As when a caller gives up during its own COMMIT: it fails
		// closed, its group may still commit, and a retry of the call
		// replays what was recorded. (done is buffered: the committer
		// never blocks on an answer nobody takes.)
		return fmt.Errorf("store: update %s: %w", t.Key, t.ctx.Err())
	}
}

// addLocked makes t pending, under g.mu, and wakes a committer that
// gathers when it waits for no more.
func (g *groups) addLocked(t *tx) {
	g.pending = append(g.pending, t)
	if g.full != nil && len(g.pending) >= g.want {
		close(g.full)
		g.full = nil
	}
}

// runGroups commits groups until none is pending.
func (s *Store) runGroups() {
	defer s.groups.wg.Done()
	for {
		gathering := s.gather()
		batch := s.groups.take(gathering)
		if batch == nil {
			return
		}
		start := time.Now()
		s.commitGroup(batch)
		s.groups.lastTrip.Store(int64(time.Since(start)))
	}
}

// activeWindow: a session whose transaction joined one of this replica's
// groups within it is active, and the replica's next group waits for it
// (gather).
const activeWindow = 25 * time.Millisecond

// maxGather bounds that wait; so does the last group's time at the
// server, which is the bound that holds at all but a busy server's pace.
// 1 ms cut the wait short whenever a trip took longer, which is when
// fuller groups matter most: every group costs PostgreSQL about 0.45 ms of
// CPU besides its decisions' ~45 us each (pg9, bench/postgres.txt), and
// the committer's send and answers cost the replica as much again.
var maxGather = 8 * time.Millisecond

// gather makes the groups of a replica that shares the store with others
// as large as one replica's. With one committer per replica (replicas.go),
// a group holds what arrived while the replica's previous group was at the
// server, and the sessions that group answered come back just after the
// next one left: a replica's sessions split into cohorts that take turns,
// and its groups held 7-10 decisions against one replica's 9-12 (pg7,
// bench/postgres.txt), so the store paid every per-group cost (the
// transaction, its statements, its commit's WAL flush) more often for the
// same decisions. So, when it sees others, a committer waits until every
// session active on this replica (one that joined a group within
// activeWindow) is pending again, for at most maxGather or as long as the
// last group took at the server, whichever is shorter. A replica alone
// keeps two committers and does not wait. It reports whether the
// committer gathers (and take should note the sessions it takes).
func (s *Store) gather() bool {
	if s.presence.others.Load() == 0 {
		return false
	}
	g := &s.groups
	now := time.Now().UnixNano()
	g.mu.Lock()
	target := 0
	for k, at := range g.active {
		if now-at > int64(activeWindow) {
			delete(g.active, k)
			continue
		}
		target++
	}
	wait := min(maxGather, time.Duration(g.lastTrip.Load()))
	if n := len(g.pending); n == 0 || n >= target || wait <= 0 {
		g.mu.Unlock()
		return true
	}
	full := make(chan struct{})
	g.full, g.want = full, target
	g.mu.Unlock()
	timer := time.NewTimer(wait)
	select {
	case <-full:
		timer.Stop()
	case <-timer.C:
		g.mu.Lock()
		if g.full == full {
			g.full = nil
		}
		g.mu.Unlock()
	}
	return true
}

// take removes the next group from the pending transactions (nil: none
// pending, and the caller stops). A session appears once in a group; a
// second transaction on it waits for the next.
func (g *groups) take(gathering bool) []*tx {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.pending) == 0 {
		g.running--
		return nil
	}
	var (
		batch []*tx
		rest  []*tx
		seen  = map[string]bool{}
	)
	for _, t := range g.pending {
		if len(batch) < maxGroup && !seen[t.Key] {
			seen[t.Key] = true
			batch = append(batch, t)
		} else {
			rest = append(rest, t)
		}
	}
	g.pending = rest
	if gathering {
		if g.active == nil {
			g.active = map[string]int64{}
		}
		now := time.Now().UnixNano()
		for _, t := range batch {
			g.active[t.Key] = now
		}
	}
	return batch
}

// commitGroup commits one group and answers each of its transactions.
func (s *Store) commitGroup(batch []*tx) {
	ctx, cancel := context.WithTimeout(context.Background(), groupTimeout)
	defer cancel()
	live := batch[:0]
	for _, t := range batch {
		if err := t.ctx.Err(); err != nil {
			t.done <- fmt.Errorf("store: update %s: %w", t.Key, err)
			continue
		}
		live = append(live, t)
	}
	batch = live
	if len(batch) == 0 {
		return
	}
	answer := func(err error) {
		for _, t := range batch {
			t.done <- err
		}
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		answer(errRetry)
		return
	}
	ok := false
	defer func() {
		if !ok {
			rollbackConn(ctx, conn)
		}
		conn.Release()
	}()
	slices.SortFunc(batch, func(a, b *tx) int {
		switch {
		case a.check.lock < b.check.lock:
			return -1
		case a.check.lock > b.check.lock:
			return 1
		}
		return 0
	})
	n := len(batch)
	var (
		locks             = make([]int64, n)
		keys, ids, tuids  = make([]string, n), make([]string, n), make([]string, n)
		phases            = make([]string, n)
		revs, sseqs, rseq = make([]int64, n), make([]int64, n), make([]int64, n)
	)
	for i, t := range batch {
		c := t.check
		locks[i], keys[i], ids[i], revs[i], sseqs[i], rseq[i], tuids[i], phases[i] =
			c.lock, t.Key, c.runID, c.rev, c.sessionSeq, c.runSeq, c.assumedID, c.assumedWhen
	}
	if f := s.testCommitUnknown.Load(); f != nil && (*f)(false) {
		answer(errCommitUnknown) // (a test: as if sent and lost)
		return
	}
	if guarded(batch) {
		switch err := s.commitUnchecked(ctx, conn.Conn(), batch, locks); {
		case err == nil && s.testCommitted():
			ok = true
			answer(errCommitUnknown)
			return
		case err == nil:
			ok = true
			s.mergedCommits.Add(int64(len(batch)))
			s.uncheckedGroups.Add(1)
			answer(nil)
			return
		case pgCode(err) == "":
			// Not the server's refusal of a statement: whether the
			// group committed is unknown, as after an error at COMMIT.
			answer(errCommitUnknown)
			return
		}
		// A statement failed, so nothing was written: some copy is
		// stale (or the schema moved on). Check every copy, as below.
		rollbackConn(ctx, conn)
		if conn.Conn().IsClosed() {
			answer(errRetry)
			return
		}
		s.uncheckedFailed.Add(1)
	}
	stale, err := s.lockGroup(ctx, conn.Conn(), locks, keys, ids, revs, sseqs, rseq, tuids, phases)
	if err != nil {
		if errors.Is(err, store.ErrCorrupt) {
			answer(err) // the schema moved on: refuse, as a transaction alone would
		} else {
			answer(errRetry)
		}
		return
	}
	var (
		commit       = &pgx.Batch{}
		merged, rest []*tx
	)
	for i, t := range batch {
		switch {
		case stale[i+1]:
			t.done <- errStale
		case t.merged():
			merged = append(merged, t)
		default:
			rest = append(rest, t)
		}
	}
	reads := mergeWrites(commit, merged)
	restReads := make([][]func(pgx.BatchResults) error, len(rest))
	for i, t := range rest {
		var qs []*pgx.QueuedQuery
		qs, restReads[i] = t.statements()
		commit.QueuedQueries = append(commit.QueuedQueries, qs...)
	}
	batch = append(merged, rest...)
	commit.Queue("COMMIT")
	br := conn.Conn().SendBatch(ctx, commit)
	for _, read := range reads {
		if err := readResult(br, read); err != nil {
			// A merged statement failed: which session's row made it
			// fail is unknown, so each runs alone.
			br.Close()
			answer(errRetry)
			return
		}
	}
	for i := range rest {
		reads := restReads[i]
		i += len(merged)
		for _, read := range reads {
			if err := readResult(br, read); err != nil {
				br.Close()
				for j, o := range batch {
					switch {
					case j != i:
						o.done <- errRetry
					case pgCode(err) == "SW001" || pgCode(err) == "23505":
						o.done <- errStale
					case read == nil:
						o.done <- s.mapErr("update "+o.Key, err)
					default:
						o.done <- err
					}
				}
				return
			}
		}
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil || tag.String() != "COMMIT" {
		// An error at COMMIT leaves it unknown whether the group
		// committed: each transaction runs again alone, unless the
		// store holds the chain heads it moved (commitUnknown).
		answer(errCommitUnknown)
		return
	}
	if s.testCommitted() {
		ok = true
		answer(errCommitUnknown)
		return
	}
	ok = true
	s.mergedCommits.Add(int64(len(merged)))
	answer(nil)
}

// testCommitted reports whether a test has a group that committed answer
// as if its COMMIT's outcome were lost (Store.testCommitUnknown).
func (s *Store) testCommitted() bool {
	f := s.testCommitUnknown.Load()
	return f != nil && (*f)(true)
}

// guarded reports whether every transaction of a group is guarded by its
// own writes, so that the group needs no check of the copies before them
// (commitUnchecked): each merges with the others and writes its live run
// by compare-and-swap at the revision its copy holds, and a call it took
// as unrecorded it records, expecting a new row. The copy's run is then
// checked by the update (the run, its state and counters are what the
// copy says iff the revision is), each chain it appends to by the events'
// unique (chain, chain_seq) index (a head that moved since the copy makes
// the append collide), and the call by its insert. A chain the
// transaction does not append to it does not write, so a head that moved
// there since the copy changes nothing it writes (the next append from
// the copy collides).
func guarded(batch []*tx) bool {
	for _, t := range batch {
		if !t.merged() || len(t.set.runs) != 1 {
			return false
		}
		if w := t.set.runs[0]; w.id != t.check.runID || w.rev != t.check.rev {
			return false
		}
		if a := t.assumed; a.ToolUseID != "" && t.known[a.ToolUseID+"\x00"+string(a.Phase)] {
			return false
		}
	}
	return true
}

// qGroupLockExpect is qGroupLock refusing, by an error that aborts the
// transaction, a schema version other than $2.
const qGroupLockExpect = `SELECT count(pg_advisory_xact_lock(k)),
	statewright_expect((SELECT COALESCE(max(version), 0) FROM statewright_migrations), $2, 'schema version'),
	set_config('plan_cache_mode', 'force_generic_plan', true) FROM unnest($1::bigint[]) AS k`

// commitUnchecked commits a guarded group in one round trip: BEGIN, the
// locks, the merged writes and COMMIT in one pipeline, with no check of
// the copies (guarded says why none is needed). An error with a
// PostgreSQL code (pgCode) came from a statement before COMMIT, so
// nothing was written and the transaction is left open for the caller to
// roll back; any other error leaves it unknown whether the group
// committed.
func (s *Store) commitUnchecked(ctx context.Context, conn *pgx.Conn, batch []*tx, locks []int64) error {
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(qGroupLockExpect, locks, SchemaVersion())
	reads := append([]func(pgx.BatchResults) error{nil, nil}, mergeWrites(b, batch)...)
	b.Queue("COMMIT")
	br := conn.SendBatch(ctx, b)
	for _, read := range reads {
		if err := readResult(br, read); err != nil {
			br.Close()
			return err
		}
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err == nil && tag.String() != "COMMIT" {
		err = fmt.Errorf("store: group commit %s: the transaction ended with %s", s.where, tag)
	}
	if pgCode(err) != "" {
		// At COMMIT itself (a deferred constraint): as unknown as any
		// other failure there.
		err = fmt.Errorf("store: group commit %s: %v", s.where, err)
	}
	return err
}

// lockGroup sends BEGIN, the group's locks and checks; it returns the
// places (1-based) of the stale sessions.
func (s *Store) lockGroup(ctx context.Context, conn *pgx.Conn, locks []int64, keys, ids []string, revs, sseqs, rseqs []int64, tuids, phases []string) (map[int]bool, error) {
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(qGroupLock, locks) // (and the generic plans: see qGroupLock)
	b.Queue(qGroupVerify, keys, ids, revs, sseqs, rseqs, tuids, phases)
	br := conn.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return nil, s.mapErr("update: begin", err)
	}
	var (
		n, v int64
		mode string
	)
	if err := br.QueryRow().Scan(&n, &v, &mode); err != nil {
		return nil, s.mapErr("update: lock the sessions", err)
	}
	if want := SchemaVersion(); int(v) != want {
		return nil, fmt.Errorf("store: update %s: %w: the schema is at version %d, this process at %d (another replica migrated the store: replicas of different versions must not serve together; restart this one with a matching binary)",
			s.where, store.ErrCorrupt, v, want)
	}
	rows, err := br.Query()
	if err != nil {
		return nil, s.mapErr("update: check the sessions", err)
	}
	stale := map[int]bool{}
	for rows.Next() {
		var i int
		if err := rows.Scan(&i); err != nil {
			rows.Close()
			return nil, s.mapErr("update: check the sessions", err)
		}
		stale[i] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, s.mapErr("update: check the sessions", err)
	}
	return stale, br.Close()
}

// rollbackConn ends a transaction a group left open; a connection that
// cannot roll back is closed so the pool drops it.
func rollbackConn(ctx context.Context, conn *pgxpool.Conn) {
	c := conn.Conn()
	if c.IsClosed() {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if _, err := c.Exec(ctx, "ROLLBACK"); err != nil {
		c.Close(ctx)
	}
}

// setWrites are a grouped transaction's writes as rows: the committer
// merges the rows of every transaction whose writes are all of these kinds
// into one statement per table (mergeWrites), so PostgreSQL plans and runs
// four statements per group rather than four per decision. A transaction
// with any other write (a post record that settles, a new workflow, a
// notification) sends its statements as they are (statements), its rows
// built into statements then; a transaction that merges never builds them.
type setWrites struct {
	runs   []runRow
	events []eventRow
	calls  []callRow
	heads  []headRow
}

// headRow is a chain's new head and the seq it moved from (0: the chain
// had no head row; then the row is inserted, else updated).
type headRow struct {
	h    store.Head
	from int64
}

// runRow is the compare-and-swap update of a live run whose workflow did
// not change.
type runRow struct {
	id, state, status string
	rev, next         int64 // the revision read, the revision written
	at, iterations    int64
	audit             bool
	cols              backend.RunColumns
	// What the update leaves as it was (the workflow is the live run's).
	workflowID, workflowSource, digest string
	created                            time.Time
}

// stored is the run as the merged update leaves it in the store: what
// reading the row back would give (ScanRun decodes the same columns), so
// the update returns no row.
func (w *runRow) stored(key string) (*store.Run, error) {
	r := &store.Run{ID: w.id, SessionKey: key, WorkflowID: w.workflowID, WorkflowSource: w.workflowSource,
		SnapshotDigest: w.digest, State: w.state, Iterations: w.iterations, Status: store.Status(w.status),
		AuditOnly: w.audit, Revision: w.next, CreatedAt: w.created, UpdatedAt: backend.FromNanos(w.at)}
	r.Context, r.History, r.Evidence = rawColumn(w.cols.Context), rawColumn(w.cols.History), rawColumn(w.cols.Evidence)
	if err := backend.DecodeRunColumns(r, columnBytes(w.cols.Counters), columnBytes(w.cols.FilesEdited), columnBytes(w.cols.PendingApproval)); err != nil {
		return nil, err
	}
	return r, nil
}

// rawColumn is a JSON column as ScanRun reads it back.
func rawColumn(c *string) json.RawMessage { return backend.RawJSON(columnBytes(c)) }

func columnBytes(c *string) []byte {
	if c == nil {
		return nil
	}
	return []byte(*c)
}

type eventRow struct {
	e    *store.Event
	data *string
}

// callRow is a pre record the transaction saw absent.
type callRow struct {
	c    *store.Call
	cols backend.CallColumns
}

// merged reports whether t's writes can be merged with other sessions':
// every one has its row, and the run is written once.
func (t *tx) merged() bool {
	return len(t.writes.QueuedQueries) == 0 && len(t.set.runs) <= 1
}

// write is one of a grouped transaction's writes (tx.order): rows says
// which of set's slices holds it, at i; rowStatement, the statement at i
// of tx.writes.
type write struct {
	rows rowKind
	i    int
}

type rowKind uint8

const (
	rowStatement rowKind = iota
	rowRun
	rowEvent
	rowCall
	rowHead
)

// statements returns t's writes as statements, in the order they were
// made, with how to read each one's result (nil: its tag): what a group
// sends for a transaction whose writes do not merge.
func (t *tx) statements() ([]*pgx.QueuedQuery, []func(pgx.BatchResults) error) {
	b := &pgx.Batch{}
	var reads []func(pgx.BatchResults) error
	for _, w := range t.order {
		switch w.rows {
		case rowStatement:
			b.QueuedQueries = append(b.QueuedQueries, t.writes.QueuedQueries[w.i])
			reads = append(reads, t.results[w.i])
			continue
		case rowRun:
			b.Queue(qUpdateRun, runArgs(t.set.runs[w.i], t.Key)...)
			reads = append(reads, t.readWritten)
			continue
		case rowEvent:
			read, args := t.eventInsert(t.set.events[w.i])
			b.Queue(qInsertEvent, args...)
			reads = append(reads, read)
			continue
		case rowCall:
			cl := t.set.calls[w.i]
			c := cl.c
			b.Queue(qRecordPre+qExpectRecorded, c.ToolUseID, string(c.Phase), c.SessionKey, c.RunID, c.State,
				cl.cols.Outcome, cl.cols.Effects, string(c.Status), t.At.UnixNano(), cl.cols.SettledAt)
		case rowHead:
			h := t.set.heads[w.i].h
			b.Queue(qPutHead, h.Chain, h.Seq, h.Hash)
		}
		reads = append(reads, nil)
	}
	return b.QueuedQueries, reads
}

// runArgs are qUpdateRun's arguments for w in session key.
func runArgs(w runRow, key string) []any {
	return []any{w.state, w.cols.Context, w.cols.History, w.iterations, w.cols.Counters, w.cols.FilesEdited,
		w.cols.PendingApproval, w.status, w.audit, w.cols.Evidence, w.next, w.at, w.id, key, w.rev}
}

var qGroupRuns = `WITH u AS (UPDATE statewright_runs AS r SET state = v.state, context = v.context, history = v.history,
	iterations = v.iterations, counters = v.counters, files_edited = v.files_edited, pending_approval = v.pending_approval,
	status = v.status, audit_only = v.audit_only, evidence = v.evidence, revision = v.next, updated_at = v.at
	FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::text[], $9::text[],
		$10::text[], $11::text[], $12::boolean[], $13::text[], $14::bigint[], $15::bigint[])
		AS v(id, key, rev, state, context, history, iterations, counters, files_edited, pending_approval, status, audit_only, evidence, next, at)
	WHERE r.id = v.id AND r.session_key = v.key AND r.revision = v.rev RETURNING 1)
	SELECT statewright_expect(count(*), $16, 'update runs') FROM u`

const (
	qGroupEvents = `INSERT INTO statewright_events (run_id, session_key, time, kind, state, tool,
	input_digest, decision, rule, reason, tool_use_id, data, prev_hash, hash, chain, chain_seq)
	SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
		$9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[], $16::bigint[])
	RETURNING seq, chain, chain_seq`
	// qGroupCalls inserts the pre call records the group's transactions
	// took as unrecorded. A plain insert: a record that exists after all
	// fails the statement (unique_violation), and with it the group,
	// exactly as a count short of the rows would; ON CONFLICT DO NOTHING
	// made every row a speculative insertion (a probe of the key before
	// the insert and a third WAL record to confirm it).
	qGroupCalls = `INSERT INTO statewright_calls (` + backend.CallColumnList + `)
	SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
		$9::bigint[], $10::bigint[])`
	// qGroupHeadsMoved moves heads that exist from the seq the copies
	// say to the new one, checking that every row moved; a plain update
	// (HOT: nothing indexed changes), where the upsert probed the key,
	// locked the row (a WAL record of its own) and then updated it.
	qGroupHeadsMoved = `WITH u AS (UPDATE statewright_heads AS h SET seq = v.seq, hash = v.hash
	FROM unnest($1::text[], $2::bigint[], $3::text[], $4::bigint[]) AS v(chain, seq, hash, old)
	WHERE h.chain = v.chain AND h.seq = v.old RETURNING 1)
	SELECT statewright_expect(count(*), $5, 'move heads') FROM u`
	// qGroupHeads writes the heads of chains that had none.
	qGroupHeads = `INSERT INTO statewright_heads (chain, seq, hash) SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[])
	ON CONFLICT (chain) DO UPDATE SET seq = excluded.seq, hash = excluded.hash`
)

// mergeWrites queues on b the rows of every transaction in ts (whose
// writes all merge) in one statement per table; the returned functions
// read the statements' results in order, and fill each transaction's
// written run and event Seqs.
func mergeWrites(b *pgx.Batch, ts []*tx) []func(pgx.BatchResults) error {
	var (
		reads []func(pgx.BatchResults) error
		evs   = map[string]*store.Event{}
	)
	var r struct {
		id, key, state, status                               []string
		context, history, counters, files, pending, evidence []*string
		rev, iterations, next, at                            []int64
		audit                                                []bool
	}
	var e struct {
		runID, key, kind, state, tool, digest, decision, rule, reason, toolUse, prev, hash, chain []string
		data                                                                                      []*string
		time, chainSeq                                                                            []int64
	}
	var c struct {
		toolUse, phase, key, runID, state, status []string
		outcome, effects                          []*string
		created, settled                          []int64
	}
	var h, moved struct {
		chain, hash []string
		seq, from   []int64
	}
	for _, t := range ts {
		for _, w := range t.set.runs {
			r.id, r.key, r.rev = append(r.id, w.id), append(r.key, t.Key), append(r.rev, w.rev)
			r.state, r.status = append(r.state, w.state), append(r.status, w.status)
			r.context, r.history = append(r.context, w.cols.Context), append(r.history, w.cols.History)
			r.iterations, r.counters = append(r.iterations, w.iterations), append(r.counters, w.cols.Counters)
			r.files, r.pending = append(r.files, w.cols.FilesEdited), append(r.pending, w.cols.PendingApproval)
			r.audit, r.evidence = append(r.audit, w.audit), append(r.evidence, w.cols.Evidence)
			r.next, r.at = append(r.next, w.next), append(r.at, w.at)
		}
		for _, w := range t.set.events {
			ev := w.e
			evs[ev.Chain+"\x00"+strconv.FormatInt(ev.ChainSeq, 10)] = ev
			e.runID, e.key, e.time = append(e.runID, ev.RunID), append(e.key, ev.SessionKey), append(e.time, ev.Time.UnixNano())
			e.kind, e.state, e.tool = append(e.kind, string(ev.Kind)), append(e.state, ev.State), append(e.tool, ev.Tool)
			e.digest, e.decision, e.rule = append(e.digest, ev.InputDigest), append(e.decision, ev.Decision), append(e.rule, ev.Rule)
			e.reason, e.toolUse, e.data = append(e.reason, ev.Reason), append(e.toolUse, ev.ToolUseID), append(e.data, w.data)
			e.prev, e.hash = append(e.prev, ev.PrevHash), append(e.hash, ev.Hash)
			e.chain, e.chainSeq = append(e.chain, ev.Chain), append(e.chainSeq, ev.ChainSeq)
		}
		for _, w := range t.set.calls {
			cl := w.c
			c.toolUse, c.phase, c.key = append(c.toolUse, cl.ToolUseID), append(c.phase, string(cl.Phase)), append(c.key, cl.SessionKey)
			c.runID, c.state, c.status = append(c.runID, cl.RunID), append(c.state, cl.State), append(c.status, string(cl.Status))
			c.outcome, c.effects = append(c.outcome, w.cols.Outcome), append(c.effects, w.cols.Effects)
			c.created, c.settled = append(c.created, t.At.UnixNano()), append(c.settled, w.cols.SettledAt)
		}
		for _, w := range t.set.heads {
			hd := w.h
			if w.from > 0 {
				moved.chain, moved.seq, moved.hash = append(moved.chain, hd.Chain), append(moved.seq, hd.Seq), append(moved.hash, hd.Hash)
				moved.from = append(moved.from, w.from)
				continue
			}
			h.chain, h.seq, h.hash = append(h.chain, hd.Chain), append(h.seq, hd.Seq), append(h.hash, hd.Hash)
		}
	}
	if n := len(r.id); n > 0 {
		b.Queue(qGroupRuns, r.id, r.key, r.rev, r.state, nullable(r.context), nullable(r.history), r.iterations, nullable(r.counters),
			nullable(r.files), nullable(r.pending), r.status, r.audit, nullable(r.evidence), r.next, r.at, n)
		reads = append(reads, nil)
	}
	if len(e.chain) > 0 {
		b.Queue(qGroupEvents, e.runID, e.key, e.time, e.kind, e.state, e.tool, e.digest, e.decision, e.rule, e.reason,
			e.toolUse, nullable(e.data), e.prev, e.hash, e.chain, e.chainSeq)
		reads = append(reads, func(br pgx.BatchResults) error {
			rows, err := br.Query()
			if err != nil {
				return err
			}
			defer rows.Close()
			n := 0
			for rows.Next() {
				var (
					seq, chainSeq int64
					chain         string
				)
				if err := rows.Scan(&seq, &chain, &chainSeq); err != nil {
					return err
				}
				if ev := evs[chain+"\x00"+strconv.FormatInt(chainSeq, 10)]; ev != nil {
					ev.Seq = seq
					n++
				}
			}
			if err := rows.Err(); err != nil {
				return err
			}
			if n != len(evs) {
				return fmt.Errorf("store: append: %d of %d events inserted", n, len(evs))
			}
			return nil
		})
	}
	if n := len(c.toolUse); n > 0 {
		b.Queue(qGroupCalls, c.toolUse, c.phase, c.key, c.runID, c.state, nullable(c.outcome), nullable(c.effects), c.status, c.created, c.settled)
		reads = append(reads, nil)
	}
	if n := len(moved.chain); n > 0 {
		b.Queue(qGroupHeadsMoved, moved.chain, moved.seq, moved.hash, moved.from, n)
		reads = append(reads, nil)
	}
	if len(h.chain) > 0 {
		b.Queue(qGroupHeads, h.chain, h.seq, h.hash)
		reads = append(reads, nil)
	}
	return reads
}

// nullable passes a column of nullable text to pgx as an array it reads
// directly: given a []*string, pgx wraps it in reflection to read each
// element (1.5 % of the CPU samples of servebench -inprocess).
func nullable(v []*string) pgtype.FlatArray[*string] { return pgtype.FlatArray[*string](v) }

// readResult reads the next statement's result with read (nil: its tag).
func readResult(br pgx.BatchResults, read func(pgx.BatchResults) error) error {
	if read != nil {
		return read(br)
	}
	_, err := br.Exec()
	return err
}
