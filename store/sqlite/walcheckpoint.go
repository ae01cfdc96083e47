package sqlite

import (
	"context"
	"database/sql"
	"os"
	"sync/atomic"
	"time"
)

// A long-lived store copies its WAL back into the database file in the
// background (walCheckpointer), not in the writer: SQLite's automatic
// checkpoint runs inside the COMMIT that crosses its threshold, so that
// batch's callers, and every caller queued behind it, waited for a copy of
// thousands of pages and two fsyncs (serve's p99 at 50 sessions was 3.6
// times its p90). A PASSIVE checkpoint on another connection runs beside
// the writer: it copies what was committed before the writer's current
// transaction and never blocks it.
//
// The WAL starts over from its beginning only when a write transaction
// begins with every frame copied, which a background checkpoint racing a
// busy writer rarely achieves. So once the WAL is long, the checkpointer
// catches up with the writer and then asks it (walCheckpointer.finish) to
// copy the few frames left itself, between two batches, after answering
// the last: its next transaction then restarts the WAL.
//
// That copy holds every session's call until it ends, and it ends with an
// fsync of the database file, which SQLite makes only in a checkpoint that
// copies the whole WAL: it wrote out every database page the background
// passes had copied since the last restart (perf trace of serve at 50
// sessions, load 7-12: that fsync took 9 and 19 ms of pauses of 23 and
// 31 ms). So the checkpointer flushes the database file itself (dbFile)
// before each of its catching-up passes, and the writer's fsync writes out
// only the pages of the last pass and of its own copy. The extra fsync
// only flushes earlier; SQLite's own fsyncs all stay where they were.
//
// A pass begins with an fsync of the WAL, and with synchronous=NORMAL
// nothing else writes the WAL to the disk: every pass wrote out, at once,
// the 10-15 MB that 200 ms of commits had appended (servebench at 50
// sessions), and the decisions in flight meanwhile were the slowest (the
// passes overlapped 91 % of the slowest 1 % of calls against 11 % of all
// calls; the writer committed 3.6k decisions/s during a pass against 5.8k
// outside). So where the system can (Linux: sync_file_range), the
// checkpointer starts the WAL's writeback every walWritebackEvery while
// commits arrive, and the database file's after each pass, without
// waiting for either: the disk writes are spread over the time between the
// passes, whose fsyncs then find little left to write. That makes nothing
// durable sooner or later: every fsync SQLite makes is still made, in the
// same order.
//
// The checkpointer's settings (variables for the tests).
var (
	// walCheckpointEvery is how often the checkpointer copies the WAL
	// while commits arrive; walCheckpointIdle when the last pass found
	// fewer than walCheckpointMinFrames new frames (a quiet store pays
	// two fsyncs a second at most).
	walCheckpointEvery           = 200 * time.Millisecond
	walCheckpointIdle            = time.Second
	walCheckpointMinFrames int64 = 256
	// walRestartFrames is the WAL length (frames) past which the writer
	// is asked to finish a checkpoint so that the WAL restarts; the
	// checkpointer first catches up until fewer than walFinishFrames
	// were committed during its last pass (at most walCatchUpPasses
	// passes in a row). servebench at 50 sessions writes some 15,000
	// frames a second: the writer then pauses for a short checkpoint
	// about every two seconds, not for a long one four times a second.
	// Short is still two fsyncs: every session's call queues behind it
	// (49 or 50 of 50 in 18 of 19 pauses timed at 50 sessions, 17-45 ms each
	// on a machine loaded by builds), so how often the WAL restarts
	// decides how many calls wait for one; at 16384 frames (64 MiB) it
	// restarted about once a second.
	walRestartFrames int64 = 32768
	walFinishFrames  int64 = 512
	walCatchUpPasses       = 4
	// walWritebackEvery is how often, at most, the checkpointer starts
	// the WAL's writeback while commits arrive (about 300 KB each time
	// at 50 sessions). Every 5 ms the passes were shorter than every
	// 20 ms in 11 of 14 pairs of servebench rows at 50 sessions (a pass's
	// p50 13.2 against 14.9 ms, load 5-7; bench/serve.txt, tail6).
	walWritebackEvery = 5 * time.Millisecond
)

// walSizeLimit is the journal_size_limit of a long-lived writer: a WAL
// that restarts at walRestartFrames keeps its blocks allocated instead of
// being cut back to the 4 MiB of the store's connections at every restart
// (the last connection's close truncates it). The WAL outgrows
// walRestartFrames by what commits while the checkpointer waits for its
// next pass and catches up (servebench at 50 sessions: 2,000 to 7,000
// frames more), so the limit is twice walRestartFrames: at
// walRestartFrames+walFinishFrames the first commit after each restart
// cut the file back by up to 25 MB and the next second's commits wrote
// into newly allocated, zero-filled blocks again.
func walSizeLimit() int64 { return 2 * (walRestartFrames + walFinishFrames) * (4096 + 24) }

const qCheckpoint = "PRAGMA wal_checkpoint(PASSIVE)"

