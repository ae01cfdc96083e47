package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/internal/backend"
)

// tables names the tables for the shared queries.
var tables = backend.Tables{Runs: "runs", Events: "events", Calls: "calls", Snapshots: "snapshots", RunsOrder: "rowid DESC",
	SessionByRuns: true}

// Update runs fn in the writer's next transaction (see writer): it re-reads
// the session's live run there, and commits fn's writes with the batch, or
// rolls back only fn's writes when fn returns an error (or panics).
func (s *Store) Update(ctx context.Context, sessionKey string, fn func(tx store.Tx) error) error {
	if err := s.check("update"); err != nil {
		return err
	}
	if sessionKey == "" {
		return fmt.Errorf("store: update: %w: empty session key", store.ErrInvalid)
	}
	if err := s.writer().submit(&job{ctx: ctx, key: sessionKey, fn: fn}); err != nil {
		if errors.Is(err, store.ErrClosed) {
			return fmt.Errorf("store: update: %w", err)
		}
		return err
	}
	return nil
}

// tx is one session's transaction inside a writer batch.
type tx struct {
	backend.TxBase
	ctx   context.Context
	b     *batch
	heads map[string]store.Head // chains this transaction moved
	next  int64                 // the Seq its next event gets (0: not read yet)
	// calls are the records of the tool_use_ids Call read, every phase
	// (none: an empty entry); Record drops its id's entry.
	calls map[string][]*store.Call
	// reads are the tool_use_ids the caller said it may look up
	// (store.WithCallReads): the first lookup of one reads them all.
	reads []string
	// hint is the tool_use_id whose pre record the caller said it looks
	// up first (store.WithCallPrefetch, a decision), while the writer
	// guesses (see guessed); guess is that id once Call answered that it
	// has no pre record without reading it.
	hint, guess string
	// guessOK: the guess is proved (the pre record's insert found no
	// record, or a read did); guessWrong: a record was found.
	guessOK, guessWrong bool
}

// A decision's transaction first looks up the pre record of its call's
// tool_use_id, to replay the answer of a retried call; nearly always there
// is none, and it then inserts that record. So while the writer guesses
// (writer.guessing), Call answers "no pre record" for the hinted id
// without reading it, and the insert proves it: the calls key is unique,
// and the writer's transaction is the only one. Anything that cannot be
// proved so reads: a record of another phase for that id, or a function
// that ends without inserting it (checkGuess). A function that ran on a
// guess that was wrong, or that failed before the guess was proved, runs
// again with the batch (errGuessed), reading, and every function of the
// next batches reads for a while: what commits is what reading first
// would have committed.
func (t *tx) guessable(id string, phase store.Phase) bool {
	if t.hint != id || phase != store.PhasePre {
		return false
	}
	t.hint, t.guess = "", id
	return true
}

// checkGuess proves or refutes the guess of a function that ended without
// doing so: it reads the id's records. It returns errGuessed when the
// function has to run again, reading.
func (t *tx) checkGuess(failed bool) error {
	if t.guess == "" {
		return nil
	}
	if !t.guessOK && !t.guessWrong && !failed {
		if err := t.readGuess(); err != nil {
			return mapErr("call "+t.guess, err)
		}
	}
	if t.guessWrong || !t.guessOK {
		return errGuessed
	}
	return nil
}

// readGuess reads the guessed id's records and proves or refutes the guess.
func (t *tx) readGuess() error {
	if err := t.readCalls(t.guess); err != nil {
		return err
	}
	t.guessWrong = hasPre(t.calls[t.guess])
	t.guessOK = !t.guessWrong
	return nil
}

// errGuessed: a function ran on a guess about its call's pre record that
// was wrong or not proved (see tx.guessable).
var errGuessed = errors.New("a function ran on a guess about its call record")

const (
	qLive           = "SELECT " + backend.RunColumnsNoSnapshot + " FROM runs WHERE session_key = ? AND status IN " + backend.LiveStatusSQL
	qLast           = "SELECT " + backend.RunColumnsNoSnapshot + " FROM runs WHERE session_key = ? ORDER BY created_at DESC, rowid DESC LIMIT 1"
	qSnapshot       = "SELECT body FROM snapshots WHERE digest = ?"
	qInsertSnapshot = "INSERT INTO snapshots (digest, body) VALUES (?, ?) ON CONFLICT (digest) DO NOTHING"
	// qCalls reads every phase of a tool_use_id at once: a settle asks
	// whether the call was settled (post) and then for its decision (pre).
	qCalls = "SELECT " + backend.CallColumnList + " FROM calls WHERE session_key = ? AND tool_use_id = ?"
)

