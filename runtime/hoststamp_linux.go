package runtime

import (
	"errors"
	"io/fs"
	"syscall"
)

// fileStamp is what a path is, as far as DiscoverHost's answer depends
// on it: missing (and why), or the file (device, inode, type, mode,
// owner), and for a path whose content or permissions were read, its
// size and inode change time.
type fileStamp struct {
	err            string
	dev, ino       uint64
	mode, uid, gid uint32
	content        bool
	size, ctime    int64
}

// stampOf returns fi's stamp (or err's); ok is false when it cannot be
// told.
func stampOf(fi fs.FileInfo, err error, content bool) (fileStamp, bool) {
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return fileStamp{err: "missing", content: content}, true
		}
		return fileStamp{err: err.Error(), content: content}, true
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileStamp{}, false
	}
	return stampOfSys(st, content), true
}

func stampOfSys(st *syscall.Stat_t, content bool) fileStamp {
	s := fileStamp{dev: uint64(st.Dev), ino: uint64(st.Ino), mode: uint32(st.Mode), uid: st.Uid, gid: st.Gid, content: content}
	if content {
		s.size, s.ctime = int64(st.Size), st.Ctim.Nano()
	}
	return s
}

// lstatStamp is stampOf(os.Lstat(p)) without what os.Lstat allocates (a
// FileInfo, the name, the error): HostCache checks every noted path on
// every hook. The error, when there is one, reads as os.Lstat's.
func lstatStamp(p string, content bool) (fileStamp, bool) {
	var st syscall.Stat_t
	for {
		err := syscall.Lstat(p, &st)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return stampOf(nil, &fs.PathError{Op: "lstat", Path: p, Err: err}, content)
		}
		return stampOfSys(&st, content), true
	}
}
