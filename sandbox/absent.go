package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Absent returns the read-only paths of p that do not exist and that a
// command under p could create, resolved: those whose nearest enclosing
// tree of the profile is writable. The sandbox cannot bind a name that
// does not exist (the bind would create it in the person's tree), so a
// command can plant one there: a .git/commondir that points git at another
// configuration (whose core.fsmonitor runs at the person's next git
// status), a .git/hooks where none was, an .mcp.json, a ~/.psqlrc in a
// project that is the home directory. PrepareCall records them with the
// call; Planted finds those that appeared, and Quarantine moves them out
// (DECISIONS 5, docs/sandbox.md "Planted names").
func Absent(p *Profile) []string {
	rw := resolveAll(p.Writable)
	ro := resolveAll(append(append([]string(nil), p.ReadOnly...), p.Hidden...))
	var out []string
	seen := map[string]bool{}
	for _, r := range p.ReadOnly {
		if r == "" || !filepath.IsAbs(r) {
			continue
		}
		if _, err := os.Lstat(r); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		real := resolveMissing(r)
		if real == "" || seen[real] {
			continue
		}
		best, writable := "/", false
		for _, t := range rw {
			if within(real, t) && len(t) > len(best) {
				best, writable = t, true
			}
		}
		for _, t := range ro {
			if within(real, t) && len(t) >= len(best) {
				best, writable = t, false
			}
		}
		if writable {
			seen[real] = true
			out = append(out, real)
		}
	}
	return out
}

// resolveMissing resolves the symlinks of p's nearest existing ancestor
// and joins the rest ("" when none resolves).
func resolveMissing(p string) string {
	p = filepath.Clean(p)
	rest := ""
	for d := p; ; d = filepath.Dir(d) {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			return filepath.Join(r, rest)
		}
		if d == filepath.Dir(d) {
			return ""
		}
		rest = filepath.Join(filepath.Base(d), rest)
	}
}

// Planted returns the paths that were absent when the call was prepared
// (Absent) and exist now: names of the law the call's command created
// where the sandbox could not bind them.
func (c Call) Planted() []string {
	cf, err := readCallFile(c.Dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, p := range cf.Absent {
		if _, err := os.Lstat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// Quarantine moves each of paths (planted by a sandboxed command: Planted)
// into sessionDir/quarantine/<call>/, mirroring its absolute path, where a
// person can look at it and nothing runs it; what cannot be moved (another
// file system) is removed. It returns where each went ("" when removed)
// and the paths it could neither move nor remove.
func Quarantine(sessionDir, id string, paths []string) (moved map[string]string, failed []string) {
	h := sha256.Sum256([]byte(id))
	base := filepath.Join(sessionDir, "quarantine", hex.EncodeToString(h[:12]))
	moved = map[string]string{}
	for _, p := range paths {
		dst := filepath.Join(base, strings.TrimPrefix(filepath.Clean(p), string(filepath.Separator)))
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err == nil {
			if err := os.Rename(p, dst); err == nil {
				moved[p] = dst
				continue
			}
		}
		if err := os.RemoveAll(p); err == nil {
			moved[p] = ""
			continue
		}
		failed = append(failed, p)
	}
	return moved, failed
}
