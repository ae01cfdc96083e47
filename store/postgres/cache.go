package postgres

import (
	"errors"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/internal/backend"
)

// A replica keeps what its last transaction on a session left in the
// store: the session's runs and chain heads. The next transaction on the
// session decides from that copy and sends everything in one pipeline:
// BEGIN, the session's lock, a check that the store still holds what the
// copy says (qVerify, under the lock, so nobody changes it before COMMIT),
// the writes and COMMIT. When the check fails (another replica, or another
// goroutine of this one, wrote the session since), nothing is written and
// the transaction runs again with the reads of the first round trip
// (Update). A transaction that needs a read the copy cannot answer stops
// before it sends anything and runs again the same way.

// errStale is why an optimistic transaction runs again with reads.
var errStale = errors.New("store: the session changed since this replica's last transaction on it")

// qVerify checks, under the session's lock, that the store holds what a
// cached session says: the run qSessionRun would read, at its revision,
// and the heads qSessionHeads would read (fingerprint).
const qVerify = `SELECT statewright_expect(CASE WHEN
	COALESCE((SELECT id || ':' || revision FROM statewright_runs WHERE session_key = $1
		ORDER BY status IN ` + backend.LiveStatusSQL + ` DESC, created_at DESC, ord DESC LIMIT 1), '') = $2
	AND COALESCE((SELECT string_agg(chain || ':' || seq || ':' || hash, ',' ORDER BY chain COLLATE "C") FROM statewright_heads
		WHERE seq > 0 AND (chain = 'session:' || $1 OR chain IN (SELECT id FROM statewright_runs WHERE session_key = $1 AND status IN ` +
	backend.LiveStatusSQL + `))), '') = $3
	THEN 1 ELSE 0 END, 1, 'session as cached')`

// qVerifyLive is qVerify for a session with a live run, by index probes:
// the session's live run (at most one, statewright_runs_live_session) is
// $2 at revision $3, and the heads of the session's chain and of the run's
// are at $4 and $5 (0: no row).
const qVerifyLive = `SELECT statewright_expect(CASE WHEN
	(SELECT revision FROM statewright_runs WHERE session_key = $1 AND status IN ` + backend.LiveStatusSQL + ` AND id = $2) = $3
	AND COALESCE((SELECT seq FROM statewright_heads WHERE chain = 'session:' || $1), 0) = $4
	AND COALESCE((SELECT seq FROM statewright_heads WHERE chain = $2), 0) = $5
	THEN 1 ELSE 0 END, 1, 'session as cached')`

// qCallAbsent checks that a call the transaction took to be unrecorded is.
const qCallAbsent = `SELECT statewright_expect((SELECT count(*) FROM statewright_calls
	WHERE session_key = $1 AND tool_use_id = $2 AND phase = $3), 0, 'call as cached')`

// cachedSession is a session as the store held it after a transaction of
// this replica committed. It is never changed once stored.
type cachedSession struct {
	live, last *store.Run            // what qSessionRun read: the live run, else the newest (with snapshots)
	heads      map[string]store.Head // the session's chain and its live run's (Seq 0: no row)
	// skip counts transactions that run with reads before the copy is
	// tried again, after it was found stale (then live, last and heads
	// are unset until one commits); misses counts the stale copies since
	// the last transaction that committed from one.
	skip, misses int
}

func (c *cachedSession) fingerprint(key string) (run, heads string) {
	if r := c.top(); r != nil {
		run = r.ID + ":" + strconv.FormatInt(r.Revision, 10)
	}
	var hs []string
	for _, h := range c.heads {
		if h.Seq > 0 {
			hs = append(hs, h.Chain+":"+strconv.FormatInt(h.Seq, 10)+":"+h.Hash)
		}
	}
	sort.Strings(hs)
	return run, strings.Join(hs, ",")
}

// top is the run qSessionRun returns.
func (c *cachedSession) top() *store.Run {
	if c.live != nil {
		return c.live
	}
	return c.last
}

// sessionCache holds a replica's cached sessions.
type sessionCache struct {
	mu sync.Mutex
	m  map[string]*cachedSession
}

// maxCachedSessions bounds the cache; it starts over when full.
const maxCachedSessions = 4096

// staleSkip is how many transactions on a session that was found stale
// run with reads before its copy is tried again; it doubles with every
// stale copy in a row, up to staleSkip<<maxStaleShift, so a session whose
// calls alternate between replicas stays on the reading path and rarely
// pays for a copy that fails its check.
const (
	staleSkip     = 8
	maxStaleShift = 5
)

// get returns the session's copy, or nil when the transaction must read.
func (c *sessionCache) get(key string) *cachedSession {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[key]
	if e == nil {
		return nil
	}
	if e.skip > 0 {
		if e.heads != nil {
			// Copy before counting down: a stored copy never changes.
			n := *e
			e = &n
			c.m[key] = e
		}
		e.skip--
		return nil
	}
	if e.heads == nil {
		return nil
	}
	return e
}

// put stores what a committed transaction left (nil: forget the session).
// A transaction that read keeps a stale session's countdown and misses;
// one that committed from the copy (fromCache) clears them.
func (c *sessionCache) put(key string, e *cachedSession, fromCache bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m[key]
	if fromCache {
		old = nil
	}
	if e == nil {
		if old != nil && (old.skip > 0 || old.misses > 0) {
			c.m[key] = &cachedSession{skip: old.skip, misses: old.misses}
		} else {
			delete(c.m, key)
		}
		return
	}
	if old != nil {
		e.skip, e.misses = old.skip, old.misses
	}
	if c.m == nil || len(c.m) >= maxCachedSessions {
		c.m = map[string]*cachedSession{}
	}
	c.m[key] = e
}

// stale forgets a session whose copy was found stale, for staleSkip
// transactions.
func (c *sessionCache) stale(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	misses := 1
	if old := c.m[key]; old != nil {
		misses = old.misses + 1
	}
	if c.m == nil || len(c.m) >= maxCachedSessions {
		c.m = map[string]*cachedSession{}
	}
	c.m[key] = &cachedSession{skip: staleSkip << min(misses-1, maxStaleShift), misses: misses}
}

// cacheEntry is what the committed transaction t left of its session, or
// nil when it cannot say without reading (a run created or ended, a run
// whose snapshot this replica does not hold).
func (t *tx) cacheEntry() *cachedSession {
	if t.created || t.uncacheable {
		return nil
	}
	e := &cachedSession{live: t.read, heads: map[string]store.Head{}}
	if t.written != nil {
		if !t.written.Status.Live() || (t.read != nil && t.read.ID != t.written.ID) {
			return nil
		}
		e.live = t.written
		if dg := e.live.SnapshotDigest; dg != "" {
			snap, ok := t.s.snapshots.Get(dg)
			if !ok {
				return nil
			}
			e.live.Snapshot = snap
		}
	}
	if e.live == nil {
		e.last = t.Ended
	}
	chains := []string{store.ChainOf("", t.Key)}
	if e.live != nil {
		chains = append(chains, e.live.ID)
	}
	for _, c := range chains {
		h, ok := t.heads[c]
		if !ok {
			h = store.Head{Chain: c}
		}
		e.heads[c] = h
	}
	return e
}
