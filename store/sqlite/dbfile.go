package sqlite

import (
	"os"
	"slices"
	"sync"
)

// Closing any descriptor of a file releases every POSIX lock the process
// holds on it, SQLite's included (its connections' shared lock on the
// database file tells other processes that the WAL is in use). SQLite
// itself keeps its own descriptors of a file open until none of its
// connections in the process holds a lock; the checkpointer's descriptor
// of the database file (walCheckpointer.dbFile) is outside that
// bookkeeping. So the stores a process has open on one database file share
// one such descriptor (sharedFile), and it is closed only after the last of
// them, with a checkpointer or without, has closed its connections.

// sharedFiles are the database files this process's stores have open.
var sharedFiles struct {
	mu    sync.Mutex
	files []*sharedFile
}

// sharedFile is one database file as this process's stores have it open.
type sharedFile struct {
	fi     os.FileInfo // its identity, as the stores opened it
	path   string
	stores int      // the stores open on it (guarded by sharedFiles.mu)
	f      *os.File // opened by the first checkpointer (nil: not yet, or failed)
	tried  bool     // f was opened, or tried
}

// holdFile registers a store opened on the database file fi at path:
// releaseFile must follow once the store's connections are closed.
func holdFile(fi os.FileInfo, path string) *sharedFile {
	sharedFiles.mu.Lock()
	defer sharedFiles.mu.Unlock()
	for _, sf := range sharedFiles.files {
		if os.SameFile(sf.fi, fi) {
			sf.stores++
			return sf
		}
	}
	sf := &sharedFile{fi: fi, path: path, stores: 1}
	sharedFiles.files = append(sharedFiles.files, sf)
	return sf
}

// file returns the process's descriptor of the database file, opened on
// first use (nil if it cannot be opened). It stays open until releaseFile
// of the last store on the file.
func (sf *sharedFile) file() *os.File {
	sharedFiles.mu.Lock()
	defer sharedFiles.mu.Unlock()
	if !sf.tried {
		sf.tried = true
		// Read-write: on Windows flushing a file needs write access.
		if f, err := os.OpenFile(sf.path, os.O_RDWR, 0); err == nil {
			sf.f = f
		}
	}
	return sf.f
}

// releaseFile unregisters a store whose connections are all closed; the
// last store's release closes the shared descriptor.
func releaseFile(sf *sharedFile) {
	sharedFiles.mu.Lock()
	defer sharedFiles.mu.Unlock()
	if sf.stores--; sf.stores > 0 {
		return
	}
	if sf.f != nil {
		sf.f.Close()
		sf.f = nil
	}
	sharedFiles.files = slices.DeleteFunc(sharedFiles.files, func(x *sharedFile) bool { return x == sf })
}
