// Package postgres is statewright's store backend on PostgreSQL (pgx v5),
// for several `statewright serve` replicas (and hooks, the CLI, the MCP
// server) sharing one store across machines. It has store/sqlite's
// semantics, checked by the same conformance suite (store/storetest).
//
// The tables live in the connection's current schema (the first entry of
// search_path; `?search_path=NAME` in the URL picks one), so one database
// can hold several stores. Every Update holds a transaction-scoped advisory
// lock on its session, so writes to one session queue across every process
// and replica, and re-reads (or checks its copy of) the session's live run
// under it; each run's events chain to that run's previous event, so no
// lock is shared between sessions. A replica commits many sessions'
// transactions from its copies in one PostgreSQL transaction (group.go).
// Run writes that other replicas must see (a new state, an approval, a run
// created or ended) send a NOTIFY at commit, the others a batched one after
// it; Watch listens on the store's channel.
//
// See docs/postgres.md.
package postgres

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/binary"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/internal/backend"
)

// DefaultBusyTimeout is how long a writer waits for a lock before failing
// with store.ErrBusy (store.DefaultBusyTimeout).
const DefaultBusyTimeout = store.DefaultBusyTimeout

// IdleInTransactionTimeout is the idle_in_transaction_session_timeout the
// store's connections set unless the URL names one: how long a transaction
// left open by a dead client keeps its locks.
const IdleInTransactionTimeout = 10 * time.Second

//go:embed migrations/*.sql
var migrationFS embed.FS

// Options configure Open (see store.Options).
type Options = store.Options

// Store is a store.Store (and store.Watcher) on a PostgreSQL schema.
type Store struct {
	pool    *pgxpool.Pool
	cfg     *pgxpool.Config
	where   string // the URL without its password, for messages
	schema  string
	id      string
	channel string // NOTIFY channel: statewright_<store id>
	now     func() time.Time
	closed  atomic.Bool

	snapshots backend.Snapshots
	// sessions are what this replica's last transaction on each session
	// left (cache.go).
	sessions sessionCache
	// cachedCommits counts transactions committed from a cached session,
	// groupedCommits those of them committed in a group (group.go),
	// mergedCommits those whose writes were merged with other sessions'.
	// uncheckedGroups counts groups committed without the check of their
	// copies (commitUnchecked), uncheckedFailed those that failed and were
	// checked and sent again.
	cachedCommits, groupedCommits, mergedCommits atomic.Int64
	uncheckedGroups, uncheckedFailed             atomic.Int64
	groups                                       groups
	// testCommitUnknown, set by tests, is asked before a group is sent
	// (false) and after it committed (true); true makes the group answer
	// errCommitUnknown there.
	testCommitUnknown atomic.Pointer[func(committed bool) bool]
	notifier          notifier
	presence          presence

	watchMu   sync.Mutex
	hub       *backend.Hub
	stopWatch context.CancelFunc
	watchDone chan struct{}
}

var (
	_ store.Store   = (*Store)(nil)
	_ store.Watcher = (*Store)(nil)
)

// IsURL reports whether s names a PostgreSQL store: a postgres:// or
// postgresql:// URL.
func IsURL(s string) bool { return store.IsPostgresURL(s) }

// Redact returns the URL with its password replaced, for messages and logs.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "postgres://(unparsable URL)"
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// plainName is a schema name Open may create: lower case, no quoting needed.
var plainName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// SchemaVersion is the schema version this package writes.
func SchemaVersion() int {
	n, _ := migrationFiles()
	return len(n)
}

func migrationFiles() ([]string, error) { return backend.Migrations(migrationFS) }

func init() {
	store.Register(store.Backend{Name: "postgres", Claims: IsURL, Display: Redact,
		Open: func(ctx context.Context, loc string, opts store.Options) (store.Store, error) {
			s, err := Open(ctx, loc, opts)
			if err != nil {
				return nil, err
			}
			return s, nil
		}})
}

