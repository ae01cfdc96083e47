package install

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/statewright-go/statewright/internal/hookwire"
)

// change is the planned new content of one file; nil content removes it.
type change struct {
	path     string
	old, new []byte
	exists   bool
	// mode is the mode of a new file, dirMode of the directories made
	// for it; an existing file keeps its mode.
	mode, dirMode fs.FileMode
	// project is the project directory: a removal prunes the empty
	// directories it leaves below it.
	project string
}

// Edit plans the new content of the file at path (relative to the project,
// or absolute): edit gets the file's content (nil when it does not exist)
// and returns the new content, or nil to remove the file.
func (p *Plan) Edit(path string, edit func(old []byte) ([]byte, error)) error {
	return p.EditMode(path, 0o644, 0o755, edit)
}

// EditMode is Edit for a file that must be created with mode, in
// directories created with dirMode (a credential: 0600 in 0700).
func (p *Plan) EditMode(path string, mode, dirMode fs.FileMode, edit func(old []byte) ([]byte, error)) error {
	c := &change{path: p.Path(path), mode: mode, dirMode: dirMode, project: p.Project}
	b, err := os.ReadFile(c.path)
	switch {
	case err == nil:
		c.old, c.exists = b, true
	case !errors.Is(err, fs.ErrNotExist):
		return failure{fmt.Sprintf("init: %v", err)}
	}
	if c.new, err = edit(c.old); err != nil {
		var u interface{ Usage() bool }
		var f failure
		if errors.As(err, &u) || errors.As(err, &f) {
			return err
		}
		return p.Refuse(c.path, err)
	}
	p.changes = append(p.changes, c)
	return nil
}

// ReadObject reads the JSON object file at path (absent: an empty object).
// A file that is not one JSON object is refused, never overwritten.
func (p *Plan) ReadObject(path string) (*Object, error) {
	b, err := os.ReadFile(p.Path(path))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, failure{fmt.Sprintf("init: %v", err)}
	}
	o, err := ParseObject(b)
	if err != nil {
		return nil, failure{fmt.Sprintf("init: %s is not a JSON object (%v); fix it first, init never overwrites it", p.Path(path), err)}
	}
	return o, nil
}

// WriteObject plans o as the new content of the JSON object file at path;
// an empty object removes the file.
func (p *Plan) WriteObject(path string, o *Object) error {
	return p.Edit(path, func([]byte) ([]byte, error) { return o.Render() })
}

// EditObject reads the JSON object file at path, edits it and plans the
// result (ReadObject, then WriteObject).
func (p *Plan) EditObject(path string, edit func(o *Object) error) error {
	return p.EditObjectMode(path, 0o644, edit)
}

// EditObjectMode is EditObject for a file created with mode when missing
// (an existing file keeps its own).
func (p *Plan) EditObjectMode(path string, mode fs.FileMode, edit func(o *Object) error) error {
	o, err := p.ReadObject(path)
	if err != nil {
		return err
	}
	if err := edit(o); err != nil {
		var u interface{ Usage() bool }
		var f failure
		if errors.As(err, &u) || errors.As(err, &f) {
			return err
		}
		return p.Refuse(p.Path(path), err)
	}
	return p.EditMode(path, mode, 0o755, func([]byte) ([]byte, error) { return o.Render() })
}

// gitIgnoreHeader introduces the lines init adds to a project's .gitignore.
const gitIgnoreHeader = "# statewright: machine-local files (statewright init)"

// GitIgnore adds patterns to the project's .gitignore when the project is a
// git work tree (it has .git) and the file does not list them already:
// files that hold this machine's paths and the store, which a repository
// must not share. Nothing is removed at --uninstall (the store stays).
func (p *Plan) GitIgnore(patterns ...string) error {
	if len(patterns) == 0 {
		return nil
	}
	if _, err := os.Lstat(filepath.Join(p.Project, ".git")); err != nil {
		return nil
	}
	return p.Edit(".gitignore", func(old []byte) ([]byte, error) {
		have := map[string]bool{}
		for _, l := range strings.Split(string(old), "\n") {
			l = strings.TrimSpace(l)
			have[l], have[strings.TrimPrefix(l, "/")] = true, true
		}
		var add []string
		for _, pat := range patterns {
			if !have[pat] && !have[strings.TrimSuffix(pat, "/")] {
				add = append(add, pat)
			}
		}
		if len(add) == 0 {
			return old, nil
		}
		out := string(old)
		if out != "" && !strings.HasSuffix(out, "\n") {
			out += "\n"
		}
		if !have[gitIgnoreHeader] {
			if out != "" {
				out += "\n"
			}
			out += gitIgnoreHeader + "\n"
		}
		p.Note("added %s to .gitignore", strings.Join(add, ", "))
		return []byte(out + strings.Join(add, "\n") + "\n"), nil
	})
}

