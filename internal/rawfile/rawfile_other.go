//go:build !unix

package rawfile

import "os"

// Read reads the file at path with os.ReadFile (limit and hint are not
// used here).
func Read(path string, limit, hint int) ([]byte, error) { return os.ReadFile(path) }
