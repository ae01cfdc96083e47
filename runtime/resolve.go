package runtime

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/statewright-go/statewright/policy"
)

// DefaultMaxWalk bounds the directory entries a recursive-read check visits
// before it gives up (and the read is denied).
const DefaultMaxWalk = 250_000

// maxLinkHops bounds symbolic-link resolution, as the kernel's ELOOP does.
const maxLinkHops = 40

// Resolver is the policy.Resolver of the agent's host: it resolves paths
// through ".." and symbolic links (noting each link and whether the agent
// could have made it), expands globs, and walks directories the way
// recursive readers do. It runs in the process that receives the hook
// (docs/hooks.md: paths are resolved on the agent's host). It is safe for concurrent use and caches resolutions
// for its lifetime, so a long-lived process should make one per decision.
type Resolver struct {
	// MaxWalk bounds a recursive-read walk (default DefaultMaxWalk).
	MaxWalk int

	mu    sync.Mutex
	cache map[string]policy.PathInfo
}

// NewResolver returns a Resolver for this host.
func NewResolver() *Resolver { return &Resolver{} }

var _ policy.Resolver = (*Resolver)(nil)

// Resolve returns the facts of an absolute path. The path need not be
// clean: ".." is applied after the links before it are followed, as the
// kernel does.
func (r *Resolver) Resolve(p string) policy.PathInfo {
	r.mu.Lock()
	if in, ok := r.cache[p]; ok {
		r.mu.Unlock()
		return in
	}
	r.mu.Unlock()
	in := resolve(p)
	r.mu.Lock()
	if r.cache == nil {
		r.cache = map[string]policy.PathInfo{}
	}
	r.cache[p] = in
	r.mu.Unlock()
	return in
}

// pathFS is what resolution asks of the file system: the host's
// (osFS), or one that notes what it read (hostFS, for HostCache).
type pathFS interface {
	lstat(p string) (fs.FileInfo, error)
	readlink(p string) (string, error)
}

type osFS struct{}

func (osFS) lstat(p string) (fs.FileInfo, error) { return os.Lstat(nativePath(p)) }
func (osFS) readlink(p string) (string, error)   { return os.Readlink(nativePath(p)) }

func resolve(p string) policy.PathInfo { return resolveIn(osFS{}, p, true) }

// resolveIn resolves p on fsys; without facts it finds the real path only
// (no final stat, no writability of the links' directories).
func resolveIn(fsys pathFS, p string, facts bool) policy.PathInfo {
	if !strings.HasPrefix(p, "/") {
		return policy.PathInfo{Real: p, Err: "not an absolute path"}
	}
	var in policy.PathInfo
	todo := splitPath(p)
	cur := "/"
	hops := 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = path.Dir(cur)
			continue
		}
		next := path.Join(cur, c)
		fi, err := fsys.lstat(next)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			// The rest does not exist yet: it is where a write would create it.
			in.Real = path.Join(append([]string{next}, todo...)...)
			return in
		}
		if err != nil {
			in.Real = path.Clean(p)
			in.Err = err.Error()
			return in
		}
		if fi.Mode()&fs.ModeIrregular != 0 && fi.IsDir() {
			// A Windows junction or other reparse point that is not a
			// symbolic link: where it leads is not known here.
			in.Real = path.Clean(p)
			in.Err = "a reparse point that is not a symbolic link"
			return in
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		hops++
		if hops > maxLinkHops {
			in.Real = path.Clean(p)
			in.Err = "too many levels of symbolic links"
			return in
		}
		target, err := fsys.readlink(next)
		if err == nil {
			target, err = slashTarget(target)
		}
		if err != nil {
			in.Real = path.Clean(p)
			in.Err = err.Error()
			return in
		}
		if facts {
			in.Links = append(in.Links, policy.Link{Path: next, Target: target, Writable: writableDir(cur)})
		}
		if strings.HasPrefix(target, "/") {
			cur = "/"
		}
		todo = append(splitPath(target), todo...)
	}
	in.Real = cur
	if !facts {
		return in
	}
	fi, err := os.Stat(nativePath(cur))
	if err != nil {
		in.Err = err.Error()
		return in
	}
	in.Exists = true
	in.Dir = fi.IsDir()
	if !in.Dir {
		in.Nlink = linkCount(fi)
	}
	return in
}

func splitPath(p string) []string { return strings.Split(p, "/") }

// Glob returns what pattern matches now. filepath.Glob's "*" also matches
// names starting with ".", which the shell's does not: the result is a
// superset, which is the safe side for a check.
func (r *Resolver) Glob(pattern string) ([]string, bool) {
	m, err := filepath.Glob(strings.ReplaceAll(pattern, "**", "*"))
	if err != nil {
		return nil, false
	}
	return m, true
}

// Reach walks root as w describes and returns the first path secret
// reports (checked on real paths), or "" when the walk reaches none. It
// honours .gitignore (inside a git repository), .ignore and .rgignore when
// w.Ignored is false, skips hidden names when w.Hidden is false, and
// follows links below root only when w.Follow is set.
func (r *Resolver) Reach(root string, w policy.Walk, secret func(string) bool) (string, error) {
	max := r.MaxWalk
	if max <= 0 {
		max = DefaultMaxWalk
	}
	wk := &walker{w: w, secret: secret, max: max, visited: map[string]bool{}}
	if !w.Ignored {
		wk.inRepo = insideGitRepo(root)
	}
	var rules []ignoreRules
	if !w.Ignored {
		rules = wk.loadIgnores(nil, root)
	}
	return wk.dir(root, root, rules)
}

type walker struct {
	w       policy.Walk
	secret  func(string) bool
	max, n  int
	inRepo  bool
	visited map[string]bool
}

func (wk *walker) dir(dir, real string, rules []ignoreRules) (string, error) {
	if wk.secret(real) {
		return real, nil
	}
	if wk.visited[real] {
		return "", nil
	}
	wk.visited[real] = true
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return "", nil // the reader cannot enter it either
		}
		return "", fmt.Errorf("read %s: %w", dir, err)
	}
	for _, e := range ents {
		wk.n++
		if wk.n > wk.max {
			return "", fmt.Errorf("more than %d entries below the directory", wk.max)
		}
		name := e.Name()
		if !wk.w.Hidden && strings.HasPrefix(name, ".") {
			continue
		}
		p := path.Join(dir, name)
		rp := path.Join(real, name)
		isDir := e.IsDir()
		if e.Type()&fs.ModeSymlink != 0 {
			if !wk.w.Follow {
				continue
			}
			in := resolve(rp)
			if in.Err != "" || !in.Exists {
				continue
			}
			rp = in.Real
			isDir = in.Dir
		}
		if !wk.w.Ignored && ignored(rules, p, isDir) {
			continue
		}
		if isDir {
			sub := rules
			if !wk.w.Ignored {
				sub = wk.loadIgnores(rules, p)
			}
			if found, err := wk.dir(p, rp, sub); found != "" || err != nil {
				return found, err
			}
			continue
		}
		if wk.secret(rp) {
			return rp, nil
		}
	}
	return "", nil
}

// insideGitRepo reports whether dir lies in a git working tree (ripgrep
// honours .gitignore only there).
func insideGitRepo(dir string) bool {
	for d := dir; ; d = path.Dir(d) {
		if _, err := os.Lstat(path.Join(d, ".git")); err == nil {
			return true
		}
		if d == "/" || d == "." {
			return false
		}
	}
}
