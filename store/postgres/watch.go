package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/internal/backend"
)

// Watch implements store.Watcher with LISTEN/NOTIFY: every run write, by
// any process or replica on this store, sends its store.Change on the
// store's channel when it commits. The first Watch opens one listening
// connection (outside the pool) that serves every watcher of this Store;
// it returns once LISTEN is in force, so every change committed after it
// returns is delivered. When the listening connection is lost it
// reconnects and sends a resync (store.Change with an empty RunID), since
// notifications sent meanwhile are gone.
func (s *Store) Watch(ctx context.Context) (<-chan store.Change, error) {
	if err := s.check("watch"); err != nil {
		return nil, err
	}
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	if s.hub == nil {
		lctx, cancel := context.WithCancel(context.Background())
		ready := make(chan error, 1)
		hub, done := backend.NewHub(), make(chan struct{})
		go s.listen(lctx, hub, ready, done)
		select {
		case err := <-ready:
			if err != nil {
				cancel()
				<-done
				return nil, s.mapErr("watch: listen", err)
			}
		case <-ctx.Done():
			cancel()
			<-done
			return nil, fmt.Errorf("store: watch %s: %w", s.where, ctx.Err())
		}
		s.hub, s.stopWatch, s.watchDone = hub, cancel, done
	}
	ch, err := s.hub.Subscribe(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: watch %s: %w", s.where, err)
	}
	return ch, nil
}

// listen holds the LISTEN connection: it reports the first LISTEN's result
// on ready, then publishes every notification until ctx is done.
func (s *Store) listen(ctx context.Context, hub *backend.Hub, ready chan<- error, done chan<- struct{}) {
	defer close(done)
	first := true
	backoff := 50 * time.Millisecond
	for {
		conn, err := pgx.ConnectConfig(ctx, s.cfg.ConnConfig.Copy())
		if err == nil {
			if _, err = conn.Exec(ctx, "LISTEN "+pgx.Identifier{s.channel}.Sanitize()); err != nil {
				conn.Close(context.Background())
			}
		}
		if err != nil {
			if first {
				ready <- err
				return
			}
			select {
			case <-time.After(backoff):
				backoff = min(2*backoff, 2*time.Second)
				continue
			case <-ctx.Done():
				return
			}
		}
		if first {
			first = false
			ready <- nil
		} else {
			hub.Publish(store.Change{}) // notifications sent while disconnected are lost
		}
		backoff = 50 * time.Millisecond
		for {
			n, err := conn.WaitForNotification(ctx)
			if err != nil {
				break
			}
			var c store.Change
			if json.Unmarshal([]byte(n.Payload), &c) != nil || c.RunID == "" {
				c = store.Change{} // not ours, or damaged: resync
			}
			hub.Publish(c)
		}
		conn.Close(context.Background())
		if ctx.Err() != nil {
			return
		}
	}
}

// notifier sends, after their commits, the changes other replicas need not
// see at once (a decision's counters): batched into one statement, so that
// PostgreSQL's notification queue lock is taken once per batch rather than
// once per decision, and at most one batch per notifyPace, so that a busy
// process sends a few batches a second rather than one after every group
// commit (each batch is a transaction of its own, with an XID and a commit
// record, on a pooled connection). A process that dies between a commit
// and its batch loses those hints; watchers also poll, and re-read on a
// resync.
type notifier struct {
	mu      sync.Mutex
	pending map[string]store.Change // by run id, the newest revision
	s       *Store
	wake    chan struct{}
	quit    chan struct{} // closed by close: stop pacing
	done    chan struct{}
	stopped bool
}

// notifyPace is the least time between two of a process's batches of
// changes sent after their commits while it sees no other replica: a
// counter shown elsewhere is at most this much older than it would be
// otherwise (SQLite's watchers poll every 100 ms). A replica that sees
// others (replicas.go) waits that much longer per replica it sees, up to
// maxNotifyPace, so that the store as a whole commits about as many of
// these transactions (each with its WAL flush) with two replicas as with
// one: each batch holds one change per run, the newest, so a longer pace
// sends the same runs' changes in fewer, fuller batches.
const (
	notifyPace    = 50 * time.Millisecond
	maxNotifyPace = 100 * time.Millisecond
)

// pace is how long the notifier waits after a batch before the next.
func (s *Store) pace() time.Duration {
	return min(notifyPace*time.Duration(1+s.presence.others.Load()), maxNotifyPace)
}

// notifyAfter queues changes for the notifier.
func (s *Store) notifyAfter(cs []store.Change) {
	if len(cs) == 0 {
		return
	}
	n := &s.notifier
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stopped {
		return
	}
	if n.pending == nil {
		n.pending = map[string]store.Change{}
		n.s, n.wake, n.quit, n.done = s, make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
		go n.loop()
	}
	for _, c := range cs {
		if old, ok := n.pending[c.RunID]; !ok || c.Revision >= old.Revision {
			n.pending[c.RunID] = c
		}
	}
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

func (n *notifier) loop() {
	defer close(n.done)
	for range n.wake {
		n.mu.Lock()
		batch := make([]string, 0, len(n.pending))
		for id, c := range n.pending {
			if b, err := json.Marshal(c); err == nil {
				batch = append(batch, string(b))
			}
			delete(n.pending, id)
		}
		stopped := n.stopped
		n.mu.Unlock()
		if len(batch) > 0 {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			n.s.pool.Exec(ctx, "SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p", n.s.channel, batch)
			cancel()
		}
		if stopped {
			return
		}
		select {
		case <-time.After(n.s.pace()):
		case <-n.quit:
		}
	}
}

// close sends what is pending and stops the notifier.
func (n *notifier) close() {
	n.mu.Lock()
	if n.stopped || n.pending == nil {
		n.stopped = true
		n.mu.Unlock()
		return
	}
	n.stopped = true
	close(n.quit)
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
	<-n.done
}
