package backend

import (
	"io/fs"
	"sort"
)

// Migrations lists a backend's embedded migrations/NNNN_*.sql files in
// order; the schema version is their number.
func Migrations(fsys fs.FS) ([]string, error) {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	return names, nil
}
