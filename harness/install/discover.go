package install

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// storeFiles are the files, relative to a project (or the home directory,
// for a user-scope install), in which `statewright init` writes the store's
// location, in the order FindStore reads them.
var storeFiles = []string{
	filepath.Join(".claude", "settings.local.json"),
	filepath.Join(".claude", "settings.json"),
	filepath.Join(".codex", "config.toml"),
	filepath.Join(".opencode", "plugins", "statewright.ts"),
	filepath.Join(".pi", "extensions", "statewright.ts"),
	filepath.Join(".cursor", "hooks.json"),
}

// storeArg matches the store a hook command or a plugin's configuration
// names: --store 'PATH' (a shell command line, also inside JSON or TOML
// strings) or "--store", "PATH" (an argv in JSON or TOML).
var storeArg = regexp.MustCompile(`--store(?:'|")?\s*,?\s*(?:'|")([^'"]+)(?:'|")`)

// FindStore returns the store of the statewright install that governs dir:
// in dir and each of its parents, the store named by the first hook or
// plugin file that init wrote there (storeFiles), else an existing
// .statewright/state.db. from is the file that named it. Both are "" when
// no install is found. Commands use it when neither --store nor
// $STATEWRIGHT_STORE names a store, so that inside an installed project
// they use the store its hooks use.
func FindStore(dir string) (loc, from string) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", ""
	}
	for {
		for _, f := range storeFiles {
			file := filepath.Join(dir, f)
			b, err := os.ReadFile(file)
			if err != nil || !strings.Contains(string(b), "statewright") {
				continue
			}
			if m := storeArg.FindSubmatch(b); m != nil && filepath.IsAbs(string(m[1])) {
				return string(m[1]), file
			}
		}
		db := filepath.Join(dir, ".statewright", "state.db")
		if fi, err := os.Stat(db); err == nil && fi.Mode().IsRegular() {
			return db, db
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", ""
		}
		dir = parent
	}
}