// begin reads the session's live run, or its newest when none is live;
// a live run the writer knows as committed is not read again.
func (t *tx) begin() error {
	if r := t.b.runs[t.Key]; r != nil {
		t.Begin(r)
		return nil
	}
	live, err := t.readRun(qLive)
	if err != nil {
		return err
	}
	t.Begin(live)
	if live == nil {
		last, err := t.readRun(qLast)
		if err != nil {
			return err
		}
		t.BeginEnded(last)
	}
	return nil
}

// readRun reads one run of the session with q, its snapshot from the
// store's cache (nil, nil when there is none).
func (t *tx) readRun(q string) (*store.Run, error) {
	w := t.b.w
	r, err := backend.ScanRun(w.queryRow(t.ctx, q, t.Key))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, mapErr("update "+t.Key+": read run", err)
	}
	if r.SnapshotDigest == "" {
		return r, nil
	}
	if snap, ok := w.s.snapshots.Get(r.SnapshotDigest); ok {
		r.Snapshot = snap
		return r, nil
	}
	var snap []byte
	if err := w.queryRow(t.ctx, qSnapshot, r.SnapshotDigest).Scan(&snap); err != nil {
		return nil, mapErr("update "+t.Key+": read the run's workflow", err)
	}
	if len(snap) > 0 {
		r.Snapshot = snap
		w.s.snapshots.Put(r.SnapshotDigest, snap)
	}
	return r, nil
}

// Call implements store.Tx.
func (t *tx) Call(toolUseID string, phase store.Phase) (*store.Call, error) {
	if err := t.Use("call"); err != nil {
		return nil, err
	}
	calls, ok := t.calls[toolUseID]
	if !ok && t.guessable(toolUseID, phase) {
		return nil, fmt.Errorf("store: call %s/%s: %w", toolUseID, phase, store.ErrNotFound)
	}
	if !ok {
		read := t.readCalls
		if toolUseID == t.guess && !t.guessOK && !t.guessWrong {
			read = func(string) error { return t.readGuess() }
		}
		if err := read(toolUseID); err != nil {
			return nil, mapErr("call "+toolUseID, err)
		}
		calls = t.calls[toolUseID]
	}
	for _, c := range calls {
		if c.Phase == phase {
			cp := *c
			return &cp, nil
		}
	}
	return nil, fmt.Errorf("store: call %s/%s: %w", toolUseID, phase, store.ErrNotFound)
}

// maxCallReads bounds how many tool_use_ids one statement reads.
const maxCallReads = 4

// qCallsOf reads every phase of n tool_use_ids (n ≤ maxCallReads), one
// index search each: qCallsOf[n-1].
var qCallsOf = func() (qs [maxCallReads]string) {
	q := qCalls
	for i := range qs {
		if i > 0 {
			q += " UNION ALL " + qCalls
		}
		qs[i] = q
	}
	return qs
}()

