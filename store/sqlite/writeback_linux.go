package sqlite

import (
	"os"

	"golang.org/x/sys/unix"
)

// writebackSupported: this system can start a file's writeback without
// waiting for it.
const writebackSupported = true

// startWriteback starts writing f's dirty pages to the disk and returns
// without waiting for them (sync_file_range with SYNC_FILE_RANGE_WRITE).
// It makes nothing durable: a later fsync still waits for the pages and
// commits the file's metadata. Errors are ignored: the fsync reports them.
func startWriteback(f *os.File) {
	unix.SyncFileRange(int(f.Fd()), 0, 0, unix.SYNC_FILE_RANGE_WRITE)
}

// writebackHelps reports whether starting f's writeback early is known
// not to hold up its next writes: on ext4 and XFS a page being written
// out can be written again at once (tmpfs writes nothing out). A file
// system that keeps pages stable while they are written out (btrfs, for
// its checksums) would make the writer wait for the page of the WAL it
// appends to.
func writebackHelps(f *os.File) bool {
	var st unix.Statfs_t
	if err := unix.Fstatfs(int(f.Fd()), &st); err != nil {
		return false
	}
	switch st.Type {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.TMPFS_MAGIC:
		return true
	}
	return false
}
