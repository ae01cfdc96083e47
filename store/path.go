package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// EnvStore names the environment variable that overrides the store's location.
const EnvStore = "STATEWRIGHT_STORE"

// DefaultFile is the store's file name below the state directory.
const DefaultFile = "state.db"

// ResolvePath returns the store location: flag (the --store option) when set,
// else $STATEWRIGHT_STORE, else $XDG_STATE_HOME/statewright/state.db, else
// ~/.local/state/statewright/state.db. getenv is os.Getenv when nil. A
// relative flag or variable is made absolute against the working directory;
// a PostgreSQL URL (see IsPostgresURL) is returned as it is.
func ResolvePath(flag string, getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	p := flag
	if p == "" {
		p = getenv(EnvStore)
	}
	if IsPostgresURL(p) {
		return p, nil
	}
	if p != "" {
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", fmt.Errorf("store: resolve path %q: %w", p, err)
		}
		return abs, nil
	}
	dir := getenv("XDG_STATE_HOME")
	if dir == "" || !filepath.IsAbs(dir) { // the XDG spec says to ignore relative values
		home := getenv("HOME")
		if home == "" {
			h, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("store: no store path: set %s, XDG_STATE_HOME or HOME: %w", EnvStore, err)
			}
			home = h
		}
		if home == "" {
			return "", errors.New("store: no store path: set " + EnvStore + ", XDG_STATE_HOME or HOME")
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "statewright", DefaultFile), nil
}

// IsPostgresURL reports whether a store location names a PostgreSQL store
// (a postgres:// or postgresql:// URL) rather than an SQLite file.
func IsPostgresURL(loc string) bool {
	l := strings.ToLower(loc)
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
}
