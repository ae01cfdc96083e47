package postgres

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// Replicas that commit groups see each other, so that the store as a whole
// keeps about as many groups in flight whatever the number of replicas.
// Each replica groups only its own sessions: with two replicas of two
// committers each, a group held half as many decisions as with one replica
// (7.5 against 13.6 at 50 sessions) and PostgreSQL paid every per-group
// cost (BEGIN, the locks, four merged writes, COMMIT and its WAL flush)
// twice as often, for the same decisions. A replica alone keeps two
// committers (while one group is at the server the next gathers); a replica
// that sees another keeps one, and the replicas' groups take turns at the
// server instead.
//
// A replica shows itself by holding a shared advisory lock of the store's
// schema on a connection of its own (outside the pool, opened once the
// process committed presenceAfter transactions in groups), and counts the holders in pg_locks every presencePoll. Shared
// locks never wait on each other: nobody queues on this lock. A replica
// that dies drops its connection and with it the lock. The count only
// tunes how many groups a replica sends at once; nothing depends on it for
// correctness, and while it is unknown (no connection) a replica counts
// itself alone.

// presencePoll is how often a replica counts the others.
var presencePoll = 2 * time.Second

// presenceAfter is how many transactions a process commits in groups
// before it shows itself: a process that commits a few (a session's MCP
// server) opens no connection for it, and sends too few groups to count.
var presenceAfter int64 = 64

// presence is a replica's view of the others.
type presence struct {
	once   sync.Once
	poll   time.Duration // presencePoll when it started
	others atomic.Int64  // replicas seen besides this one
	cancel context.CancelFunc
	done   chan struct{}
}

// qOtherReplicas counts the holders of the presence lock $1 (an advisory
// lock on one bigint key: classid its high half, objid its low half,
// objsubid 1) in this database, this one's included.
const qOtherReplicas = `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted
	AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
	AND classid = (($1::bigint >> 32) & 4294967295)::oid AND objid = ($1::bigint & 4294967295)::oid AND objsubid = 1`

// committers is how many groups this replica has in flight at once.
func (s *Store) committers() int {
	if s.groupedCommits.Load() < presenceAfter {
		return groupCommitters
	}
	s.presence.once.Do(s.startPresence)
	if s.presence.others.Load() > 0 {
		return 1
	}
	return groupCommitters
}

func (s *Store) startPresence() {
	ctx, cancel := context.WithCancel(context.Background())
	s.presence.cancel, s.presence.done, s.presence.poll = cancel, make(chan struct{}), presencePoll
	go s.showPresence(ctx)
}

// showPresence holds the presence lock and counts its holders until ctx is
// done, reconnecting when its connection is lost.
func (s *Store) showPresence(ctx context.Context) {
	defer close(s.presence.done)
	key, poll := lockKey("replicas", s.schema), s.presence.poll
	backoff := poll
	for ctx.Err() == nil {
		if conn, err := pgx.ConnectConfig(ctx, s.cfg.ConnConfig.Copy()); err == nil {
			if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock_shared($1)", key); err == nil {
				backoff = poll
				countReplicas(ctx, conn, key, poll, &s.presence.others) // until the connection fails or ctx ends
			}
			conn.Close(context.Background())
		}
		s.presence.others.Store(0)
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
			backoff = min(2*backoff, 30*time.Second)
		}
	}
}

// countReplicas stores the number of other holders of the presence lock
// every poll, until ctx is done or a query fails.
func countReplicas(ctx context.Context, conn *pgx.Conn, key int64, poll time.Duration, others *atomic.Int64) {
	for {
		var n int64
		if err := conn.QueryRow(ctx, qOtherReplicas, key).Scan(&n); err != nil {
			return
		}
		others.Store(max(n-1, 0))
		select {
		case <-ctx.Done():
			return
		case <-time.After(poll):
		}
	}
}

// stopPresence releases the presence lock (by closing its connection).
func (s *Store) stopPresence() {
	s.presence.once.Do(func() {}) // none starts after this
	if s.presence.cancel != nil {
		s.presence.cancel()
		<-s.presence.done
	}
}