// Open connects to the PostgreSQL store at rawURL (a postgres:// URL; pgx
// and libpq parameters, PG* environment variables and ~/.pgpass apply) and,
// unless opts.MustExist, creates it in the connection's current schema
// (creating the schema too when the URL's search_path names a plain schema
// that does not exist). The pool connects lazily; pool_max_conns in the URL
// caps it.
func Open(ctx context.Context, rawURL string, opts Options) (*Store, error) {
	where := Redact(rawURL)
	if !IsURL(rawURL) {
		return nil, fmt.Errorf("store: open %s: %w: not a postgres:// URL", where, store.ErrInvalid)
	}
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w: %v", where, store.ErrInvalid, redactErr(err, rawURL))
	}
	busy := opts.BusyTimeout
	if busy <= 0 {
		busy = DefaultBusyTimeout
	}
	rp := cfg.ConnConfig.RuntimeParams
	rp["lock_timeout"] = strconv.FormatInt(max(busy.Milliseconds(), 1), 10)
	if rp["application_name"] == "" {
		rp["application_name"] = "statewright"
	}
	// A process that vanishes mid-transaction (a replica's machine gone,
	// no FIN) would hold its session's lock until TCP keepalive noticed;
	// no transaction of ours idles, so the server ends such a one soon.
	if rp["idle_in_transaction_session_timeout"] == "" {
		rp["idle_in_transaction_session_timeout"] = strconv.FormatInt(IdleInTransactionTimeout.Milliseconds(), 10)
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", where, err)
	}
	s := &Store{pool: pool, cfg: cfg, where: where, now: now}
	if err := s.init(ctx, opts.MustExist); err != nil {
		pool.Close()
		return nil, err
	}
	if opts.ExpectID != "" && opts.ExpectID != s.id {
		pool.Close()
		return nil, fmt.Errorf("store: open %s: %w: the store's id is %s, expected %s (was the store dropped and recreated?)",
			where, store.ErrStoreMismatch, s.id, opts.ExpectID)
	}
	return s, nil
}

// init reads the schema version and the store id, migrating when needed.
func (s *Store) init(ctx context.Context, mustExist bool) error {
	want := SchemaVersion()
	var (
		schema *string
		v      *int32
		id     *string
	)
	// The hook path: one statement reads the schema, version and id of a current store.
	err := s.pool.QueryRow(ctx, `SELECT current_schema(),
		(SELECT max(version) FROM statewright_migrations),
		(SELECT value FROM statewright_meta WHERE key = 'store_id')`).Scan(&schema, &v, &id)
	if err == nil && schema != nil && v != nil && int(*v) == want && id != nil {
		s.setID(*schema, *id)
		return nil
	}
	if err != nil && pgCode(err) != "42P01" { // undefined_table: not initialised
		return s.mapErr("open", err)
	}
	if err := s.pool.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		return s.mapErr("open", err)
	}
	if schema == nil {
		// search_path names no existing schema: create the one the URL
		// names, when it is a plain name and creating is allowed.
		name := s.cfg.ConnConfig.RuntimeParams["search_path"]
		if mustExist || !plainName.MatchString(name) {
			return fmt.Errorf("store: open %s: %w: search_path names no existing schema (CREATE SCHEMA it first)", s.where, store.ErrNoStore)
		}
		if _, err := s.pool.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{name}.Sanitize()); err != nil {
			return s.mapErr("open: create schema "+name, err)
		}
		schema = &name
	}
	if mustExist {
		var exists bool
		if err := s.pool.QueryRow(ctx, "SELECT to_regclass('statewright_migrations') IS NOT NULL").Scan(&exists); err != nil {
			return s.mapErr("open", err)
		}
		if !exists {
			return fmt.Errorf("store: open %s: %w: schema %s holds no statewright store (run `statewright init`, or check --store / %s)",
				s.where, store.ErrNoStore, *schema, store.EnvStore)
		}
	}
	return s.migrate(ctx, *schema, want, mustExist)
}

func (s *Store) setID(schema, id string) {
	s.schema, s.id, s.channel = schema, id, "statewright_"+id
}

// migrate applies the embedded migrations above the store's version in one
// transaction, holding an advisory lock so replicas starting together
// create one store with one id.
func (s *Store) migrate(ctx context.Context, schema string, want int, mustExist bool) error {
	names, err := migrationFiles()
	if err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return s.mapErr("migrate: begin", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", lockKey("migrate", schema)); err != nil {
		return s.mapErr("migrate: lock", err)
	}
	var exists bool
	if err := tx.QueryRow(ctx, "SELECT to_regclass('statewright_migrations') IS NOT NULL").Scan(&exists); err != nil {
		return s.mapErr("migrate", err)
	}
	v := 0
	if exists {
		if err := tx.QueryRow(ctx, "SELECT COALESCE(max(version), 0) FROM statewright_migrations").Scan(&v); err != nil {
			return s.mapErr("migrate", err)
		}
	}
	if v == 0 {
		// Never take over tables this package did not create.
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()
			AND tablename LIKE 'statewright\_%' AND tablename <> 'statewright_migrations'`).Scan(&n); err != nil {
			return s.mapErr("migrate", err)
		}
		if n > 0 {
			return fmt.Errorf("store: open %s: %w: schema %s has statewright tables but no migration record", s.where, store.ErrCorrupt, schema)
		}
		if mustExist {
			return fmt.Errorf("store: open %s: %w: schema %s holds no initialised store", s.where, store.ErrNoStore, schema)
		}
	}
	if v > want {
		return fmt.Errorf("store: open %s: %w: schema version %d is newer than this binary's %d (upgrade statewright)",
			s.where, store.ErrCorrupt, v, want)
	}
	if v < want {
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS statewright_migrations (
			version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`); err != nil {
			return s.mapErr("migrate", err)
		}
	}
	nowNanos := s.now().UnixNano()
	for i := v; i < want; i++ {
		b, err := migrationFS.ReadFile(names[i])
		if err != nil {
			return fmt.Errorf("store: migrate: %w", err)
		}
		if _, err := tx.Exec(ctx, string(b)); err != nil {
			return s.mapErr("migrate: "+names[i], err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO statewright_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
			i+1, strings.TrimPrefix(names[i], "migrations/"), nowNanos); err != nil {
			return s.mapErr("migrate", err)
		}
	}
	if v == 0 {
		id, err := backend.NewID("st_", 16)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "INSERT INTO statewright_meta (key, value) VALUES ('store_id', $1), ('created_at', $2)",
			id, s.now().UTC().Format(time.RFC3339Nano)); err != nil {
			return s.mapErr("migrate", err)
		}
	}
	var id *string
	if err := tx.QueryRow(ctx, "SELECT value FROM statewright_meta WHERE key = 'store_id'").Scan(&id); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return s.mapErr("migrate", err)
	}
	if id == nil {
		return fmt.Errorf("store: open %s: %w: no store id", s.where, store.ErrCorrupt)
	}
	if err := tx.Commit(ctx); err != nil {
		return s.mapErr("migrate: commit", err)
	}
	s.setID(schema, *id)
	return nil
}