// walCheckpointer runs PASSIVE checkpoints on a pooled connection of its
// own while the writer commits.
type walCheckpointer struct {
	db *sql.DB
	// The settings as of its start (the tests change them).
	every, idle                            time.Duration
	minFrames, restartFrames, finishFrames int64
	catchUp                                int
	writebackEvery                         time.Duration
	kick                                   chan struct{} // capacity 1: the writer committed
	wbKick                                 chan struct{} // capacity 1: the same, for the writeback loop (nil: no writebacks)
	stop                                   chan struct{}
	done                                   chan struct{}
	wbDone                                 chan struct{} // closed when the writeback loop ends
	finish                                 atomic.Bool   // the writer should finish a checkpoint between batches
	// dbFile is the database file, opened to flush it before the writer
	// finishes a checkpoint (nil if it could not be opened: the writer's
	// checkpoint then flushes it all, as SQLite alone would). It is the
	// descriptor every store of this process on the file shares
	// (sharedFile), closed after the last of them closed its
	// connections: closing a descriptor of a file releases every POSIX
	// lock the process holds on it, SQLite's included.
	dbFile *os.File
	// path is the database file's path; walFile the WAL, opened by the
	// writeback loop (nil until then, or if it could not be opened) and
	// closed by closeFile.
	path    string
	walFile *os.File
	// writebacks counts the WAL's writebacks started (for the tests).
	writebacks atomic.Int64
}

func newWALCheckpointer(db *sql.DB, path string, sf *sharedFile) *walCheckpointer {
	c := &walCheckpointer{db: db, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		every: walCheckpointEvery, idle: walCheckpointIdle, minFrames: walCheckpointMinFrames,
		restartFrames: walRestartFrames, finishFrames: walFinishFrames, catchUp: walCatchUpPasses,
		writebackEvery: walWritebackEvery, path: path, wbDone: make(chan struct{}), dbFile: sf.file()}
	// The WAL lives beside the database file, on its file system. Set
	// before the loops start: loop reads wbKick too.
	if writebackSupported && c.dbFile != nil && writebackHelps(c.dbFile) {
		c.wbKick = make(chan struct{}, 1)
		go c.writebackLoop()
	} else {
		close(c.wbDone)
	}
	go c.loop()
	return c
}

// committed tells the checkpointer that the writer committed.
func (c *walCheckpointer) committed() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
	if c.wbKick != nil {
		select {
		case c.wbKick <- struct{}{}:
		default:
		}
	}
}

// close stops the checkpointer and waits for it. The database file and
// the WAL stay open (closeFile).
func (c *walCheckpointer) close() {
	close(c.stop)
	<-c.done
	<-c.wbDone
}

// closeFile closes the checkpointer's descriptor of the WAL and lets go
// of the database file's (releaseFile closes it); the store's connections
// must all be closed first.
func (c *walCheckpointer) closeFile() {
	if c.walFile != nil {
		c.walFile.Close()
		c.walFile = nil
	}
	c.dbFile = nil
}

// writebackLoop starts the WAL's writeback after commits, at most every
// writebackEvery (see above): an idle store is left alone.
func (c *walCheckpointer) writebackLoop() {
	defer close(c.wbDone)
	for {
		select {
		case <-c.stop:
			return
		case <-c.wbKick:
		}
		if c.walFile == nil {
			// Read-only is enough. Opened here, after the writer's
			// first commit, which the WAL exists for; an open that
			// failed is tried again after the next commit.
			f, err := os.Open(c.path + "-wal")
			if err != nil {
				continue
			}
			c.walFile = f
		}
		startWriteback(c.walFile)
		c.writebacks.Add(1)
		t := time.NewTimer(c.writebackEvery)
		select {
		case <-c.stop:
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// pass runs one PASSIVE checkpoint: the WAL's length and how much of it
// is copied, in frames. Errors are not the writer's: the next pass (or the
// last connection's close) checkpoints again.
func pass(ctx context.Context, q interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}) (log, copied int64, ok bool) {
	var busy int64
	err := q.QueryRowContext(ctx, qCheckpoint).Scan(&busy, &log, &copied)
	if err != nil || busy != 0 || log < 0 {
		return 0, 0, false
	}
	return log, copied, true
}

func (c *walCheckpointer) loop() {
	defer close(c.done)
	ctx := context.Background()
	wait := c.every
	var last int64 // the WAL's length at the last pass
	for {
		select {
		case <-c.stop:
			return
		case <-c.kick:
		}
		// Let the commits of a while share one pass (and its two fsyncs).
		t := time.NewTimer(wait)
		select {
		case <-c.stop:
			t.Stop()
			return
		case <-t.C:
		}
		select { // the commits meanwhile are in this pass
		case <-c.kick:
		default:
		}
		log, copied, ok := pass(ctx, c.db)
		if !ok {
			wait = c.every
			continue
		}
		c.startDBWriteback()
		fresh := log - last
		if log < last { // the WAL restarted
			fresh = log
		}
		last = log
		wait = c.every
		if fresh < c.minFrames {
			wait = c.idle
		}
		if log < c.restartFrames {
			continue
		}
		// Catch up with the writer: each pass copies what was committed
		// during the one before, after the database file was flushed of
		// what the passes before it copied (see above). An error of that
		// flush is the writer's fsync's too: Linux reports a failed
		// writeback to each open file.
		for i := 0; i < c.catchUp; i++ {
			if c.dbFile != nil {
				c.dbFile.Sync()
			}
			next, copiedNext, ok := pass(ctx, c.db)
			if !ok || next < log { // the WAL restarted meanwhile
				break
			}
			c.startDBWriteback()
			grew := next - log
			log, copied, last = next, copiedNext, next
			if grew < c.finishFrames {
				break
			}
		}
		if log == copied {
			c.finish.Store(true)
		}
	}
}

// startDBWriteback starts writing out the pages a pass copied into the
// database file (see above), so that the next flush of the file, the
// checkpointer's or the writer's, finds fewer.
func (c *walCheckpointer) startDBWriteback() {
	if c.dbFile != nil && c.wbKick != nil {
		startWriteback(c.dbFile)
	}
}
