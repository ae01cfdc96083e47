package runtime

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/statewright-go/statewright/policy"
)

// hostFS is the file system as DiscoverHost reads it: each path's lstat
// is asked once per discovery (the PATH entries share their prefixes),
// and every path it read is noted, so that HostCache can tell later
// whether the answer still holds.
type hostFS struct {
	memo map[string]lstatResult
	// content marks the paths whose content or permissions the answer
	// read (a .git file, a directory listed, a directory asked for write
	// access), not only what they are.
	content map[string]bool
}

type lstatResult struct {
	fi  fs.FileInfo
	err error
}

func (f *hostFS) lstat(p string) (fs.FileInfo, error) {
	if r, ok := f.memo[p]; ok {
		return r.fi, r.err
	}
	fi, err := os.Lstat(nativePath(p))
	if f.memo == nil {
		f.memo = map[string]lstatResult{}
	}
	f.memo[p] = lstatResult{fi, err}
	return fi, err
}

// readlink reads a link whose lstat resolution noted: a link changes only
// by being replaced (another inode).
func (f *hostFS) readlink(p string) (string, error) { return os.Readlink(nativePath(p)) }

// realPath resolves p's symbolic links ("" stays ""; a missing tail is kept).
func (f *hostFS) realPath(p string) string {
	if p == "" || !filepath.IsAbs(p) {
		return p
	}
	return resolveIn(f, p, false).Real
}

// resolved is p resolved, its real path noted for its content.
func (f *hostFS) resolved(p string) (string, error) {
	in := resolveIn(f, p, false)
	if in.Err != "" {
		return "", errors.New(in.Err)
	}
	if f.content == nil {
		f.content = map[string]bool{}
	}
	f.content[in.Real] = true
	return in.Real, nil
}

// stat is os.Stat.
func (f *hostFS) stat(p string) (fs.FileInfo, error) {
	in := resolveIn(f, p, false)
	if in.Err != "" {
		return nil, errors.New(in.Err)
	}
	return f.lstat(in.Real)
}

func (f *hostFS) readFile(p string) ([]byte, error) {
	r, err := f.resolved(p)
	if err != nil {
		return nil, err
	}
	f.lstat(r)
	return os.ReadFile(nativePath(r))
}

func (f *hostFS) readDir(p string) ([]os.DirEntry, error) {
	r, err := f.resolved(p)
	if err != nil {
		return nil, err
	}
	f.lstat(r)
	return os.ReadDir(nativePath(r))
}

// writable is writableDir of a real path.
func (f *hostFS) writable(r string) bool {
	if f.content == nil {
		f.content = map[string]bool{}
	}
	f.content[r] = true
	f.lstat(r)
	return writableDir(r)
}

// HostCache keeps DiscoverHost's answers for a long-lived process (the
// decider), by what they depend on: the environment DiscoverHost reads
// (HOME, XDG_CONFIG_HOME, XDG_CACHE_HOME, CLAUDE_ENV_FILE, PATH), the
// project directory, the store and the binary; and, checked before every
// use, every path the discovery read: each still is what it was (the same
// file or directory, type, owner and mode, or still missing), and the
// ones whose content or permissions it read (a .git file, a listed
// directory, a PATH directory asked for write access) have not changed
// since (their inode change time). A link, a .git or a PATH directory the
// agent creates, removes or replaces is therefore seen at the next hook,
// as a discovery would see it (DECISIONS 28). An answer that read a path
// changed within racyWindow of the discovery is not kept (a change in the
// same clock tick would keep its time). Where file identities are not
// known (not Linux), nothing is kept. It is safe for concurrent use.
type HostCache struct {
	mu      sync.Mutex
	entries map[hostKey]*hostEntry
}

// racyWindow: an answer that read a path changed this recently is not
// kept.
var racyWindow = 2 * time.Second

// maxHostEntries bounds the answers a HostCache keeps; past it they are
// all dropped.
const maxHostEntries = 64

type hostKey struct {
	home, configHome, cacheHome, envFile, path string
	project, store, binary                     string
}

type hostEntry struct {
	host  *policy.Host
	noted []notedPath
}

type notedPath struct {
	path  string
	stamp fileStamp
}

// Discover is DiscoverHost, answered from the cache while what the answer
// read is unchanged. Callers must not modify the Host.
func (c *HostCache) Discover(o HostOptions) *policy.Host {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if o.ProjectDir == "" {
		o.ProjectDir, _ = os.Getwd()
	}
	if o.Binary == "" {
		o.Binary, _ = os.Executable()
	}
	key := hostKey{home: getenv("HOME"), configHome: getenv("XDG_CONFIG_HOME"), cacheHome: getenv("XDG_CACHE_HOME"),
		envFile: getenv("CLAUDE_ENV_FILE"), path: getenv("PATH"), project: o.ProjectDir, store: o.Store, binary: o.Binary}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[key]; e != nil {
		if e.holds() {
			return e.host
		}
		delete(c.entries, key)
	}
	start := time.Now()
	f := &hostFS{}
	h := discoverHost(o, f)
	if e := f.entry(h, start); e != nil {
		if c.entries == nil || len(c.entries) >= maxHostEntries {
			c.entries = map[hostKey]*hostEntry{}
		}
		c.entries[key] = e
	}
	return h
}

// entry is what the discovery read, or nil when it cannot be kept.
func (f *hostFS) entry(h *policy.Host, start time.Time) *hostEntry {
	e := &hostEntry{host: h, noted: make([]notedPath, 0, len(f.memo))}
	racy := start.Add(-racyWindow).UnixNano()
	for p, r := range f.memo {
		st, ok := stampOf(r.fi, r.err, f.content[p])
		if !ok || st.ctime >= racy {
			return nil
		}
		e.noted = append(e.noted, notedPath{p, st})
	}
	return e
}

// holds reports whether every path the answer read is still as it was.
func (e *hostEntry) holds() bool {
	for _, n := range e.noted {
		if st, ok := lstatStamp(nativePath(n.path), n.stamp.content); !ok || st != n.stamp {
			return false
		}
	}
	return true
}
