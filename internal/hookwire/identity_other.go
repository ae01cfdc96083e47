//go:build !unix

package hookwire

import "os"

// StatIdentity identifies the file at path (following links).
func StatIdentity(path string) (Identity, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Identity{}, err
	}
	return Identity{Size: uint64(fi.Size()), Mtime: uint64(fi.ModTime().UnixNano())}, nil
}
