// Package sqlite is statewright's default store backend: one SQLite file
// (modernc.org/sqlite, pure Go, no cgo) in WAL mode, shared by every hook
// process, the MCP server and the CLI.
//
// Write transactions begin as writes (BEGIN IMMEDIATE), so concurrent
// processes queue on the file lock for up to the busy timeout instead of
// failing on a lock upgrade; within one process writers queue on a mutex.
// Schema migrations are embedded and versioned with PRAGMA user_version;
// Open skips them when the file is current, so opening is cheap enough for a
// hook process that opens the store on every call.
//
// See docs/store.md.
package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sqlitedrv "modernc.org/sqlite"

	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/internal/backend"
)

// DefaultBusyTimeout is how long a writer waits for the file lock before
// failing with store.ErrBusy (store.DefaultBusyTimeout).
const DefaultBusyTimeout = store.DefaultBusyTimeout

//go:embed migrations/*.sql
var migrationFS embed.FS

// Options configure Open (see store.Options).
type Options = store.Options

// Store is a store.Store on one SQLite file.
type Store struct {
	db       *sql.DB
	path     string
	file     os.FileInfo // the file as opened (CheckIdentity)
	dbf      *sharedFile // the file as this process's stores share it
	id       string
	now      func() time.Time
	lockWait time.Duration // how long a writer queues on the lock file
	oneShot  bool          // Options.OneShot
	closed   atomic.Bool

	writerMu  sync.Mutex
	w         *writer // started by the first write
	snapshots backend.Snapshots

	watchMu   sync.Mutex // guards the poller behind Watch
	hub       *backend.Hub
	stopWatch context.CancelFunc
	watchDone chan struct{}
}

var (
	_ store.Store   = (*Store)(nil)
	_ store.Watcher = (*Store)(nil)
)

// SchemaVersion is the schema version this package writes (PRAGMA user_version).
func SchemaVersion() int {
	n, _ := migrationFiles()
	return len(n)
}

func migrationFiles() ([]string, error) { return backend.Migrations(migrationFS) }

func init() {
	store.Register(store.Backend{Name: "sqlite", Claims: Claims,
		Open: func(ctx context.Context, loc string, opts store.Options) (store.Store, error) {
			s, err := Open(ctx, loc, opts)
			if err != nil {
				return nil, err
			}
			return s, nil
		}})
}

// Claims reports whether location names an SQLite store: a file path, or
// a file: URI (file:/abs/path or file:rel/path, without a query).
func Claims(location string) bool {
	if strings.HasPrefix(location, "file:") {
		return true
	}
	i := strings.Index(location, "://")
	return i < 0 || strings.ContainsAny(location[:i], `/\.`)
}

// filePath returns the path a location names (a file: URI's path).
func filePath(location string) (string, error) {
	if !strings.HasPrefix(location, "file:") {
		return location, nil
	}
	u, err := url.Parse(location)
	if err != nil || u.RawQuery != "" || (u.Host != "" && u.Host != "localhost") {
		return "", fmt.Errorf("store: open %s: %w: an SQLite store is a path or file:PATH", location, store.ErrInvalid)
	}
	if u.Opaque != "" {
		return filepath.FromSlash(u.Opaque), nil
	}
	return filepath.FromSlash(u.Path), nil
}

