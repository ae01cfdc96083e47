package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"os"
	stdruntime "runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/internal/backend"
)

// maxBatch caps how many sessions' transactions one commit carries.
const maxBatch = 128

// sharedSingles is how many batches of one in a row the writer's goroutine
// cuts after a batch of several before callers lead again (see take).
const sharedSingles = 8

// writer commits every write this Store makes (group commit): one
// connection, whose statements are prepared once, used by one batch at a
// time. A Store.Update queues its function and waits; the writer takes
// every function queued meanwhile into one BEGIN IMMEDIATE transaction
// (a function that fails rolls back only its own writes: see commit), and
// commits them together. Each caller gets its answer
// only after the commit: as durable as the store's synchronous setting
// makes any commit. Other processes' writers still queue on the file
// lock, one batch at a time.
//
// A caller that finds the writer idle (no batch running, nothing queued)
// while batches hold one function leads: it commits its own function in
// its own goroutine, as a batch of one, instead of handing it to the
// writer's goroutine and waiting to be woken (two goroutine wake-ups per
// write). Whatever queued meanwhile is handed to the goroutine when the
// leader's batch is done. Once a batch held several functions, callers
// queue until the goroutine has cut sharedSingles batches of one in a
// row (see take). While batches hold several functions, the goroutine
// yields to the callers it answered before it cuts the next batch.
type writer struct {
	s *Store

	mu     sync.Mutex
	queue  []*job
	closed bool
	busy   bool          // a batch runs (the goroutine's or a leader's): it owns the fields below
	shared bool          // a recent batch had more than one job (sessions write concurrently): see take
	single int           // batches of one the goroutine cut in a row while shared
	last   int           // how many jobs the goroutine's last batch had
	handed bool          // a leader handed its turn (busy) to the goroutine
	wake   chan struct{} // capacity 1: something was queued, handed over, or close
	done   chan struct{} // closed when the goroutine ends

	// Owned by whoever runs a batch (busy).
	conn  *sql.Conn
	stmts map[string]*sql.Stmt
	// execs are the statements exec runs, prepared on the driver's
	// connection (see exec); args is exec's argument buffer.
	execs map[string]driver.Stmt
	args  []driver.NamedValue
	wl    *writeLock
	known known
	ckpt  *walCheckpointer // a long-lived store's background checkpoints
	// saving is how many batches more run each function in a savepoint
	// of its own (see commit): set after a function failed.
	saving int
	// reading is how many batches more read every call record they look
	// up instead of guessing (see tx.guessable): set after a guess was
	// wrong or not proved.
	reading int
	// leads counts the batches leaders committed (for the tests).
	leads atomic.Int64
}

// known is what the writer's last committed batch left behind: the
// schema checked, the next store Seq, chain heads and sessions' live runs. It holds while no
// other connection commits, which PRAGMA data_version tells (it changes
// on this connection only when another one committed), so a batch reads
// none of it again; any other outcome (a rollback, a store write of its
// own) forgets it.
type known struct {
	valid       bool
	dataVersion int64
	seqLoaded   bool
	nextSeq     int64
	heads       map[string]store.Head
	runs        map[string]*store.Run // live runs as committed, by session
}

// maxKnownHeads bounds the heads (and the live runs) the writer keeps
// between batches.
const maxKnownHeads = 4096

// job is one queued write: a session's transaction function, or a write
// of the store's own (prune, retention, checkpoint), which runs alone.
type job struct {
	ctx context.Context
	key string
	fn  func(tx store.Tx) error
	raw func(b *batch) error
	res chan jobResult // capacity 1
}

type jobResult struct {
	err      error
	panicked bool
	value    any // the panic's value
}

func newWriter(s *Store) *writer {
	w := &writer{s: s, wake: make(chan struct{}, 1), done: make(chan struct{}), stmts: map[string]*sql.Stmt{}, execs: map[string]driver.Stmt{}}
	go w.loop()
	return w
}

// submit queues j and waits for its result. A panic in the job's function
// is raised again here, in the caller's goroutine.
func (w *writer) submit(j *job) error {
	j.res = make(chan jobResult, 1)
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return store.ErrClosed
	}
	if !w.busy && !w.shared && len(w.queue) == 0 {
		w.busy = true
		w.mu.Unlock()
		w.lead(j)
	} else {
		w.queue = append(w.queue, j)
		w.mu.Unlock()
		w.signal()
	}
	r := <-j.res
	if r.panicked {
		panic(r.value)
	}
	return r.err
}

