package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/internal/backend"
)

// WatchInterval is how often Watch polls the file for commits by other
// connections and processes.
const WatchInterval = 100 * time.Millisecond

// Watch implements store.Watcher by polling: every WatchInterval one
// dedicated connection reads PRAGMA data_version, which changes only when
// another connection (in any process) committed; then it compares the live
// runs' revisions with the last poll's, and reads the runs that new events
// name (so runs that ended or started and ended between two polls are seen
// too). Several writes to a run between two polls arrive as one Change at
// the latest revision. The first Watch starts the poller (it has taken its
// baseline when Watch returns); Close stops it.
func (s *Store) Watch(ctx context.Context) (<-chan store.Change, error) {
	if err := s.check("watch"); err != nil {
		return nil, err
	}
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	if s.hub == nil {
		conn, err := s.db.Conn(ctx)
		if err != nil {
			return nil, mapErr("watch", err)
		}
		p := &poller{s: s, conn: conn, hub: backend.NewHub(), known: map[string]int64{}}
		if err := p.poll(ctx, false); err != nil {
			conn.Close()
			return nil, err
		}
		pctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go p.run(pctx, done)
		s.hub, s.stopWatch, s.watchDone = p.hub, cancel, done
	}
	ch, err := s.hub.Subscribe(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: watch %s: %w", s.path, err)
	}
	return ch, nil
}

// stopWatching stops the poller, if any, and closes its watchers' channels.
func (s *Store) stopWatching() {
	s.watchMu.Lock()
	if s.stopWatch != nil {
		s.stopWatch()
	}
	if s.hub != nil {
		s.hub.Close()
	}
	done := s.watchDone
	s.watchMu.Unlock()
	if done != nil {
		<-done
	}
}

type poller struct {
	s       *Store
	conn    *sql.Conn
	hub     *backend.Hub
	version int64
	lastSeq int64
	known   map[string]int64 // live run id -> revision at the last poll
}

func (p *poller) run(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	defer p.conn.Close()
	tick := time.NewTicker(WatchInterval)
	defer tick.Stop()
	failed := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if err := p.poll(ctx, true); err != nil {
			failed = true // the next successful poll resyncs
			continue
		}
		if failed {
			failed = false
			p.hub.Publish(store.Change{})
		}
	}
}

const changeColumns = "id, session_key, revision, status, state, pending_approval"

// poll publishes the runs written since the last poll (publish false: only
// take the baseline).
func (p *poller) poll(ctx context.Context, publish bool) error {
	var v int64
	if err := p.conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
		return mapErr("watch: data_version", err)
	}
	if publish && v == p.version {
		return nil
	}
	p.version = v
	live := map[string]store.Change{}
	rows, err := p.conn.QueryContext(ctx, "SELECT "+changeColumns+" FROM runs WHERE status IN "+backend.LiveStatusSQL)
	if err != nil {
		return mapErr("watch: live runs", err)
	}
	for rows.Next() {
		c, err := scanChange(rows)
		if err != nil {
			rows.Close()
			return mapErr("watch: live runs", err)
		}
		live[c.RunID] = c
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return mapErr("watch: live runs", err)
	}
	// Runs to read one by one: those that left the live set, and those
	// that new events name but that are not live (started and ended, or
	// written after they ended).
	read := map[string]bool{}
	for id := range p.known {
		if _, ok := live[id]; !ok {
			read[id] = true
		}
	}
	erows, err := p.conn.QueryContext(ctx, "SELECT seq, run_id FROM events WHERE seq > ? ORDER BY seq", p.lastSeq)
	if err != nil {
		return mapErr("watch: events", err)
	}
	for erows.Next() {
		var id string
		if err := erows.Scan(&p.lastSeq, &id); err != nil {
			erows.Close()
			return mapErr("watch: events", err)
		}
		if _, ok := live[id]; id != "" && !ok {
			read[id] = true
		}
	}
	erows.Close()
	if err := erows.Err(); err != nil {
		return mapErr("watch: events", err)
	}
	var changes []store.Change
	for _, c := range live {
		if rev, ok := p.known[c.RunID]; !ok || c.Revision > rev {
			changes = append(changes, c)
		}
	}
	for id := range read {
		c, err := scanChange(p.conn.QueryRowContext(ctx, "SELECT "+changeColumns+" FROM runs WHERE id = ?", id))
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return mapErr("watch: run "+id, err)
		}
		changes = append(changes, c)
	}
	p.known = make(map[string]int64, len(live))
	for id, c := range live {
		p.known[id] = c.Revision
	}
	if publish {
		for _, c := range changes {
			p.hub.Publish(c)
		}
	}
	return nil
}

func scanChange(row backend.Scanner) (store.Change, error) {
	var (
		c        store.Change
		status   string
		approval []byte
	)
	if err := row.Scan(&c.RunID, &c.SessionKey, &c.Revision, &status, &c.State, &approval); err != nil {
		return c, err
	}
	c.Status = store.Status(status)
	if len(approval) > 0 {
		var a store.Approval
		if json.Unmarshal(approval, &a) == nil {
			c.ApprovalID = a.ID
		}
	}
	return c, nil
}
