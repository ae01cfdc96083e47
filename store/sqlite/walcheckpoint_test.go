package sqlite

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	stdruntime "runtime"
	"sync"
	"testing"
	"time"

	"github.com/statewright-go/statewright/store/storetest"
)

// walSalt reads the WAL header's salt, which changes whenever the WAL
// restarts from its beginning (nil while the WAL is empty).
func walSalt(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 32 {
		return nil
	}
	return bytes.Clone(b[16:24])
}

// TestLongLivedWALRestarts: a long-lived store whose writer commits batch
// after batch leaves the checkpoints to the background, yet its WAL still
// restarts from the beginning over and over (the writer finishes a
// checkpoint between two batches when asked), and nothing is lost or
// doubled meanwhile.
func TestLongLivedWALRestarts(t *testing.T) {
	every, restart, finish := walCheckpointEvery, walRestartFrames, walFinishFrames
	walCheckpointEvery, walRestartFrames, walFinishFrames = 5*time.Millisecond, 64, 16
	t.Cleanup(func() { walCheckpointEvery, walRestartFrames, walFinishFrames = every, restart, finish })

	s, path := openTemp(t, Options{})
	const sessions, each, maxExtra = 8, 100, 3000
	for i := 0; i < sessions; i++ {
		storetest.Create(t, s, fmt.Sprintf("cc:%d", i))
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		restarts int
		salt     = walSalt(t, path)
		errs     = make(chan error, sessions)
	)
	for i := 0; i < sessions; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprintf("cc:%d", i)
			for j := 0; j < each; j++ {
				if _, replayed, err := storetest.Decide(bg, s, key, fmt.Sprintf("toolu_%d_%d", i, j)); err != nil || replayed {
					errs <- fmt.Errorf("%s call %d: replayed %v, %v", key, j, replayed, err)
					return
				}
				if i == 0 {
					mu.Lock()
					if now := walSalt(t, path); now != nil && !bytes.Equal(now, salt) {
						restarts++
						salt = now
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// A loaded machine may starve the checkpointer during the concurrent
	// part: session 0 goes on alone until the WAL has started over twice
	// (or plainly never does).
	extra := 0
	for ; restarts < 2 && extra < maxExtra; extra++ {
		if _, replayed, err := storetest.Decide(bg, s, "cc:0", fmt.Sprintf("toolu_extra_%d", extra)); err != nil || replayed {
			t.Fatalf("cc:0 extra call %d: replayed %v, %v", extra, replayed, err)
		}
		if now := walSalt(t, path); now != nil && !bytes.Equal(now, salt) {
			restarts++
			salt = now
		}
	}
	if restarts < 2 {
		t.Errorf("the WAL restarted %d times over %d decisions (want it to start over again and again)", restarts, sessions*each+extra)
	}
	for i := 0; i < sessions; i++ {
		want := each
		if i == 0 {
			want += extra
		}
		if r, err := s.LiveRun(bg, fmt.Sprintf("cc:%d", i)); err != nil || r.Iterations != int64(want) {
			t.Errorf("session %d: run %+v, %v; want %d iterations", i, r, err, want)
		}
	}
	if st, err := s.VerifyChain(bg); err != nil || st.Events != int64(sessions*each+extra) {
		t.Errorf("VerifyChain = %+v, %v; want %d events", st, err, sessions*each+extra)
	}
	// The writer's connection turned SQLite's own checkpoints off.
	var auto int
	if err := s.writer().conn.QueryRowContext(bg, "PRAGMA wal_autocheckpoint").Scan(&auto); err != nil || auto != 0 {
		t.Errorf("the writer's wal_autocheckpoint = %d, %v; want 0", auto, err)
	}
}

// TestWriterFinishesACheckpoint: asked to (walCheckpointer.finish), the
// writer copies the WAL into the database between two batches, so that
// its next transaction starts the WAL over; without the background
// checkpointer and SQLite's automatic checkpoints nothing else would.
func TestWriterFinishesACheckpoint(t *testing.T) {
	every := walCheckpointEvery
	walCheckpointEvery = time.Hour // the background checkpointer stays out of the way
	t.Cleanup(func() { walCheckpointEvery = every })

	s, path := openTemp(t, Options{})
	storetest.Create(t, s, "cc:one")
	for i := 0; i < 20; i++ {
		if _, _, err := storetest.Decide(bg, s, "cc:one", fmt.Sprintf("toolu_%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	salt := walSalt(t, path)
	if _, _, err := storetest.Decide(bg, s, "cc:one", "toolu_same"); err != nil {
		t.Fatal(err)
	}
	if now := walSalt(t, path); !bytes.Equal(now, salt) {
		t.Fatalf("the WAL restarted without a checkpoint")
	}
	s.writer().ckpt.finish.Store(true)
	// This batch is answered, then the writer checkpoints; the next one
	// starts the WAL over.
	for i := 0; i < 2; i++ {
		if _, _, err := storetest.Decide(bg, s, "cc:one", fmt.Sprintf("toolu_after_%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if now := walSalt(t, path); bytes.Equal(now, salt) {
		t.Errorf("the WAL did not restart after the writer finished a checkpoint")
	}
	if r, err := s.LiveRun(bg, "cc:one"); err != nil || r.Iterations != 23 {
		t.Errorf("run %+v, %v; want 23 iterations", r, err)
	}
}

// openDescriptors counts this process's file descriptors open on path,
// deleted or not (Linux: /proc/self/fd).
func openDescriptors(t *testing.T, path string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("this test reads /proc/self/fd: %v", err)
	}
	n := 0
	for _, e := range ents {
		// A file deleted while open (the WAL at the last close) reads
		// as "PATH (deleted)".
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && (target == path || target == path+" (deleted)") {
			n++
		}
	}
	return n
}

// TestCheckpointerDatabaseFile: a long-lived store's checkpointer holds a
// descriptor of the database file of its own (it flushes the file before
// the writer finishes a checkpoint), and the store's Close closes it, after
// the connections: a descriptor left open would be a leak, one closed
// before them would drop SQLite's POSIX locks on the file.
func TestCheckpointerDatabaseFile(t *testing.T) {
	if stdruntime.GOOS != "linux" {
		t.Skip("counts descriptors in /proc/self/fd")
	}
	s, path := openResolved(t)
	storetest.Create(t, s, "cc:one")
	if _, _, err := storetest.Decide(bg, s, "cc:one", "toolu_1"); err != nil {
		t.Fatal(err)
	}
	ck := s.writer().ckpt
	if ck == nil || ck.dbFile == nil {
		t.Fatalf("the long-lived writer's checkpointer has no database file open")
	}
	withStore := openDescriptors(t, path)
	if withStore < 2 { // the writer's connection and the checkpointer's file at least
		t.Fatalf("%d descriptors open on %s while the store is open; want the connections' and the checkpointer's", withStore, path)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := openDescriptors(t, path); n != 0 {
		t.Errorf("%d descriptors still open on %s after Close; want 0", n, path)
	}
	if ck.dbFile != nil {
		t.Errorf("the checkpointer's database file is still set after Close")
	}
}

// TestCheckpointerWALWriteback: where the system can start a writeback
// without waiting (Linux), a long-lived store's checkpointer starts the
// WAL's after commits, on a descriptor of the WAL of its own, which the
// store's Close closes after the connections; nothing committed meanwhile
// is lost or doubled.
func TestCheckpointerWALWriteback(t *testing.T) {
	if !writebackSupported {
		t.Skip("this system starts no writeback of its own: the checkpoints' fsyncs write the WAL")
	}
	s, path := openResolved(t)
	run := storetest.Create(t, s, "cc:one")
	ck := s.writer().ckpt
	if ck == nil || ck.dbFile == nil {
		t.Fatal("the long-lived writer has no checkpointer, or it has no database file open")
	}
	if !writebackHelps(ck.dbFile) {
		s.Close()
		t.Skip("the test directory is on a file system where the store starts no writeback (not ext4, XFS or tmpfs)")
	}
	// Decide until a writeback started (the loop runs beside the writer)
	// and at least 40 times.
	decided := 0
	deadline := time.Now().Add(30 * time.Second)
	for decided < 40 || ck.writebacks.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no writeback of the WAL started after %d commits", decided)
		}
		if _, _, err := storetest.Decide(bg, s, "cc:one", fmt.Sprintf("toolu_%d", decided)); err != nil {
			t.Fatal(err)
		}
		decided++
		if decided >= 40 {
			time.Sleep(time.Millisecond)
		}
	}
	if calls, err := s.Calls(bg, run.ID); err != nil || len(calls) != decided {
		t.Errorf("Calls = %d records, %v; want %d", len(calls), err, decided)
	}
	if r, err := s.LiveRun(bg, "cc:one"); err != nil || r.Iterations != int64(decided) {
		t.Errorf("run %+v, %v; want %d iterations", r, err, decided)
	}
	if _, err := s.VerifyChain(bg); err != nil {
		t.Errorf("VerifyChain: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if d := openDescriptors(t, path+"-wal"); d != 0 {
		t.Errorf("%d descriptors still open on the WAL after Close; want 0", d)
	}
	if ck.walFile != nil {
		t.Errorf("the checkpointer's WAL is still open after Close")
	}
}

// openResolved opens a long-lived store in a fresh directory, named by its
// path with every link resolved (as /proc/self/fd names the descriptors).
func openResolved(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	if p, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
		path = filepath.Join(p, "state.db")
	}
	s, err := Open(bg, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s, path
}
