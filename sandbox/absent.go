package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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
	b, err := readSmall(filepath.Join(c.Dir, absentFile))
	if err != nil {
		return nil
	}
	var absent []string
	if json.Unmarshal(b, &absent) != nil {
		return nil
	}
	var out []string
	for _, p := range absent {
		if _, err := os.Lstat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// Sweep moves out of the person's tree what the call's command planted
// (Planted) into the session's quarantine (Quarantine) and returns what
// to tell the agent ("" when nothing was planted). The launcher calls it
// when the command ends, whichever way it ended, before the harness sees
// the result; the hook's PostToolUse calls it again, as a second net.
func (c Call) Sweep() string {
	planted := c.Planted()
	if len(planted) == 0 {
		return ""
	}
	moved, failed := quarantineInto(filepath.Join(filepath.Dir(filepath.Dir(c.Dir)), "quarantine", filepath.Base(c.Dir)), planted)
	return QuarantineMessage(planted, moved, failed)
}

// SweepSession sweeps (Sweep) every call of the session whose directory is
// still there: calls whose end the harness never reported and whose
// launcher could not sweep (killed outright). The session's sandbox must
// be stopped first, so that nothing of those calls still runs. It returns
// what each sweep said.
func SweepSession(sessionDir string) []string {
	ents, err := os.ReadDir(filepath.Join(sessionDir, "calls"))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		d := filepath.Join(sessionDir, "calls", e.Name())
		if msg := (Call{Dir: d, RW: filepath.Join(d, "rw")}).Sweep(); msg != "" {
			out = append(out, msg)
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
	return quarantineInto(filepath.Join(sessionDir, "quarantine", hex.EncodeToString(h[:12])), paths)
}

func quarantineInto(base string, paths []string) (moved map[string]string, failed []string) {
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

// QuarantineMessage says what Quarantine did with the planted paths.
func QuarantineMessage(planted []string, moved map[string]string, failed []string) string {
	var parts []string
	for _, p := range planted {
		switch dst, ok := moved[p]; {
		case ok && dst != "":
			parts = append(parts, p+" (moved to "+dst+")")
		case ok:
			parts = append(parts, p+" (removed)")
		}
	}
	msg := "[statewright] The command created " + strings.Join(parts, ", ") +
		": names of the law (git configuration and hooks, harness settings, rc files, PATH directories) that did not exist, so the OS sandbox could not keep them read-only. They make git, your shell or your tools run code later, outside every wall, so statewright took them out. A person creates them, outside the agent."
	if len(parts) == 0 {
		msg = "[statewright]"
	}
	if len(failed) > 0 {
		msg += " Could not move or remove " + strings.Join(failed, ", ") + ": a person must look at them before running git or a shell here."
	}
	return msg
}
