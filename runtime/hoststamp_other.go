//go:build !linux

package runtime

import (
	"io/fs"
	"os"
)

// fileStamp is unknown here: HostCache keeps nothing.
type fileStamp struct {
	content bool
	ctime   int64
}

func stampOf(fs.FileInfo, error, bool) (fileStamp, bool) { return fileStamp{}, false }

// lstatStamp is stampOf(os.Lstat(p)).
func lstatStamp(p string, content bool) (fileStamp, bool) {
	fi, err := os.Lstat(p)
	return stampOf(fi, err, content)
}
