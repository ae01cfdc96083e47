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
	kick                                   chan struct{} // capacity 1: the writer committed
	stop                                   chan struct{}
	done                                   chan struct{}
	finish                                 atomic.Bool // the writer should finish a checkpoint between batches
	// dbFile is the database file, opened to flush it before the writer
	// finishes a checkpoint (nil if it could not be opened: the writer's
	// checkpoint then flushes it all, as SQLite alone would). It stays
	// open until every connection of the store is closed (Store.Close
	// calls closeFile): closing a descriptor of a file releases every
	// POSIX lock the process holds on it, SQLite's included.
	dbFile *os.File
}

func newWALCheckpointer(db *sql.DB, path string) *walCheckpointer {
	c := &walCheckpointer{db: db, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		every: walCheckpointEvery, idle: walCheckpointIdle, minFrames: walCheckpointMinFrames,
		restartFrames: walRestartFrames, finishFrames: walFinishFrames, catchUp: walCatchUpPasses}
	// Read-write: on Windows flushing a file needs write access.
	if f, err := os.OpenFile(path, os.O_RDWR, 0); err == nil {
		c.dbFile = f
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
}

// close stops the checkpointer and waits for it. The database file stays
// open (closeFile).
func (c *walCheckpointer) close() {
	close(c.stop)
	<-c.done
}

// closeFile closes the checkpointer's descriptor of the database file; the
// store's connections must all be closed first.
func (c *walCheckpointer) closeFile() {
	if c.dbFile != nil {
		c.dbFile.Close()
		c.dbFile = nil
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