// close lets the goroutine finish the queue, then stops it and releases
// the connection.
func (w *writer) close() error {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.signal()
	<-w.done
	if w.ckpt != nil {
		w.ckpt.close()
	}
	var err error
	for _, st := range w.stmts {
		st.Close()
	}
	if w.conn != nil && len(w.execs) > 0 {
		w.conn.Raw(func(any) error {
			for _, st := range w.execs {
				st.Close()
			}
			return nil
		})
	}
	if w.conn != nil {
		err = w.conn.Close()
	}
	if w.wl != nil {
		if lerr := w.wl.close(); err == nil {
			err = lerr
		}
	}
	return err
}

// signal wakes the goroutine.
func (w *writer) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// lead runs j as a batch of its own in the caller's goroutine (w.busy is
// the caller's). Then it gives the turn up, or hands it to the goroutine
// when jobs queued meanwhile, the checkpointer asks for a checkpoint to
// finish (which no caller waits for) or the store closes.
func (w *writer) lead(j *job) {
	defer func() {
		// A panic of the writer's own (a job's is recovered in runFn)
		// leaves the connection in an unknown state: end the process,
		// as it did when only the goroutine ran batches, rather than let
		// a caller's recover keep a writer that never runs again.
		if v := recover(); v != nil {
			go panic(v)
			select {}
		}
	}()
	w.leads.Add(1)
	w.run([]*job{j})
	w.mu.Lock()
	hand := len(w.queue) > 0 || w.closed || (w.ckpt != nil && w.ckpt.finish.Load())
	if hand {
		w.handed = true
	} else {
		w.busy = false
	}
	w.mu.Unlock()
	if hand {
		w.signal()
	}
}

func (w *writer) loop() {
	defer close(w.done)
	for {
		jobs, ok := w.take()
		if !ok {
			return
		}
		if len(jobs) > 0 {
			w.run(jobs)
		}
		if w.ckpt != nil && w.ckpt.finish.Swap(false) {
			// Every caller has its answer: copy the frames the
			// checkpointer left, so that the next transaction restarts
			// the WAL (see walCheckpointer).
			pass(context.Background(), w.conn)
		}
		w.mu.Lock()
		w.busy = false
		w.mu.Unlock()
	}
}

// take waits for its turn and takes a batch: every queued session
// transaction up to maxBatch, or one write of the store's own; none when
// a leader handed its turn over (a checkpoint to finish comes first).
func (w *writer) take() ([]*job, bool) {
	w.mu.Lock()
	for {
		if w.handed {
			// The leader's batch may have to be followed by a
			// checkpoint before the next: take nothing this turn.
			w.handed = false
			w.mu.Unlock()
			return nil, true
		}
		if !w.busy && len(w.queue) > 0 {
			w.busy = true
			if w.shared {
				// Sessions write concurrently: the callers this
				// goroutine just answered are runnable, most of
				// them on its own P. Let them queue their next
				// writes before the batch is cut, or batches
				// stay a few jobs long and each pays a commit.
				for range 4 {
					n := len(w.queue)
					w.mu.Unlock()
					stdruntime.Gosched()
					w.mu.Lock()
					if len(w.queue) == n || len(w.queue) >= w.last {
						break
					}
				}
			}
			break
		}
		if w.closed && !w.busy {
			w.mu.Unlock()
			return nil, false
		}
		w.mu.Unlock()
		<-w.wake
		w.mu.Lock()
	}
	n := 1
	if w.queue[0].raw == nil {
		for n < len(w.queue) && n < maxBatch && w.queue[n].raw == nil {
			n++
		}
	}
	// After a batch of several, callers keep queueing (shared) until
	// sharedSingles batches of one in a row: a big batch's callers come
	// back one by one, and each found the writer idle, led, and committed
	// alone, at two to three times a batched function's cost on the
	// writer (servebench at 50 sessions: about two thirds of the batches
	// were such batches of one). Queued, they join the batches the
	// goroutine cuts, which yields to them first.
	w.last = n
	switch {
	case n > 1:
		w.shared, w.single = true, 0
	case w.shared:
		if w.single++; w.single >= sharedSingles {
			w.shared, w.single = false, 0
		}
	}
	jobs := make([]*job, n)
	copy(jobs, w.queue)
	w.queue = append(w.queue[:0], w.queue[n:]...)
	w.mu.Unlock()
	return jobs, true
}

// stmt returns q prepared on the writer's connection.
func (w *writer) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	if st := w.stmts[q]; st != nil {
		return st, nil
	}
	st, err := w.conn.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	w.stmts[q] = st
	return st, nil
}

