package install

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// canCreate says why a store file at p could not be created (nil when it
// could): the nearest directory that exists on the way to it must be a
// directory this process may write (init --dry-run promises only a store
// the real init can make).
func canCreate(p string) error {
	dir := filepath.Dir(p)
	for {
		fi, err := os.Stat(dir)
		switch {
		case err == nil && !fi.IsDir():
			return fmt.Errorf("%s is not a directory", dir)
		case err == nil:
			if err := writable(dir); err != nil {
				return fmt.Errorf("%s is not writable: %w", dir, err)
			}
			return nil
		case !errors.Is(err, fs.ErrNotExist):
			return err
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return fmt.Errorf("no directory on the way to %s exists", p)
		}
		dir = parent
	}
}