// IgnoreMachineLocal adds to the project's .gitignore (see GitIgnore) the
// files init wrote with this machine's paths in them, and .statewright/ when
// the store lives there: a teammate's clone must not carry them, or every
// call of theirs would fail closed on a binary and a store they do not have.
// It does nothing at --uninstall.
func (p *Plan) IgnoreMachineLocal(files ...string) error {
	if p.Uninstall {
		return nil
	}
	ignore := make([]string, 0, len(files)+1)
	for _, f := range files {
		ignore = append(ignore, filepath.ToSlash(f))
	}
	if rel, err := filepath.Rel(p.Project, p.Store); err == nil && strings.HasPrefix(filepath.ToSlash(rel), ".statewright/") {
		ignore = append(ignore, ".statewright/")
	}
	return p.GitIgnore(ignore...)
}

// shown names the file for people: relative to the project when inside it.
func (c *change) shown(project string) string {
	if rel, err := filepath.Rel(project, c.path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return c.path
}

// show prints what happens to the file, applying the change unless dryRun.
func (c *change) show(project string, dryRun bool, out io.Writer) error {
	name := c.shown(project)
	switch {
	case bytes.Equal(c.old, c.new) && c.exists == (c.new != nil):
		fmt.Fprintf(out, "unchanged %s\n", name)
	case dryRun:
		verb := "change"
		if c.new == nil {
			verb = "remove"
		} else if !c.exists {
			verb = "create"
		}
		fmt.Fprintf(out, "--- %s (would %s)\n%s", name, verb, lineDiff(string(c.old), string(c.new)))
	default:
		if err := c.apply(); err != nil {
			return err
		}
		verb := "updated"
		if c.new == nil {
			verb = "removed"
		} else if !c.exists {
			verb = "created"
		}
		fmt.Fprintf(out, "%s %s\n", verb, name)
	}
	return nil
}

// apply writes (atomically, keeping the file's mode) or removes the file.
func (c *change) apply() error {
	if c.new == nil {
		if err := os.Remove(c.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("init: %w", err)
		}
		c.pruneDirs()
		return nil
	}
	mode := c.mode
	if fi, err := os.Stat(c.path); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(c.path), c.dirMode); err != nil {
		return fmt.Errorf("init: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(c.path), ".statewright-init-*")
	if err != nil {
		return fmt.Errorf("init: %w", err)
	}
	_, werr := tmp.Write(c.new)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), mode)); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("init: write %s: %w", c.path, err)
	}
	if err := os.Rename(tmp.Name(), c.path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("init: write %s: %w", c.path, err)
	}
	return nil
}

// pruneDirs removes the directories a removed file leaves empty, up to
// (not including) the project directory: the ones init created for it
// (.claude, .opencode/plugins, .pi/extensions, .codex, .cursor). Outside
// the project nothing is removed.
func (c *change) pruneDirs() {
	if c.project == "" {
		return
	}
	for dir := filepath.Dir(c.path); ; dir = filepath.Dir(dir) {
		rel, err := filepath.Rel(c.project, dir)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
			return
		}
		if os.Remove(dir) != nil { // not empty, or not ours to remove
			return
		}
	}
}

// hookBinary returns the absolute, symlink-free path of the binary the
// hooks run.
func hookBinary(flag string) (string, error) {
	p := flag
	if p == "" {
		exe, err := os.Executable()
		if err != nil {
			return "", fmt.Errorf("init: cannot locate this binary (%w); name it with --binary", err)
		}
		p = exe
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", usageError{err}
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	fi, err := os.Stat(abs)
	if err != nil || fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return "", usagef("init: %s is not an executable file", abs)
	}
	if strings.Contains(abs, "'") {
		return "", usagef("init: the binary path %s holds a single quote", abs)
	}
	return abs, nil
}

// thinClient returns the thin hook client installed beside bin, or bin
// when there is none (or it is not an executable file).
func thinClient(bin string) string {
	c := filepath.Join(filepath.Dir(bin), hookwire.ClientName)
	fi, err := os.Stat(c)
	if err != nil || fi.IsDir() || fi.Mode().Perm()&0o111 == 0 || strings.Contains(c, "'") {
		return bin
	}
	return c
}

// ensureDeciderKey creates the per-install key the thin client and the
// local decider authenticate each other with, where both find it.
func ensureDeciderKey() error {
	dir := hookwire.Dir(os.Getenv)
	if dir == "" {
		return nil // no home: the client decides in process
	}
	_, err := hookwire.EnsureKey(hookwire.KeyPath(dir))
	return err
}