// readCalls reads every phase recorded for toolUseID in the session into
// t.calls, with the records of the other ids of the transaction's
// WithCallReads hint that it has not read (an id without records gets an
// empty entry).
func (t *tx) readCalls(toolUseID string) error {
	ids := []string{toolUseID}
	if slices.Contains(t.reads, toolUseID) {
		for _, id := range t.reads {
			if _, ok := t.calls[id]; !ok && !slices.Contains(ids, id) && len(ids) < maxCallReads {
				ids = append(ids, id)
			}
		}
	}
	args := make([]any, 0, 2*len(ids))
	for _, id := range ids {
		args = append(args, t.Key, id)
	}
	var got []*store.Call
	if err := t.b.w.queryEach(t.ctx, qCallsOf[len(ids)-1], args, func(sc backend.Scanner) error {
		c, err := backend.ScanCall(sc)
		got = append(got, c)
		return err
	}); err != nil {
		return err
	}
	if t.calls == nil {
		t.calls = map[string][]*store.Call{}
	}
	for _, id := range ids {
		t.calls[id] = nil
	}
	for _, c := range got {
		t.calls[c.ToolUseID] = append(t.calls[c.ToolUseID], c)
	}
	return nil
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

// runArgs encodes the mutable columns of r in column order from state on.
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

func (t *tx) insertRun(r *store.Run, args []any) error {
	id, err := backend.NewID("run_", 12)
	if err != nil {
		return err
	}
	dg, err := t.putSnapshot(r.Snapshot)
	if err != nil {
		return err
	}
	all := append([]any{id, r.SessionKey, r.WorkflowID, r.WorkflowSource, nil, dg}, args...)
	all = append(all, int64(1), t.At.UnixNano(), t.At.UnixNano())
	_, err = t.b.w.exec(t.ctx, "INSERT INTO runs ("+backend.RunColumnList+") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", all...)
	if err != nil {
		if isConstraint(err) {
			return fmt.Errorf("store: create run for %s: %w: the session already has a live run", t.Key, store.ErrConflict)
		}
		return mapErr("create run for "+t.Key, err)
	}
	r.ID, r.SnapshotDigest, r.Revision, r.CreatedAt, r.UpdatedAt = id, dg, 1, t.At, t.At
	return nil
}

const (
	runSet = `state = ?, context = ?, history = ?, iterations = ?, counters = ?, files_edited = ?,
		pending_approval = ?, status = ?, audit_only = ?, evidence = ?, revision = ?, updated_at = ?`
	qUpdateRun = "UPDATE runs SET " + runSet + " WHERE id = ? AND session_key = ? AND revision = ?"
	// qUpdateRunCounters leaves the columns the live-run index depends on
	// alone (status; pending_approval and audit_only with it), so that a
	// decision, which moves only counters, writes no index page.
	qUpdateRunCounters = `UPDATE runs SET state = ?, context = ?, history = ?, iterations = ?, counters = ?, files_edited = ?,
		evidence = ?, revision = ?, updated_at = ? WHERE id = ? AND session_key = ? AND revision = ?`
	qUpdateRunWorkflow = "UPDATE runs SET workflow_id = ?, workflow_source = ?, snapshot = NULL, snapshot_digest = ?, " + runSet +
		" WHERE id = ? AND session_key = ? AND revision = ?"
)

func (t *tx) updateRun(r *store.Run, args []any) error {
	next := r.Revision + 1
	var (
		q   string
		all []any
		dg  string
	)
	// The snapshot rarely changes: rewrite it (and its digest) only when it did.
	if t.SameWorkflow(r) && r.Status == t.Live.Status && r.AuditOnly == t.Live.AuditOnly &&
		r.PendingApproval == nil && t.Live.PendingApproval == nil {
		dg = t.Live.SnapshotDigest
		q = qUpdateRunCounters
		// args: state, context, history, iterations, counters, files_edited, pending_approval, status, audit_only, evidence
		all = append(append(args[:6:6], args[9]), next, t.At.UnixNano(), r.ID, t.Key, r.Revision)
	} else if t.SameWorkflow(r) {
		dg = t.Live.SnapshotDigest
		q = qUpdateRun
		all = append(args, next, t.At.UnixNano(), r.ID, t.Key, r.Revision)
	} else {
		var err error
		if dg, err = t.putSnapshot(r.Snapshot); err != nil {
			return err
		}
		q = qUpdateRunWorkflow
		all = append([]any{r.WorkflowID, r.WorkflowSource, dg}, args...)
		all = append(all, next, t.At.UnixNano(), r.ID, t.Key, r.Revision)
	}
	res, err := t.b.w.exec(t.ctx, q, all...)
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
		err := t.b.w.queryRow(t.ctx, "SELECT revision FROM runs WHERE id = ? AND session_key = ?", r.ID, t.Key).Scan(&rev)
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

// putSnapshot stores a workflow snapshot under its digest (once) and
// returns the digest ("" for none).
func (t *tx) putSnapshot(b []byte) (string, error) {
	dg := backend.SnapshotDigestOf(b)
	if dg == "" {
		return "", nil
	}
	if _, err := t.b.w.exec(t.ctx, qInsertSnapshot, dg, b); err != nil {
		return "", mapErr("store the workflow snapshot", err)
	}
	t.b.w.s.snapshots.Put(dg, b)
	return dg, nil
}

// head returns a chain's head as this transaction stands.
func (t *tx) head(chain string) (store.Head, error) {
	if h, ok := t.heads[chain]; ok {
		return h, nil
	}
	return t.b.head(t.ctx, chain)
}

const qInsertEvent = `INSERT INTO events (seq, run_id, session_key, time, kind, state, tool,
	input_digest, decision, rule, reason, tool_use_id, data, prev_hash, hash, chain, chain_seq)
	VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`

// Append implements store.Tx: each event joins its chain.
func (t *tx) Append(events ...*store.Event) error {
	if err := t.Use("append"); err != nil {
		return err
	}
	for _, e := range events {
		if err := t.PrepareAppend(e); err != nil {
			return err
		}
		if err := t.append(e); err != nil {
			return err
		}
	}
	return nil
}

// append links a prepared event into its chain and inserts it.
func (t *tx) append(e *store.Event) error {
	h, err := t.head(e.Chain)
	if err != nil {
		return err
	}
	if t.next == 0 {
		if t.next, err = t.b.seq(t.ctx); err != nil {
			return err
		}
	}
	e.Seq = t.next
	h = backend.Link(e, h)
	var data any
	if e.Data != nil {
		data = string(e.Data)
	}
	if _, err := t.b.w.exec(t.ctx, qInsertEvent,
		e.Seq, e.RunID, e.SessionKey, e.Time.UnixNano(), string(e.Kind), e.State, e.Tool, e.InputDigest,
		e.Decision, e.Rule, e.Reason, e.ToolUseID, data, e.PrevHash, e.Hash, e.Chain, e.ChainSeq); err != nil {
		return mapErr(fmt.Sprintf("append %s event", e.Kind), err)
	}
	if t.heads == nil {
		t.heads = map[string]store.Head{}
	}
	t.heads[e.Chain] = h
	t.next++
	return nil
}

// merge hands what a committed transaction moved on to its batch: the
// chain heads, the next Seq and the session's live run (TxBase.Live is
// replaced, never changed in place, when the run is written).
func (t *tx) merge(b *batch) {
	if t.Live != nil {
		b.runs[t.Key] = t.Live
	} else {
		delete(b.runs, t.Key)
	}
	for c, h := range t.heads {
		b.heads[c] = h
		b.dirty[c] = true
	}
	if t.next != 0 {
		b.nextSeq = t.next
	}
}

const (
	qInsertCall = "INSERT INTO calls (" + backend.CallColumnList + ") VALUES (?,?,?,?,?,?,?,?,?,?)"
	qSettle     = `UPDATE calls SET status = ?, settled_at = ?
		WHERE session_key = ? AND tool_use_id = ? AND phase = 'pre' AND status = 'reserved'`
)

// Record implements store.Tx; a post record settles the reserved pre record.
func (t *tx) Record(c *store.Call) error {
	if err := t.Use("record call"); err != nil {
		return err
	}
	cols, err := backend.PrepareCall(c, t.Key, t.RunID, t.At)
	if err != nil {
		return err
	}
	if t.hint == c.ToolUseID {
		t.hint = "" // written before it was looked up: no guess
	}
	guessed := t.guess == c.ToolUseID && !t.guessOK && !t.guessWrong
	if guessed && c.Phase != store.PhasePre {
		// What the id's pre record is decides what this record
		// settles: read it.
		if err := t.readGuess(); err != nil {
			return mapErr("record call "+c.ToolUseID, err)
		}
		if t.guessWrong {
			return fmt.Errorf("store: record call %s/%s: %w", c.ToolUseID, c.Phase, errGuessed)
		}
		guessed = false
	}
	// The records this transaction read of the id (Call), if it read
	// them: they are the stored ones, since every write of the id's
	// records in the transaction is a Record, which forgets them.
	read, wasRead := t.calls[c.ToolUseID]
	delete(t.calls, c.ToolUseID)
	if _, err := t.b.w.exec(t.ctx, qInsertCall,
		c.ToolUseID, string(c.Phase), c.SessionKey, c.RunID, c.State, cols.Outcome, cols.Effects, string(c.Status),
		t.At.UnixNano(), cols.SettledAt); err != nil {
		if isConstraint(err) {
			if guessed {
				t.guessWrong = true
			}
			return fmt.Errorf("store: record call %s/%s: %w", c.ToolUseID, c.Phase, store.ErrDuplicate)
		}
		return mapErr("record call "+c.ToolUseID, err)
	}
	if guessed {
		t.guessOK = true // the key is unique: there was no pre record
	}
	if c.Phase == store.PhasePost && (!wasRead || reservedPre(read)) {
		// Known to have no reserved pre record (most calls settle
		// nothing: no files, no interrupt), the UPDATE would match
		// no row: it is not run.
		if _, err := t.b.w.exec(t.ctx, qSettle, string(c.SettlesAs()), t.At.UnixNano(), t.Key, c.ToolUseID); err != nil {
			return mapErr("settle call "+c.ToolUseID, err)
		}
	}
	return nil
}

// hasPre reports whether records hold a pre record.
func hasPre(records []*store.Call) bool {
	for _, c := range records {
		if c.Phase == store.PhasePre {
			return true
		}
	}
	return false
}

// reservedPre reports whether records hold a reserved pre record.
func reservedPre(records []*store.Call) bool {
	for _, c := range records {
		if c.Phase == store.PhasePre && c.Status == store.CallReserved {
			return true
		}
	}
	return false
}
