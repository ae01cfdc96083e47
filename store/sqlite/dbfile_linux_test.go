package sqlite

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/statewright-go/statewright/store/storetest"
)

// sqliteShared is the byte range of the database file on which SQLite's
// unix VFS takes its connections' shared locks (SHARED_FIRST,
// SHARED_SIZE); a connection in WAL mode holds one while it is open.
const (
	sqliteSharedFirst = 0x40000000 + 2
	sqliteSharedSize  = 510
)

// sharedLocked reports whether some POSIX lock of this process (SQLite's)
// holds the shared range of the file behind probe. An open file
// description lock conflicts with a traditional record lock even of the
// same process, so F_OFD_GETLK sees the process's own locks.
func sharedLocked(t *testing.T, probe *os.File) bool {
	t.Helper()
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: sqliteSharedFirst, Len: sqliteSharedSize}
	if err := unix.FcntlFlock(probe.Fd(), unix.F_OFD_GETLK, &lk); err != nil {
		t.Fatalf("F_OFD_GETLK: %v", err)
	}
	return lk.Type != unix.F_UNLCK
}

// TestTwoStoresOneFileKeepLocks: two long-lived stores that one process has
// open on one database file each write (each with a checkpointer); closing
// one leaves the other's SQLite locks on the file in place, and the
// other's decisions go on. The descriptor the checkpointers flush the file
// with is shared and closed with the last store: closing a descriptor of a
// file releases every POSIX lock the process holds on it.
func TestTwoStoresOneFileKeepLocks(t *testing.T) {
	a, path := openResolved(t)
	storetest.Create(t, a, "cc:a")
	if _, _, err := storetest.Decide(bg, a, "cc:a", "toolu_a1"); err != nil {
		t.Fatal(err)
	}
	b, err := Open(bg, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	runB := storetest.Create(t, b, "cc:b")
	if _, _, err := storetest.Decide(bg, b, "cc:b", "toolu_b1"); err != nil {
		t.Fatal(err)
	}
	if a.writer().ckpt == nil || b.writer().ckpt == nil {
		t.Fatal("a long-lived store's writer has no checkpointer")
	}
	if a.writer().ckpt.dbFile == nil || a.writer().ckpt.dbFile != b.writer().ckpt.dbFile {
		t.Errorf("the two stores' checkpointers do not share one descriptor of the database file")
	}
	// Closed after b: closing it drops this process's locks too.
	probe, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	if !sharedLocked(t, probe) {
		t.Fatal("no shared lock on the database file while two stores have it open")
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if !sharedLocked(t, probe) {
		t.Error("closing one store released the other's locks on the database file")
	}
	if _, _, err := storetest.Decide(bg, b, "cc:b", "toolu_b2"); err != nil {
		t.Fatal(err)
	}
	if calls, err := b.Calls(bg, runB.ID); err != nil || len(calls) != 2 {
		t.Errorf("Calls = %d records, %v; want 2", len(calls), err)
	}
	if _, err := b.VerifyChain(bg); err != nil {
		t.Errorf("VerifyChain: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if n := openDescriptors(t, path); n != 1 { // the probe
		t.Errorf("%d descriptors open on %s after both stores closed; want only the test's own", n, path)
	}
}
