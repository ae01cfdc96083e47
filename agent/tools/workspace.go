// Package tools is the agent runner's tool set — read_file, list_dir, grep,
// edit_file, write_file, run_command, run_test — confined to a workspace:
// every path is resolved to its real path (symlinks followed) and must lie
// inside the workspace's real root, and commands run in the workspace under
// bubblewrap where the kernel allows it.
//
// The runner decides every call through the runtime before it calls Exec;
// this package only carries calls out, safely.
package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrOutside reports a path that resolves outside the workspace.
var ErrOutside = errors.New("outside the workspace")

// Workspace is a directory the agent works in.
type Workspace struct {
	// Root is the workspace's real path (absolute, symlinks resolved).
	Root string
}

// NewWorkspace resolves dir to its real path; it must be a directory.
func NewWorkspace(dir string) (*Workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("workspace %s: not a directory", dir)
	}
	return &Workspace{Root: real}, nil
}

// Resolve maps a path the model gave (relative to the root, or absolute) to
// its real absolute path and its path relative to the root. Symlinks are
// followed for every existing component; components that do not exist yet
// (a file to create) are appended lexically. A result outside the root is
// refused with ErrOutside, whatever route led there (.., an absolute path,
// a symlink inside the workspace pointing out).
func (w *Workspace) Resolve(p string) (abs, rel string, err error) {
	if strings.ContainsRune(p, 0) {
		return "", "", fmt.Errorf("path %q: contains NUL", p)
	}
	if strings.TrimSpace(p) == "" {
		p = "."
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(w.Root, p)
	}
	p = filepath.Clean(p)
	real, err := realPath(p)
	if err != nil {
		return "", "", fmt.Errorf("path %q: %w", p, err)
	}
	r, err := filepath.Rel(w.Root, real)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) || filepath.IsAbs(r) {
		return "", "", fmt.Errorf("path %q resolves to %s: %w (%s)", p, real, ErrOutside, w.Root)
	}
	return real, filepath.ToSlash(r), nil
}

// realPath resolves symlinks in the longest existing prefix of p and
// appends the rest. A dangling symlink is followed to its target path.
func realPath(p string) (string, error) {
	var rest []string
	cur := p
	for range 255 {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(append([]string{real}, rest...)...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		// A dangling symlink: follow its target lexically.
		if target, lerr := os.Readlink(cur); lerr == nil {
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(cur), target)
			}
			cur = filepath.Clean(target)
			continue
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return filepath.Join(append([]string{cur}, rest...)...), nil
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
		cur = parent
	}
	return "", errors.New("too many levels of symbolic links")
}