// Open opens (and, unless opts.MustExist, creates) the store at path. A new
// file is created with mode 0600 in a directory created with mode 0700.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	path, err := filePath(path)
	if err != nil {
		return nil, err
	}
	if path == "" {
		return nil, fmt.Errorf("store: open: %w: empty path", store.ErrInvalid)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	fi, err := prepareFile(abs, opts.MustExist)
	if err != nil {
		return nil, err
	}
	busy := opts.BusyTimeout
	if busy <= 0 {
		busy = DefaultBusyTimeout
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	// The wait for a write is split so that it never exceeds busy in total:
	// most of it queueing on the writers' lock file, the rest (at least
	// 10 ms) SQLite's own busy timeout for BEGIN IMMEDIATE, which matters
	// only against writers that do not take the lock file.
	sqlBusy := busy / 4
	if sqlBusy < 10*time.Millisecond {
		sqlBusy = min(busy, 10*time.Millisecond)
	}
	db := sql.OpenDB(connector{dsn: dsn(abs, sqlBusy)})
	db.SetMaxOpenConns(4)
	db.SetMaxIdleConns(4)
	s := &Store{db: db, path: abs, file: fi, now: now, lockWait: busy - sqlBusy, oneShot: opts.OneShot,
		dbf: holdFile(fi, abs)}
	if err := s.init(ctx, opts.MustExist); err != nil {
		db.Close()
		releaseFile(s.dbf)
		return nil, err
	}
	if opts.ExpectID != "" && opts.ExpectID != s.id {
		s.Close()
		return nil, fmt.Errorf("store: open %s: %w: the store's id is %s, expected %s (was the store deleted or recreated?)",
			abs, store.ErrStoreMismatch, s.id, opts.ExpectID)
	}
	return s, nil
}

// prepareFile makes sure the store file exists (creating it 0600 in a 0700
// directory) or, with mustExist, that it does, and returns its FileInfo.
func prepareFile(abs string, mustExist bool) (os.FileInfo, error) {
	fi, err := os.Stat(abs)
	switch {
	case err == nil:
		if fi.IsDir() {
			return nil, fmt.Errorf("store: open %s: %w: is a directory", abs, store.ErrCorrupt)
		}
		return fi, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("store: open %s: %w", abs, err)
	case mustExist:
		return nil, fmt.Errorf("store: open %s: %w: the file does not exist (run `statewright init`, or check --store / %s)",
			abs, store.ErrNoStore, store.EnvStore)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("store: create directory for %s: %w", abs, err)
	}
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil && !errors.Is(err, fs.ErrExist) { // ErrExist: another process created it first
		return nil, fmt.Errorf("store: create %s: %w", abs, err)
	}
	if err == nil {
		if err := f.Close(); err != nil {
			return nil, fmt.Errorf("store: create %s: %w", abs, err)
		}
	}
	if fi, err = os.Stat(abs); err != nil {
		return nil, fmt.Errorf("store: open %s: %w", abs, err)
	}
	return fi, nil
}

// dsn builds a file: URI with mode=rw, so SQLite never creates the file
// itself (prepareFile does, with the right mode), and the per-connection
// settings: BEGIN IMMEDIATE for write transactions, the busy timeout,
// synchronous=NORMAL (durable across crashes of the process in WAL mode),
// temporary files (the savepoints' sub-journals) in memory, foreign keys,
// and a WAL that a checkpoint restarts without truncating it unless it
// grew past 4 MiB (a limit of 0 truncated it on every restart, and the
// next commit then synced a fresh WAL header and the directory). The last
// connection to close still truncates it.
func dsn(abs string, busy time.Duration) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	q := "mode=rw&_txlock=immediate" +
		"&_pragma=busy_timeout(" + strconv.FormatInt(busy.Milliseconds(), 10) + ")" +
		"&_pragma=synchronous(NORMAL)&_pragma=temp_store(MEMORY)&_pragma=foreign_keys(1)&_pragma=journal_size_limit(4194304)"
	return u.String() + "?" + q
}

// connector opens connections with a private modernc driver (no global
// registrations) and keeps the WAL and shared-memory files when the last
// connection closes (SQLITE_FCNTL_PERSIST_WAL; SQLite truncates the WAL to
// nothing instead): deleting and recreating those files each time costs a
// directory sync.
type connector struct{ dsn string }

var drv = &sqlitedrv.Driver{}

// Connect opens one connection and marks its WAL persistent.
func (c connector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := drv.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	if fc, ok := conn.(sqlitedrv.FileControl); ok {
		if _, err := fc.FileControlPersistWAL("main", 1); err != nil {
			conn.Close()
			return nil, err
		}
	}
	return conn, nil
}

// Driver returns the private driver.
func (c connector) Driver() driver.Driver { return drv }

