package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/store/storetest"
)

var bg = context.Background()

// helperEnv selects a helper mode when the test binary re-executes itself.
const helperEnv = "STATEWRIGHT_STORE_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "decide":
		if err := decideWorker(); err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	case "hook":
		if err := hookWorker(); err != nil {
			fmt.Fprintln(os.Stderr, "hook:", err)
			os.Exit(1)
		}
		os.Exit(0)
	case "noop":
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func openTemp(t testing.TB, opts Options) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(bg, path, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) store.Store {
		s, _ := openTemp(t, Options{Now: now})
		return s
	})
}

func TestShared(t *testing.T) {
	storetest.RunShared(t, func(t *testing.T) (store.Store, store.Store) {
		a, path := openTemp(t, Options{})
		b, err := Open(bg, path, Options{MustExist: true, ExpectID: a.StoreID()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return a, b
	})
}

// rawDB opens the file without the store, as a tamperer (or sqlite3) would.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestOpenCreatesPrivateWALStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "statewright")
	path := filepath.Join(dir, "state.db")
	s, err := Open(bg, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	id := s.StoreID()
	if !strings.HasPrefix(id, "st_") || len(id) != 3+32 {
		t.Errorf("StoreID = %q", id)
	}
	storetest.Create(t, s, "cc:perm")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]fs.FileMode{dir: 0o700, path: 0o600} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s mode = %v, want %v", p, got, want)
		}
	}
	db := rawDB(t, path)
	var mode string
	var version int
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
	if err := db.QueryRow("PRAGMA user_version").Scan(&version); err != nil || version != SchemaVersion() || version < 1 {
		t.Errorf("user_version = %d, %v; want %d", version, err, SchemaVersion())
	}
	db.Close()
	// Reopening keeps the id and the data, and does not migrate again.
	s2, err := Open(bg, path, Options{MustExist: true, ExpectID: id})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if s2.StoreID() != id {
		t.Errorf("reopened StoreID = %s, want %s", s2.StoreID(), id)
	}
	if _, err := s2.LiveRun(bg, "cc:perm"); err != nil {
		t.Errorf("reopened store lost the run: %v", err)
	}
}