// exec runs q, prepared once, with args. It hands the statement to the
// driver's connection itself (sql.Conn.Raw, see onDriver) instead of
// through a sql.Stmt: every session's decision runs four or five
// statements on the writer, which all sessions wait for, and database/sql
// copies and converts every argument (reflection included) on each call.
func (w *writer) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	var res driver.Result
	err := w.onDriver(ctx, q, args, func(st driver.Stmt, nv []driver.NamedValue) error {
		var err error
		if ex, ok := st.(driver.StmtExecContext); ok {
			res, err = ex.ExecContext(ctx, nv)
			return err
		}
		res, err = st.Exec(values(nv)) //nolint:staticcheck // a driver without StmtExecContext
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// queryEach runs the query q, prepared once, with args on the driver's
// connection like exec, and calls fn with each row it returns (see
// driverRow for what a row scans into).
func (w *writer) queryEach(ctx context.Context, q string, args []any, fn func(backend.Scanner) error) error {
	return w.onDriver(ctx, q, args, func(st driver.Stmt, nv []driver.NamedValue) (err error) {
		var rows driver.Rows
		if qc, ok := st.(driver.StmtQueryContext); ok {
			rows, err = qc.QueryContext(ctx, nv)
		} else {
			rows, err = st.Query(values(nv)) //nolint:staticcheck // a driver without StmtQueryContext
		}
		if err != nil {
			return err
		}
		defer func() {
			if cerr := rows.Close(); err == nil {
				err = cerr
			}
		}()
		r := driverRow{vals: make([]driver.Value, len(rows.Columns()))}
		for {
			if err := rows.Next(r.vals); err == io.EOF {
				return nil
			} else if err != nil {
				return err
			}
			if err := fn(r); err != nil {
				return err
			}
		}
	})
}

// onDriver runs f with q prepared on the writer's driver connection and
// args converted as database/sql converts them for a driver that has no
// converter of its own (driver.DefaultParameterConverter, the common kinds
// first). The driver's statements are only used inside sql.Conn.Raw.
func (w *writer) onDriver(ctx context.Context, q string, args []any, f func(driver.Stmt, []driver.NamedValue) error) error {
	return w.conn.Raw(func(dc any) error {
		st := w.execs[q]
		if st == nil {
			var err error
			if st, err = prepareDriver(ctx, dc, q); err != nil {
				return err
			}
			w.execs[q] = st
		}
		nv := w.args[:0]
		defer func() { clear(nv); w.args = nv[:0] }()
		for i, a := range args {
			v, err := driverValue(a)
			if err != nil {
				return fmt.Errorf("sql: converting argument $%d type: %w", i+1, err)
			}
			nv = append(nv, driver.NamedValue{Ordinal: i + 1, Value: v})
		}
		return f(st, nv)
	})
}

func values(nv []driver.NamedValue) []driver.Value {
	vals := make([]driver.Value, len(nv))
	for i := range nv {
		vals[i] = nv[i].Value
	}
	return vals
}

// driverRow is a row as the driver returns it, scanned into the kinds the
// writer's queries read: *string (TEXT; BLOB as its bytes), *[]byte (a
// copy; nil for NULL) and *int64 (INTEGER). Any other destination, or a
// NULL for a string or an integer, is an error, as database/sql's is.
type driverRow struct{ vals []driver.Value }

func (r driverRow) Scan(dest ...any) error {
	if len(dest) != len(r.vals) {
		return fmt.Errorf("sql: expected %d destination arguments in Scan, not %d", len(r.vals), len(dest))
	}
	for i, d := range dest {
		if err := scanValue(d, r.vals[i]); err != nil {
			return fmt.Errorf("sql: Scan error on column index %d: %w", i, err)
		}
	}
	return nil
}

func scanValue(dest any, v driver.Value) error {
	switch d := dest.(type) {
	case *string:
		switch v := v.(type) {
		case string:
			*d = v
			return nil
		case []byte:
			*d = string(v)
			return nil
		}
	case *[]byte:
		switch v := v.(type) {
		case nil:
			*d = nil
			return nil
		case []byte:
			*d = bytes.Clone(v)
			return nil
		case string:
			*d = []byte(v)
			return nil
		}
	case *int64:
		if v, ok := v.(int64); ok {
			*d = v
			return nil
		}
	}
	return fmt.Errorf("converting %T to %T is unsupported here", v, dest)
}

// prepareDriver prepares q on a driver connection.
func prepareDriver(ctx context.Context, dc any, q string) (driver.Stmt, error) {
	if p, ok := dc.(driver.ConnPrepareContext); ok {
		return p.PrepareContext(ctx, q)
	}
	c, ok := dc.(driver.Conn)
	if !ok {
		return nil, fmt.Errorf("sql: %T is not a driver connection", dc)
	}
	return c.Prepare(q)
}

// driverValue converts an argument as database/sql does for a driver that
// has no converter of its own.
func driverValue(a any) (driver.Value, error) {
	switch v := a.(type) {
	case nil, string, int64, []byte, float64, bool:
		return v, nil
	case int:
		return int64(v), nil
	case *string:
		if v == nil {
			return nil, nil
		}
		return *v, nil
	}
	return driver.DefaultParameterConverter.ConvertValue(a)
}

// row is a prepared single-row query's result.
type row struct {
	r   *sql.Row
	err error
}

func (r row) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	return r.r.Scan(dest...)
}

func (w *writer) queryRow(ctx context.Context, q string, args ...any) row {
	st, err := w.stmt(ctx, q)
	if err != nil {
		return row{err: err}
	}
	return row{r: st.QueryRowContext(ctx, args...)}
}

func (w *writer) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, err := w.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// batch is the state of one writer transaction: the store-wide sequence
// and the chain heads as the batch's committed jobs left them.
type batch struct {
	w         *writer
	seqLoaded bool
	nextSeq   int64
	heads     map[string]store.Head // chain heads read or moved in this batch
	dirty     map[string]bool       // heads to write before COMMIT
	// runs are sessions' live runs as this batch's committed functions
	// left them (or as an earlier batch did): a transaction on such a
	// session takes its run from here instead of reading it. Entries are
	// never changed in place.
	runs map[string]*store.Run
}

// answer delivers r to every job.
func answer(jobs []*job, r jobResult) {
	for _, j := range jobs {
		j.res <- r
	}
}

// run commits one batch; when something other than a job's own function
// fails in a batch of several, each job runs again in its own transaction.
func (w *writer) run(jobs []*job) {
	live := jobs[:0:0]
	for _, j := range jobs {
		if err := j.ctx.Err(); err != nil {
			j.res <- jobResult{err: fmt.Errorf("store: %s: %w", j.op(), err)}
			continue
		}
		live = append(live, j)
	}
	if len(live) == 0 {
		return
	}
	saves := w.saving > 0
	if saves {
		w.saving--
	}
	if w.reading > 0 {
		w.reading--
	}
	results, err := w.commit(live, saves)
	for errors.Is(err, errGuessed) || errors.Is(err, errFnFailed) {
		if errors.Is(err, errGuessed) {
			// A function ran on a wrong or unproved guess: run the
			// batch again reading, and the next batches too.
			w.reading = readingBatches
		} else {
			// A function failed in a batch without savepoints: run
			// the batch again with them, and the next batches too.
			w.saving = savingBatches
			saves = true
		}
		results, err = w.commit(live, saves)
	}
	if err != nil && len(live) > 1 {
		for _, j := range live {
			w.run([]*job{j})
		}
		return
	}
	if err != nil {
		answer(live, jobResult{err: err})
		return
	}
	for i, j := range live {
		j.res <- results[i]
	}
}

// errFnFailed: a session's function failed (or panicked) in a batch that
// ran without savepoints, which rolled back whole.
var errFnFailed = errors.New("a function failed in a batch without savepoints")

// savingBatches is how many batches after a function's failure run with
// a savepoint per function: a store whose functions keep failing pays the
// savepoints, not a rerun of most of its batches.
const savingBatches = 64

// readingBatches is how many batches after a wrong or unproved guess
// read every call record (see tx.guessable): retried calls pay one batch
// run again at most every readingBatches batches.
const readingBatches = 64

func (j *job) op() string {
	if j.key == "" {
		return "write"
	}
	return "update " + j.key
}

const (
	qBegin    = "BEGIN IMMEDIATE"
	qCommit   = "COMMIT"
	qRollback = "ROLLBACK"
	qSave     = "SAVEPOINT job"
	qRelease  = "RELEASE job"
	qUndo     = "ROLLBACK TO job"
	// The pragmas themselves, not their table-valued functions
	// (pragma_data_version): each is a cookie read, where a function
	// sets up a virtual table on every run.
	qDataVersion = "PRAGMA data_version"
	qUserVersion = "PRAGMA user_version"
)

// commit runs the jobs in one transaction and commits it. The error is
// the batch's (nothing committed); the jobs' own results are in results.
//
// With saves, each of several functions runs in a savepoint of its own,
// which a function that fails rolls back alone. Without, a failing
// function fails the whole batch with errFnFailed (run then runs it again
// with savepoints): a savepoint costs two statements and a copy of each
// page a function first touches, on the writer that every session waits
// for, and functions rarely fail.
func (w *writer) commit(jobs []*job, saves bool) (results []jobResult, err error) {
	ctx := context.Background() // the transaction's own statements are never cut short
	op := jobs[0].op()
	if w.conn == nil {
		if w.conn, err = w.s.db.Conn(ctx); err != nil {
			return nil, mapErr(op, err)
		}
		if !w.s.oneShot {
			// A long-lived writer leaves checkpoints to the background
			// (walCheckpointer).
			for _, q := range []string{"PRAGMA wal_autocheckpoint=0", "PRAGMA journal_size_limit=" + strconv.FormatInt(walSizeLimit(), 10)} {
				if _, err := w.conn.ExecContext(ctx, q); err != nil {
					return nil, mapErr(op, err)
				}
			}
			w.ckpt = newWALCheckpointer(w.s.db, w.s.path, w.s.dbf)
		}
	}
	if w.wl == nil { // opened on first write: read-only uses need no lock file
		if w.wl, err = openWriteLock(w.s.path); err != nil {
			return nil, fmt.Errorf("store: %s: %w", op, err)
		}
	}
	if err := w.wl.lock(jobs[0].ctx, w.s.lockWait); err != nil {
		return nil, fmt.Errorf("store: %s: %w", op, err)
	}
	defer w.wl.unlock()
	if _, err := w.exec(ctx, qBegin); err != nil {
		return nil, mapErr(op+": begin", err)
	}
	committed, own := false, false
	kn := w.known
	w.known = known{} // until this batch commits
	defer func() {
		if !committed {
			w.exec(ctx, qRollback)
		}
	}()
	var dv int64
	if err := w.queryRow(ctx, qDataVersion).Scan(&dv); err != nil {
		return nil, mapErr(op, err)
	}
	if !kn.valid || kn.dataVersion != dv {
		// Another connection committed (or nothing is known): it may
		// have migrated the store.
		var v int
		if err := w.queryRow(ctx, qUserVersion).Scan(&v); err != nil {
			return nil, mapErr(op, err)
		}
		if want := SchemaVersion(); v != want {
			return nil, fmt.Errorf("store: %s %s: %w: the schema is at version %d, this process at %d (another statewright migrated the store while this one ran: restart it with a matching binary)",
				op, w.s.path, store.ErrCorrupt, v, want)
		}
		kn = known{heads: map[string]store.Head{}, runs: map[string]*store.Run{}}
	}
	b := &batch{w: w, heads: kn.heads, runs: kn.runs, dirty: map[string]bool{}, nextSeq: kn.nextSeq, seqLoaded: kn.seqLoaded}
	results = make([]jobResult, len(jobs))
	alone := len(jobs) == 1
	for i, j := range jobs {
		if j.raw != nil {
			own = true
			results[i].err = j.raw(b)
			if results[i].err != nil {
				return results, nil
			}
			continue
		}
		if !alone && saves {
			if _, err := w.exec(ctx, qSave); err != nil {
				return nil, mapErr(op+": savepoint", err)
			}
		}
		t, r := w.runFn(b, j)
		if err := t.checkGuess(r.err != nil || r.panicked); err != nil {
			return nil, err // the deferred ROLLBACK undoes the batch
		}
		results[i] = r
		if r.err != nil || r.panicked {
			if alone {
				return results, nil // the deferred ROLLBACK undoes it
			}
			if !saves {
				return nil, errFnFailed // the deferred ROLLBACK undoes the batch
			}
			if _, err := w.exec(ctx, qUndo); err != nil {
				return nil, mapErr(op+": rollback to savepoint", err)
			}
		} else {
			t.merge(b)
		}
		if !alone && saves {
			if _, err := w.exec(ctx, qRelease); err != nil {
				return nil, mapErr(op+": release savepoint", err)
			}
		}
	}
	if err := b.writeHeads(ctx); err != nil {
		return nil, err
	}
	if _, err := w.exec(ctx, qCommit); err != nil {
		return nil, mapErr(op+": commit", err)
	}
	committed = true
	if w.ckpt != nil {
		w.ckpt.committed()
	}
	if !own && len(b.heads) <= maxKnownHeads && len(b.runs) <= maxKnownHeads {
		w.known = known{valid: true, dataVersion: dv, seqLoaded: b.seqLoaded, nextSeq: b.nextSeq, heads: b.heads, runs: b.runs}
	}
	if w.s.oneShot {
		w.truncateWAL(ctx)
	}
	return results, nil
}

// walTruncateBytes bounds the WAL that oneShot processes leave behind.
// Each process that opens the store while no other has it open rebuilds
// the WAL's index by reading the whole WAL, and forgets what earlier
// processes checkpointed, so the WAL would never restart: past this size
// a oneShot writer checkpoints it and truncates it to nothing.
const walTruncateBytes = 256 << 10

// truncateWAL checkpoints and truncates the WAL once it outgrows
// walTruncateBytes. Busy readers or writers make it give up until the next
// commit: it is housekeeping, never a reason to fail.
func (w *writer) truncateWAL(ctx context.Context) {
	fi, err := os.Stat(w.s.path + "-wal")
	if err != nil || fi.Size() < walTruncateBytes {
		return
	}
	w.exec(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
}

// runFn runs one session's function in the open transaction.
func (w *writer) runFn(b *batch, j *job) (t *tx, r jobResult) {
	// The statements run on context.Background, like the batch's own: the
	// job's context was checked when the batch was taken, and a
	// cancellable context costs the driver a goroutine per statement.
	t = &tx{TxBase: backend.TxBase{Key: j.key, At: w.s.now().UTC()}, ctx: context.Background(), b: b,
		reads: store.CallReads(j.ctx)}
	if ref, ok := store.CallPrefetch(j.ctx); ok && ref.Phase == store.PhasePre && w.reading == 0 && len(t.reads) == 0 {
		t.hint = ref.ToolUseID
	}
	defer func() {
		t.Done = true
		if v := recover(); v != nil {
			r = jobResult{panicked: true, value: v}
		}
	}()
	if err := t.begin(); err != nil {
		return t, jobResult{err: err}
	}
	return t, jobResult{err: j.fn(t)}
}

// seq returns the store Seq the next event of this batch gets.
func (b *batch) seq(ctx context.Context) (int64, error) {
	if !b.seqLoaded {
		var last int64
		if err := b.w.queryRow(ctx, "SELECT COALESCE(max(seq), 0) FROM events").Scan(&last); err != nil {
			return 0, mapErr("append: last seq", err)
		}
		var pruned int64
		if err := b.w.queryRow(ctx, "SELECT COALESCE(CAST((SELECT value FROM meta WHERE key = 'anchor_seq') AS INTEGER), 0)").Scan(&pruned); err != nil {
			return 0, mapErr("append: last seq", err)
		}
		b.nextSeq, b.seqLoaded = max(last, pruned)+1, true
	}
	return b.nextSeq, nil
}

// head returns a chain's head as this batch stands.
func (b *batch) head(ctx context.Context, chain string) (store.Head, error) {
	if h, ok := b.heads[chain]; ok {
		return h, nil
	}
	h := store.Head{Chain: chain}
	err := b.w.queryRow(ctx, "SELECT seq, hash, anchor_seq, anchor_hash FROM heads WHERE chain = ?", chain).
		Scan(&h.Seq, &h.Hash, &h.AnchorSeq, &h.AnchorHash)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return h, mapErr("append: read the chain head", err)
	}
	b.heads[chain] = h
	return h, nil
}

// writeHeads writes the heads the batch moved: a plain UPDATE of a chain's
// row (nearly every write: the chain already has a head), else an INSERT
// of a new chain's first head. The statements' effect is an upsert's,
// without the insert attempt and constraint check an ON CONFLICT upsert
// makes first on every call; nothing else writes heads inside the batch's
// transaction, so no row can appear between the two.
func (b *batch) writeHeads(ctx context.Context) error {
	for chain := range b.dirty {
		h := b.heads[chain]
		res, err := b.w.exec(ctx, "UPDATE heads SET seq = ?, hash = ? WHERE chain = ?", h.Seq, h.Hash, chain)
		if err != nil {
			return mapErr("write the chain heads", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return mapErr("write the chain heads", err)
		}
		if n > 0 {
			continue
		}
		if _, err := b.w.exec(ctx, "INSERT INTO heads (chain, seq, hash) VALUES (?, ?, ?)", chain, h.Seq, h.Hash); err != nil {
			return mapErr("write the chain heads", err)
		}
	}
	return nil
}