// StoreID returns the store's id (created once with the store).
func (s *Store) StoreID() string { return s.id }

// Schema returns the schema the store's tables live in.
func (s *Store) Schema() string { return s.schema }

// Location returns the store's URL without its password.
func (s *Store) Location() string { return s.where }

// Identity implements store.Store. A PostgreSQL store has no local files.
func (s *Store) Identity() store.Identity {
	return store.Identity{ID: s.id, Backend: "postgres", Location: s.where}
}

// CheckIdentity implements store.Store (CheckID).
func (s *Store) CheckIdentity(ctx context.Context) error { return s.CheckID(ctx) }

// CheckID re-reads the store's id and fails with store.ErrStoreMismatch
// when it changed since Open (the schema was dropped and the store
// recreated): long-lived processes call it before serving a request.
func (s *Store) CheckID(ctx context.Context) error {
	if err := s.check("check id"); err != nil {
		return err
	}
	var id string
	if err := s.pool.QueryRow(ctx, "SELECT value FROM statewright_meta WHERE key = 'store_id'").Scan(&id); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("store: check id %s: %w: the store has no id any more", s.where, store.ErrStoreMismatch)
		}
		return s.mapErr("check id", err)
	}
	if id != s.id {
		return fmt.Errorf("store: check id %s: %w: the store's id is %s, it was %s when opened (dropped and recreated?)",
			s.where, store.ErrStoreMismatch, id, s.id)
	}
	return nil
}

// Close stops the watchers and closes the pool. Further calls fail with
// store.ErrClosed.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
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
	s.groups.mu.Lock() // no group starts after this (commitGrouped checks closed)
	s.groups.mu.Unlock()
	s.groups.wg.Wait()
	s.notifier.close()
	s.stopPresence()
	s.pool.Close()
	return nil
}

func (s *Store) check(op string) error {
	if s.closed.Load() {
		return fmt.Errorf("store: %s: %w", op, store.ErrClosed)
	}
	return nil
}

// lockKey derives a 64-bit advisory lock key from its parts; distinct
// stores (schemas) and sessions get distinct keys.
func lockKey(parts ...string) int64 {
	h := sha256.New()
	h.Write([]byte("statewright\x00"))
	for _, p := range parts {
		var n [binary.MaxVarintLen64]byte
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(p)))])
		h.Write([]byte(p))
	}
	return int64(binary.BigEndian.Uint64(h.Sum(nil)))
}

func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// mapErr wraps err with the store's location, op and, where one applies, a
// store sentinel.
func (s *Store) mapErr(op string, err error) error {
	switch code := pgCode(err); {
	case code == "55P03" || code == "40P01": // lock_not_available (lock_timeout), deadlock_detected
		return fmt.Errorf("store: %s %s: %w (a lock stayed held past the busy timeout): %w", op, s.where, store.ErrBusy, err)
	case code == "SW001": // statewright_expect: a write that had to touch one row did not
		return fmt.Errorf("store: %s %s: %w: %w", op, s.where, store.ErrConflict, err)
	case code == "42P01": // undefined_table
		return fmt.Errorf("store: %s %s: %w: a statewright table is missing: %w", op, s.where, store.ErrCorrupt, err)
	}
	return fmt.Errorf("store: %s %s: %w", op, s.where, err)
}

// redactErr hides rawURL's password in a parse error's text.
func redactErr(err error, rawURL string) string {
	msg := err.Error()
	if u, perr := url.Parse(rawURL); perr == nil && u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			msg = strings.ReplaceAll(msg, p, "xxxxx")
		}
	}
	return msg
}