func TestConnectionSettings(t *testing.T) {
	s, _ := openTemp(t, Options{BusyTimeout: 1500 * time.Millisecond})
	conn, err := s.db.Conn(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A quarter of the busy timeout is SQLite's; the rest is spent on the lock file.
	for pragma, want := range map[string]int{"busy_timeout": 375, "synchronous": 1, "foreign_keys": 1,
		"journal_size_limit": 4 << 20, "temp_store": 2} {
		var got int
		if err := conn.QueryRowContext(bg, "PRAGMA "+pragma).Scan(&got); err != nil || got != want {
			t.Errorf("PRAGMA %s = %d, %v; want %d", pragma, got, err, want)
		}
	}
}

func TestMustExist(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nope", "state.db")
	if _, err := Open(bg, missing, Options{MustExist: true}); !errors.Is(err, store.ErrNoStore) {
		t.Errorf("missing file: err = %v, want ErrNoStore", err)
	}
	if _, err := os.Stat(filepath.Dir(missing)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("MustExist created the directory (stat err %v)", err)
	}
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(bg, empty, Options{MustExist: true}); !errors.Is(err, store.ErrNoStore) {
		t.Errorf("empty file: err = %v, want ErrNoStore", err)
	}
	if b, _ := os.ReadFile(empty); len(b) != 0 {
		t.Errorf("MustExist wrote %d bytes into an uninitialised file", len(b))
	}
	// Without MustExist the empty file becomes a store.
	s, err := Open(bg, empty, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(bg, empty, Options{MustExist: true})
	if err != nil {
		t.Fatalf("initialised store: %v", err)
	}
	s.Close()
	if _, err := Open(bg, "", Options{}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("empty path: err = %v, want ErrInvalid", err)
	}
}

func TestOpenCorrupt(t *testing.T) {
	dir := t.TempDir()
	foreign := filepath.Join(dir, "foreign.db")
	db, err := sql.Open("sqlite", foreign)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE notes (x TEXT); INSERT INTO notes VALUES ('mine')"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	newer, _ := openTemp(t, Options{})
	newerPath := newer.Path()
	if _, err := newer.db.Exec("PRAGMA user_version = 999"); err != nil {
		t.Fatal(err)
	}
	newer.Close()
	noID, _ := openTemp(t, Options{})
	noIDPath := noID.Path()
	if _, err := noID.db.Exec("DELETE FROM meta WHERE key = 'store_id'"); err != nil {
		t.Fatal(err)
	}
	noID.Close()

	garbage := bytes.Repeat([]byte("this is not an SQLite database\n"), 200)
	cases := []struct {
		name  string
		setup func(t *testing.T) string
	}{
		{"garbage", func(t *testing.T) string {
			p := filepath.Join(dir, "garbage.db")
			if err := os.WriteFile(p, garbage, 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}},
		{"truncated header", func(t *testing.T) string {
			p := filepath.Join(dir, "trunc.db")
			if err := os.WriteFile(p, []byte("SQLite format 3\x00\x10\x00garbage"), 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}},
		{"damaged pages", func(t *testing.T) string {
			s, p := openTemp(t, Options{})
			storetest.Create(t, s, "cc:dmg")
			s.Close() // checkpointed into the main file
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			for i := 4096; i < len(b); i++ { // keep the header page, ruin the rest
				b[i] = 0xA5
			}
			for _, suffix := range []string{"-wal", "-shm"} {
				os.Remove(p + suffix)
			}
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}},
		{"directory", func(t *testing.T) string { return dir }},
		{"another application's database", func(t *testing.T) string { return foreign }},
		{"newer schema", func(t *testing.T) string { return newerPath }},
		{"no store id", func(t *testing.T) string { return noIDPath }},
	}
	for _, tc := range cases {
		for _, must := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/mustexist=%v", tc.name, must), func(t *testing.T) {
				p := tc.setup(t)
				before, _ := os.ReadFile(p)
				s, err := Open(bg, p, Options{MustExist: must})
				if err == nil {
					s.Close()
					t.Fatal("Open succeeded")
				}
				if !errors.Is(err, store.ErrCorrupt) {
					t.Errorf("err = %v, want ErrCorrupt", err)
				}
				if !strings.Contains(err.Error(), p) {
					t.Errorf("error %q does not name the file", err)
				}
				if after, _ := os.ReadFile(p); !bytes.Equal(before, after) {
					t.Error("Open modified the file")
				}
			})
		}
	}
	// The foreign database is untouched (no statewright tables).
	db = rawDB(t, foreign)
	var n int
	if err := db.QueryRow("SELECT count(*) FROM sqlite_schema WHERE name = 'runs'").Scan(&n); err != nil || n != 0 {
		t.Errorf("statewright tables in a foreign database: %d, %v", n, err)
	}
}

func TestRecreatedStoreHasNewID(t *testing.T) {
	s, path := openTemp(t, Options{})
	id1 := s.StoreID()
	s.Close()
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(path + suffix)
	}
	// A hook in MustExist mode does not silently recreate it.
	if _, err := Open(bg, path, Options{MustExist: true, ExpectID: id1}); !errors.Is(err, store.ErrNoStore) {
		t.Fatalf("deleted store: err = %v, want ErrNoStore", err)
	}
	s2, err := Open(bg, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	id2 := s2.StoreID()
	s2.Close()
	if id2 == id1 || id2 == "" {
		t.Fatalf("recreated store id %q, old %q", id2, id1)
	}
	_, err = Open(bg, path, Options{MustExist: true, ExpectID: id1})
	if !errors.Is(err, store.ErrStoreMismatch) {
		t.Errorf("ExpectID of the old store: err = %v, want ErrStoreMismatch", err)
	}
	s3, err := Open(bg, path, Options{MustExist: true, ExpectID: id2})
	if err != nil {
		t.Errorf("ExpectID of the current store: %v", err)
	} else {
		s3.Close()
	}
}

func TestEventsAreAppendOnly(t *testing.T) {
	s, path := openTemp(t, Options{})
	storetest.Create(t, s, "cc:ao")
	for i := 0; i < 5; i++ {
		if _, _, err := storetest.Decide(bg, s, "cc:ao", fmt.Sprintf("t%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	db := rawDB(t, path)
	for _, q := range []string{
		"UPDATE events SET reason = 'nothing to see' WHERE seq = 3",
		"DELETE FROM events WHERE seq = 3",
		"DELETE FROM events",
	} {
		if _, err := db.Exec(q); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: err = %v, want the append-only trigger", q, err)
		}
	}
	if st, err := s.VerifyChain(bg); err != nil || st.Events != 5 {
		t.Fatalf("VerifyChain = %+v, %v", st, err)
	}
	// Someone who drops the triggers is still caught by the chain.
	tamper := []struct {
		name string
		sql  string
		seq  string
	}{
		{"edited reason", "UPDATE events SET reason = 'deny' WHERE seq = 3", "seq 3"},
		{"edited time", "UPDATE events SET time = time + 1 WHERE seq = 2", "seq 2"},
		{"deleted middle", "DELETE FROM events WHERE seq = 4", "seq 5"},
		{"rehashed without relinking", "UPDATE events SET hash = 'x' WHERE seq = 1", "seq 1"},
	}
	for _, tc := range tamper {
		t.Run(tc.name, func(t *testing.T) {
			s, path := openTemp(t, Options{})
			storetest.Create(t, s, "cc:t")
			for i := 0; i < 5; i++ {
				if _, _, err := storetest.Decide(bg, s, "cc:t", fmt.Sprintf("t%d", i)); err != nil {
					t.Fatal(err)
				}
			}
			db := rawDB(t, path)
			if _, err := db.Exec("DROP TRIGGER events_no_update; DROP TRIGGER events_prune_only; " + tc.sql); err != nil {
				t.Fatal(err)
			}
			_, err := s.VerifyChain(bg)
			if !errors.Is(err, store.ErrChainBroken) || !strings.Contains(err.Error(), tc.seq) {
				t.Errorf("VerifyChain err = %v, want ErrChainBroken at %s", err, tc.seq)
			}
		})
	}
}

func TestBusyTimeout(t *testing.T) {
	s, path := openTemp(t, Options{BusyTimeout: 150 * time.Millisecond})
	storetest.Create(t, s, "cc:busy")
	db := rawDB(t, path)
	conn, err := db.Conn(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(bg, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, _, err = storetest.Decide(bg, s, "cc:busy", "toolu_busy")
	waited := time.Since(start)
	if !errors.Is(err, store.ErrBusy) {
		t.Errorf("Decide under a held write lock: err = %v, want ErrBusy", err)
	}
	// Only SQLite's share of the timeout applies to a writer that ignores the lock file.
	if waited < 30*time.Millisecond || waited > 5*time.Second {
		t.Errorf("waited %v for SQLite's 37ms share of a 150ms busy timeout", waited)
	}
	// Readers are not blocked by a writer (WAL).
	if _, err := s.LiveRun(bg, "cc:busy"); err != nil {
		t.Errorf("read during a write lock: %v", err)
	}
	if _, err := conn.ExecContext(bg, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := storetest.Decide(bg, s, "cc:busy", "toolu_busy"); err != nil {
		t.Errorf("after the lock is released: %v", err)
	}
	if r, _ := s.LiveRun(bg, "cc:busy"); r == nil || r.Iterations != 1 {
		t.Errorf("run after busy failure and retry: %+v", r)
	}
}

func TestContextCancelled(t *testing.T) {
	s, _ := openTemp(t, Options{})
	storetest.Create(t, s, "cc:ctx")
	ctx, cancel := context.WithCancel(bg)
	cancel()
	if _, _, err := storetest.Decide(ctx, s, "cc:ctx", "toolu_c"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: err = %v, want context.Canceled", err)
	}
	if r, _ := s.LiveRun(bg, "cc:ctx"); r.Iterations != 0 {
		t.Errorf("cancelled decide counted: %+v", r)
	}
}

// decideWorker is one helper process of TestManyProcesses: it opens the
// store like a hook (MustExist, ExpectID) and decides N calls, each twice
// (the second must replay), on one session, opening the store afresh for
// every call and closing it again.
func decideWorker() error {
	path, id, key := os.Getenv("SW_PATH"), os.Getenv("SW_ID"), os.Getenv("SW_KEY")
	n, err := strconv.Atoi(os.Getenv("SW_N"))
	if err != nil {
		return err
	}
	worker := os.Getenv("SW_WORKER")
	for i := 0; i < n; i++ {
		// Each call opens the store afresh, as a hook process does. The
		// test is about queueing and exact counts, not latency: a generous
		// busy timeout keeps a loaded machine (16 processes on two cores)
		// from turning a slow writer into a failure. TestBusyTimeout covers
		// the timeout itself.
		s, err := Open(bg, path, Options{MustExist: true, ExpectID: id, BusyTimeout: 30 * time.Second})
		if err != nil {
			return err
		}
		tid := fmt.Sprintf("toolu_%s_%d", worker, i)
		_, rep, err := storetest.Decide(bg, s, key, tid)
		if err == nil && rep {
			err = fmt.Errorf("%s: first decide was a replay", tid)
		}
		if err == nil {
			_, rep, err = storetest.Decide(bg, s, key, tid)
			if err == nil && !rep {
				err = fmt.Errorf("%s: retry was counted again", tid)
			}
		}
		if cerr := s.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func TestManyProcesses(t *testing.T) {
	const procs, per = 16, 40
	s, path := openTemp(t, Options{})
	run := storetest.Create(t, s, "cc:many")
	cmds := make([]*exec.Cmd, procs)
	outs := make([]*bytes.Buffer, procs)
	for i := range cmds {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"=decide", "SW_PATH="+path, "SW_ID="+s.StoreID(),
			"SW_KEY=cc:many", "SW_N="+strconv.Itoa(per), "SW_WORKER="+strconv.Itoa(i))
		outs[i] = new(bytes.Buffer)
		cmd.Stdout, cmd.Stderr = outs[i], outs[i]
		cmds[i] = cmd
	}
	start := time.Now()
	for _, c := range cmds {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	failed := 0
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			failed++
			t.Errorf("worker %d: %v\n%s", i, err, outs[i])
		}
	}
	t.Logf("%d processes x %d calls (each decided twice) in %v", procs, per, time.Since(start))
	if failed > 0 {
		t.FailNow()
	}
	got, err := s.Run(bg, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Iterations != procs*per || got.Revision != procs*per+1 {
		t.Errorf("iterations %d revision %d; want %d and %d", got.Iterations, got.Revision, procs*per, procs*per+1)
	}
	evs, err := s.Events(bg, store.EventFilter{RunID: run.ID, Kinds: []store.EventKind{store.KindDecision}})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != procs*per {
		t.Errorf("decision events = %d, want %d", len(evs), procs*per)
	}
	seen := map[string]bool{}
	for _, e := range evs {
		if seen[e.ToolUseID] {
			t.Errorf("tool_use_id %s decided twice", e.ToolUseID)
		}
		seen[e.ToolUseID] = true
	}
	calls, err := s.Calls(bg, run.ID)
	if err != nil || len(calls) != procs*per {
		t.Errorf("call records = %d, %v; want %d", len(calls), err, procs*per)
	}
	st, err := s.VerifyChain(bg)
	if err != nil || st.Events != procs*per {
		t.Errorf("VerifyChain = %+v, %v", st, err)
	}
}

func TestConcurrentCreate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new", "state.db")
	const n = 6
	ids := make(chan string, n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Open(bg, path, Options{BusyTimeout: 10 * time.Second})
			if err != nil {
				errs <- err
				return
			}
			ids <- s.StoreID()
			s.Close()
		}()
	}
	wg.Wait()
	close(ids)
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	first := ""
	for id := range ids {
		if first == "" {
			first = id
		}
		if id != first {
			t.Errorf("concurrent creators got different store ids: %s and %s", first, id)
		}
	}
	db := rawDB(t, path)
	var n1 int
	if err := db.QueryRow("SELECT count(*) FROM meta WHERE key = 'store_id'").Scan(&n1); err != nil || n1 != 1 {
		t.Errorf("store_id rows = %d, %v", n1, err)
	}
}

func TestBusyBehindAnotherWriter(t *testing.T) {
	a, path := openTemp(t, Options{})
	storetest.Create(t, a, "cc:w")
	b, err := Open(bg, path, Options{MustExist: true, BusyTimeout: 150 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	inside, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- a.Update(bg, "cc:w", func(tx store.Tx) error {
			close(inside)
			<-release
			r := tx.Run()
			r.Iterations = 10
			return tx.Put(r)
		})
	}()
	<-inside
	start := time.Now()
	_, _, err = storetest.Decide(bg, b, "cc:w", "toolu_w")
	if !errors.Is(err, store.ErrBusy) {
		t.Errorf("Decide behind a writer: err = %v, want ErrBusy", err)
	}
	if w := time.Since(start); w < 100*time.Millisecond || w > 5*time.Second {
		t.Errorf("waited %v for a 150ms busy timeout", w)
	}
	// A cancelled context stops the wait early.
	ctx, cancel := context.WithTimeout(bg, 20*time.Millisecond)
	defer cancel()
	if _, _, err := storetest.Decide(ctx, b, "cc:w", "toolu_w"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Decide with an expiring context: err = %v, want DeadlineExceeded", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Once the writer is done the queued one goes through on top of its write.
	if _, _, err := storetest.Decide(bg, b, "cc:w", "toolu_w"); err != nil {
		t.Fatal(err)
	}
	if r, _ := b.LiveRun(bg, "cc:w"); r == nil || r.Iterations != 11 || r.Revision != 3 {
		t.Errorf("run = %+v; want 11 iterations at revision 3", r)
	}
}

// A hook process killed right after its commit (no Close, no checkpoint)
// loses nothing: the transaction is in the WAL, and the next process
// recovers it.
func TestProcessExitWithoutClose(t *testing.T) {
	s, path := openTemp(t, Options{})
	run := storetest.Create(t, s, "cc:bench")
	id := s.StoreID()
	s.Close()
	for i, closeIt := range []string{"", "", "1", ""} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"=hook", "SW_PATH="+path, "SW_ID="+id,
			"SW_TOOL_USE=toolu_exit_"+strconv.Itoa(i), "SW_CLOSE="+closeIt)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("hook %d: %v: %s", i, err, out)
		}
	}
	s2, err := Open(bg, path, Options{MustExist: true, ExpectID: id})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	got, err := s2.Run(bg, run.ID)
	if err != nil || got.Iterations != 4 || got.Revision != 5 {
		t.Fatalf("run after 4 hook processes = %+v, %v", got, err)
	}
	if st, err := s2.VerifyChain(bg); err != nil || st.Events != 4 {
		t.Errorf("VerifyChain = %+v, %v", st, err)
	}
}

// TestOneShotProcesses: hook-like processes that open the store OneShot,
// decide and close leave the WAL to the next one (no checkpoint at close),
// yet the WAL stays bounded and nothing is lost.
func TestOneShotProcesses(t *testing.T) {
	s, path := openTemp(t, Options{})
	run := storetest.Create(t, s, "cc:bench")
	id := s.StoreID()
	s.Close()
	const n = 80
	maxWAL := int64(0)
	for i := 0; i < n; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"=hook", "SW_PATH="+path, "SW_ID="+id,
			"SW_TOOL_USE=toolu_os_"+strconv.Itoa(i), "SW_CLOSE=1", "SW_ONESHOT=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("hook %d: %v: %s", i, err, out)
		}
		fi, err := os.Stat(path + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		maxWAL = max(maxWAL, fi.Size())
	}
	// One decision writes a handful of pages: the WAL never holds much
	// more than the bound before a oneShot writer truncates it.
	if maxWAL > walTruncateBytes+64<<10 {
		t.Errorf("the WAL grew to %d bytes over %d oneShot processes (bound %d)", maxWAL, n, walTruncateBytes)
	}
	s2, err := Open(bg, path, Options{MustExist: true, ExpectID: id})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	got, err := s2.Run(bg, run.ID)
	if err != nil || got.Iterations != n {
		t.Fatalf("run after %d oneShot processes = %+v, %v", n, got, err)
	}
	if st, err := s2.VerifyChain(bg); err != nil || st.Events != n {
		t.Errorf("VerifyChain = %+v, %v", st, err)
	}
}

// TestMigrateGlobalChainStore: a store written by the schema-1 binary (one
// global hash chain, pruned once) opens under schema 2: the old events are
// verified as the legacy chain, new ones go to per-run chains, and
// tampering with either is caught.
func TestMigrateGlobalChainStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	db := rawDB(t, path)
	init, err := migrationFS.ReadFile("migrations/0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA journal_mode=WAL; " + string(init) +
		"; INSERT INTO meta (key, value) VALUES ('store_id', 'st_old'), ('created_at', 'then'); PRAGMA user_version = 1"); err != nil {
		t.Fatal(err)
	}
	snap := []byte(`{"id":"tdd","initial":"planning","states":{"planning":{}}}`)
	if _, err := db.Exec(`INSERT INTO runs (id, session_key, workflow_id, snapshot, snapshot_digest, state, status, revision,
		created_at, updated_at) VALUES ('run_old', 'cc:old', 'tdd', ?, ?, 'planning', 'active', 1, 1, 1)`,
		snap, store.InputDigest(snap)); err != nil {
		t.Fatal(err)
	}
	// Six events of the global chain over two sessions; the first two
	// pruned (anchored at seq 2) as the old Prune did.
	var old []store.Event
	prev := ""
	for i := 1; i <= 6; i++ {
		e := store.Event{Seq: int64(i), RunID: "run_old", SessionKey: "cc:old", Time: time.Unix(int64(i), 0).UTC(),
			Kind: store.KindDecision, Tool: "Read", Decision: "allow", ToolUseID: fmt.Sprintf("old%d", i), PrevHash: prev}
		if i%2 == 0 {
			e.RunID, e.SessionKey = "", "cc:dormant"
		}
		e.Hash = store.HashEvent(&e)
		prev = e.Hash
		old = append(old, e)
		if i <= 2 {
			continue
		}
		if _, err := db.Exec(`INSERT INTO events (seq, run_id, session_key, time, kind, tool, decision, tool_use_id, prev_hash, hash)
			VALUES (?,?,?,?,?,?,?,?,?,?)`, e.Seq, e.RunID, e.SessionKey, e.Time.UnixNano(), string(e.Kind), e.Tool, e.Decision,
			e.ToolUseID, e.PrevHash, e.Hash); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec("INSERT INTO meta (key, value) VALUES ('anchor_seq', '2'), ('anchor_hash', ?)", old[1].Hash); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s, err := Open(bg, path, Options{MustExist: true, ExpectID: "st_old"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st, err := s.VerifyChain(bg)
	if err != nil || st.Legacy != 4 || st.Events != 4 || st.AnchorSeq != 2 || st.Chains != 1 {
		t.Fatalf("VerifyChain of the migrated store = %+v, %v; want the 4 kept events as the legacy chain", st, err)
	}
	// New decisions chain per run; Seq carries on after the old log.
	if _, _, err := storetest.Decide(bg, s, "cc:old", "new1"); err != nil {
		t.Fatal(err)
	}
	evs, err := s.Events(bg, store.EventFilter{ToolUseID: "new1"})
	if err != nil || len(evs) != 1 || evs[0].Seq != 7 || evs[0].Chain != "run_old" || evs[0].ChainSeq != 1 || evs[0].PrevHash != "" {
		t.Fatalf("the first new event = %+v, %v", evs, err)
	}
	// The run's history spans both: its legacy events and its own chain.
	if evs, err := s.Events(bg, store.EventFilter{RunID: "run_old"}); err != nil || len(evs) == 0 || evs[len(evs)-1].ToolUseID != "new1" || evs[0].Chain != "" {
		t.Errorf("Events of the migrated run = %+v, %v", evs, err)
	}
	// A session's history finds its legacy events in and outside runs too.
	for key, want := range map[string][]int64{"cc:old": {3, 5, 7}, "cc:dormant": {4, 6}} {
		var got []int64
		evs, err := s.Events(bg, store.EventFilter{SessionKey: key})
		for _, e := range evs {
			got = append(got, e.Seq)
		}
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("Events of session %s = %v, %v; want %v", key, got, err, want)
		}
	}
	if cs, err := s.Calls(bg, "run_old"); err != nil || len(cs) != 1 || cs[0].ToolUseID != "new1" {
		t.Errorf("Calls of the migrated run = %+v, %v", cs, err)
	}
	st, err = s.VerifyChain(bg)
	if err != nil || st.Legacy != 4 || st.Events != 5 || st.Chains != 2 {
		t.Errorf("VerifyChain after a new decision = %+v, %v", st, err)
	}
	var buf bytes.Buffer
	if err := s.ExportJSONL(bg, &buf); err != nil {
		t.Fatal(err)
	}
	if st, err := store.VerifyJSONL(&buf); err != nil || st.Legacy != 4 || st.Events != 5 {
		t.Errorf("VerifyJSONL = %+v, %v", st, err)
	}
	// Pruning now cuts the legacy chain and the run's chain alike.
	if p, err := s.Prune(bg, store.Retention{Keep: 2}); err != nil || p.Events != 3 || p.AnchorSeq != 5 {
		t.Errorf("Prune = %+v, %v", p, err)
	}
	if _, err := s.VerifyChain(bg); err != nil {
		t.Errorf("VerifyChain after pruning into the legacy chain: %v", err)
	}
	// Tampering with a legacy event is still caught.
	raw := rawDB(t, path)
	if _, err := raw.Exec("DROP TRIGGER events_no_update; UPDATE events SET decision = 'deny' WHERE seq = 6"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.VerifyChain(bg); !errors.Is(err, store.ErrChainBroken) || !strings.Contains(err.Error(), "seq 6 (legacy chain)") {
		t.Errorf("VerifyChain after editing a legacy event: %v", err)
	}
}

// TestSchemaChangedUnderneath: a store whose schema another binary moved on
// while this one had it open refuses to write instead of writing the old
// way into the new schema.
func TestSchemaChangedUnderneath(t *testing.T) {
	s, path := openTemp(t, Options{})
	storetest.Create(t, s, "cc:v")
	db := rawDB(t, path)
	if _, err := db.Exec("PRAGMA user_version = " + strconv.Itoa(SchemaVersion()+1)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := storetest.Decide(bg, s, "cc:v", "v1"); !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), "restart") {
		t.Errorf("Decide after the schema moved on: %v, want ErrCorrupt", err)
	}
}

// TestVerifyCatchesACutChain: with its triggers dropped, removing a
// chain's newest events passes the hash links but not the stored heads.
func TestVerifyCatchesACutChain(t *testing.T) {
	s, path := openTemp(t, Options{})
	r := storetest.Create(t, s, "cc:cut")
	for i := 0; i < 4; i++ {
		if _, _, err := storetest.Decide(bg, s, "cc:cut", fmt.Sprintf("c%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	db := rawDB(t, path)
	if _, err := db.Exec("DROP TRIGGER events_prune_only; DELETE FROM events WHERE chain_seq = 4"); err != nil {
		t.Fatal(err)
	}
	_, err := s.VerifyChain(bg)
	if !errors.Is(err, store.ErrChainBroken) || !strings.Contains(err.Error(), r.ID+" ends at #3") {
		t.Errorf("VerifyChain of a cut chain: %v", err)
	}
}

// TestWriterForgetsWhatOthersWrote: a writer keeps the next Seq and the
// chain heads between its batches only while no other connection commits.
// Two handles on one file (as two processes would) and a prune of the
// store's own take turns on the same sessions; every event keeps a Seq of
// its own and every chain verifies.
func TestWriterForgetsWhatOthersWrote(t *testing.T) {
	a, path := openTemp(t, Options{})
	b, err := Open(bg, path, Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	storetest.Create(t, a, "cc:one")
	storetest.Create(t, b, "cc:two")
	n := 0
	for i := 0; i < 6; i++ {
		for _, s := range []*Store{a, b} {
			for _, key := range []string{"cc:one", "cc:two"} {
				n++
				if _, _, err := storetest.Decide(bg, s, key, fmt.Sprintf("toolu_%d", n)); err != nil {
					t.Fatal(err)
				}
			}
		}
		if i == 3 {
			if _, err := a.Prune(bg, store.Retention{Keep: 5}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, s := range []*Store{a, b} {
		if _, err := s.VerifyChain(bg); err != nil {
			t.Fatalf("VerifyChain: %v", err)
		}
	}
	evs, err := a.Events(bg, store.EventFilter{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for _, e := range evs {
		if seen[e.Seq] {
			t.Fatalf("Seq %d twice", e.Seq)
		}
		seen[e.Seq] = true
	}
	for _, key := range []string{"cc:one", "cc:two"} {
		if r, _ := b.LiveRun(bg, key); r == nil || r.Iterations != 12 {
			t.Errorf("%s: run %+v, want 12 iterations", key, r)
		}
	}
}
