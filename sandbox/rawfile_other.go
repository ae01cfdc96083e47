//go:build !linux

package sandbox

import "os"

// readSmall reads a small file (rawfile_linux.go).
func readSmall(path string) ([]byte, error) { return os.ReadFile(path) }