// init reads the schema version and migrates when needed.
func (s *Store) init(ctx context.Context, mustExist bool) error {
	want := SchemaVersion()
	// The hook path: one statement reads the version and the id of a current store.
	var (
		v  int
		id sql.NullString
	)
	err := s.db.QueryRowContext(ctx, `SELECT (SELECT user_version FROM pragma_user_version),
		(SELECT value FROM meta WHERE key = 'store_id')`).Scan(&v, &id)
	if err == nil && v == want && id.Valid {
		s.id = id.String
		return nil
	}
	if code := sqliteCode(err); code == codeNotADB || code == codeCorrupt || code == codeBusy || code == codeLocked {
		return mapErr("open "+s.path, err)
	}
	// One statement reads the version and the schema size together: read
	// apart, a creator committing in between makes a new store look like
	// another application's database.
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT (SELECT user_version FROM pragma_user_version),
		(SELECT count(*) FROM sqlite_schema)`).Scan(&v, &n); err != nil {
		return mapErr("open "+s.path, err)
	}
	switch {
	case v == want:
		return s.loadID(ctx)
	case v > want:
		return fmt.Errorf("store: open %s: %w: schema version %d is newer than this binary's %d (upgrade statewright)",
			s.path, store.ErrCorrupt, v, want)
	}
	if v == 0 {
		// Never take over another application's database.
		if n > 0 {
			return fmt.Errorf("store: open %s: %w: an SQLite database that is not a statewright store", s.path, store.ErrCorrupt)
		}
		if mustExist {
			return fmt.Errorf("store: open %s: %w: the file is not an initialised store", s.path, store.ErrNoStore)
		}
	}
	if err := s.migrate(ctx, want); err != nil {
		return err
	}
	return s.loadID(ctx)
}

func (s *Store) loadID(ctx context.Context) error {
	if err := s.db.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'store_id'").Scan(&s.id); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("store: open %s: %w: no store id", s.path, store.ErrCorrupt)
		}
		return mapErr("open "+s.path, err)
	}
	return nil
}

// migrate applies the embedded migrations above the file's version in one
// write transaction (re-reading the version inside it, since another process
// may have migrated meanwhile).
func (s *Store) migrate(ctx context.Context, want int) error {
	names, err := migrationFiles()
	if err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return mapErr("migrate "+s.path, err)
	}
	defer conn.Close()
	// journal_mode is persistent and cannot change inside a transaction.
	if err := s.setWAL(ctx, conn); err != nil {
		return err
	}
	tx, err := conn.BeginTx(ctx, nil) // BEGIN IMMEDIATE (_txlock)
	if err != nil {
		return mapErr("migrate "+s.path+": begin", err)
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return mapErr("migrate "+s.path, err)
	}
	if v == 0 {
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&n); err != nil {
			return mapErr("migrate "+s.path, err)
		}
		if n > 0 {
			return fmt.Errorf("store: open %s: %w: an SQLite database that is not a statewright store", s.path, store.ErrCorrupt)
		}
	}
	if v > want {
		return fmt.Errorf("store: open %s: %w: schema version %d is newer than this binary's %d", s.path, store.ErrCorrupt, v, want)
	}
	for i := v; i < want; i++ {
		b, err := migrationFS.ReadFile(names[i])
		if err != nil {
			return fmt.Errorf("store: migrate: %w", err)
		}
		if _, err := tx.ExecContext(ctx, string(b)); err != nil {
			return mapErr(fmt.Sprintf("migrate %s: %s", s.path, names[i]), err)
		}
	}
	if v == 0 {
		id, err := backend.NewID("st_", 16)
		if err != nil {
			return err
		}
		now := s.now().UTC().Format(time.RFC3339Nano)
		if _, err := tx.ExecContext(ctx,
			"INSERT INTO meta (key, value) VALUES ('store_id', ?), ('created_at', ?)", id, now); err != nil {
			return mapErr("migrate "+s.path, err)
		}
	}
	if _, err := tx.ExecContext(ctx, "PRAGMA user_version = "+strconv.Itoa(want)); err != nil {
		return mapErr("migrate "+s.path, err)
	}
	if err := tx.Commit(); err != nil {
		return mapErr("migrate "+s.path+": commit", err)
	}
	return nil
}

// StoreID returns the store's id (created once with the store).
func (s *Store) StoreID() string { return s.id }

// Path returns the store file's absolute path.
func (s *Store) Path() string { return s.path }

// Files returns the files an SQLite store at path is made of: the
// database, its WAL, shared-memory and rollback journal, and the writers'
// lock file.
func Files(path string) []string {
	return []string{path, path + "-wal", path + "-shm", path + "-journal", path + ".lock"}
}

// Identity implements store.Store.
func (s *Store) Identity() store.Identity {
	return store.Identity{ID: s.id, Backend: "sqlite", Location: s.path, Files: Files(s.path)}
}

// CheckIdentity implements store.Store: the file at the store's path must
// be the one opened, and still carry the store's id.
func (s *Store) CheckIdentity(ctx context.Context) error {
	if err := s.check("check identity"); err != nil {
		return err
	}
	now, err := os.Stat(s.path)
	if err != nil {
		return fmt.Errorf("store: the store %s is gone since the server started (%w): %w", s.path, store.ErrStoreMismatch, err)
	}
	if !os.SameFile(s.file, now) {
		return fmt.Errorf("store: the store %s was replaced since the server started (%w); restart the server", s.path, store.ErrStoreMismatch)
	}
	return nil
}

// Close closes the database. Further calls fail with store.ErrClosed.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.stopWatching()
	s.writerMu.Lock()
	w := s.w
	s.writerMu.Unlock()
	var err error
	if w != nil {
		err = w.close()
	}
	if s.oneShot {
		// The process exits next: closing the last connection would
		// checkpoint the WAL (fsyncs of the WAL and the database, then the
		// next writer's of a fresh WAL header and the directory). The
		// committed transactions are in the WAL already; the next process
		// reads them back, and a oneShot writer truncates the WAL once it
		// outgrows walTruncateBytes.
		return err
	}
	if derr := s.db.Close(); err == nil {
		err = derr
	}
	if w != nil && w.ckpt != nil {
		w.ckpt.closeFile()
	}
	releaseFile(s.dbf) // after the connections: see sharedFile
	if err != nil {
		return fmt.Errorf("store: close: %w", err)
	}
	return nil
}

// writer returns the store's writer, starting it on first use.
func (s *Store) writer() *writer {
	s.writerMu.Lock()
	defer s.writerMu.Unlock()
	if s.w == nil {
		if s.closed.Load() {
			return &writer{closed: true}
		}
		s.w = newWriter(s)
	}
	return s.w
}

// write runs fn alone in a writer transaction of its own: the writes of the
// store's own (retention, prune, checkpoint).
func (s *Store) write(ctx context.Context, op string, fn func(b *batch) error) error {
	if err := s.check(op); err != nil {
		return err
	}
	if err := s.writer().submit(&job{ctx: ctx, raw: fn}); err != nil {
		if errors.Is(err, store.ErrClosed) {
			return fmt.Errorf("store: %s: %w", op, err)
		}
		return err
	}
	return nil
}

func (s *Store) check(op string) error {
	if s.closed.Load() {
		return fmt.Errorf("store: %s: %w", op, store.ErrClosed)
	}
	return nil
}

// SQLite primary result codes (the low byte of an extended code).
const (
	codeCorrupt    = 11
	codeBusy       = 5
	codeLocked     = 6
	codeNotADB     = 26
	codeConstraint = 19
	codeReadOnly   = 8
)

func sqliteCode(err error) int {
	var se *sqlitedrv.Error
	if errors.As(err, &se) {
		return se.Code() & 0xff
	}
	return 0
}

// setWAL switches the file to WAL. SQLite answers the switch with
// SQLITE_BUSY at once, without calling its busy handler, while another
// connection is creating the same file, so concurrent first opens retry
// here within the store's lock wait.
func (s *Store) setWAL(ctx context.Context, conn *sql.Conn) error {
	deadline := time.Now().Add(s.lockWait)
	for {
		var mode string
		err := conn.QueryRowContext(ctx, "PRAGMA journal_mode=WAL").Scan(&mode)
		if err == nil {
			return nil
		}
		if code := sqliteCode(err); (code != codeBusy && code != codeLocked) || time.Now().After(deadline) {
			return mapErr("migrate "+s.path+": set WAL", err)
		}
		select {
		case <-ctx.Done():
			return mapErr("migrate "+s.path+": set WAL", ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// mapErr wraps err with op and, where it applies, a store sentinel.
func mapErr(op string, err error) error {
	switch sqliteCode(err) {
	case codeBusy, codeLocked:
		return fmt.Errorf("store: %s: %w (another writer held the lock past the busy timeout): %w", op, store.ErrBusy, err)
	case codeNotADB, codeCorrupt:
		return fmt.Errorf("store: %s: %w: %w", op, store.ErrCorrupt, err)
	}
	return fmt.Errorf("store: %s: %w", op, err)
}

func isConstraint(err error) bool { return sqliteCode(err) == codeConstraint }
