package policy

import (
	"path"
	"strings"
)

// PathInfo is what the runtime found on disk for one path a call names
// (docs/hooks.md: paths are resolved on the agent's host, by the process
// that receives the hook, before the policy decides).
type PathInfo struct {
	// Real is the path with ".." and every symlink resolved. For a path
	// that does not exist, its deepest existing ancestor is resolved and
	// the rest appended.
	Real string `json:"real"`
	// Exists and Dir describe the path itself (after following links).
	Exists bool `json:"exists,omitempty"`
	Dir    bool `json:"dir,omitempty"`
	// Links are the symbolic links met on the way, in order.
	Links []Link `json:"links,omitempty"`
	// Nlink is the hard-link count of an existing regular file.
	Nlink int `json:"nlink,omitempty"`
	// Err is set when the path could not be resolved (a loop, no
	// permission): the policy treats the path as unknown.
	Err string `json:"err,omitempty"`
}

// Link is one symbolic link met while resolving a path.
type Link struct {
	// Path is the link itself (its directory resolved), Target what it points to as stored.
	Path   string `json:"path"`
	Target string `json:"target"`
	// Writable is true when the link lives in a directory the agent can
	// write (docs/policy.md: such a link can be swapped between the
	// decision and a write).
	Writable bool `json:"writable,omitempty"`
}

// Walk describes how a recursive reader walks a directory.
type Walk struct {
	// Hidden: it enters hidden files and directories (grep -r does; rg
	// does only with --hidden).
	Hidden bool `json:"hidden,omitempty"`
	// Ignored: it enters files that .gitignore and .ignore exclude (grep -r
	// does; rg does only with --no-ignore).
	Ignored bool `json:"ignored,omitempty"`
	// Follow: it follows symbolic links below the root (grep -R, rg -L, find -L).
	Follow bool `json:"follow,omitempty"`
}

// Resolver answers the policy's questions about the disk. The runtime
// implements it on the agent's host (runtime.NewResolver); the policy stays
// free of I/O and decides the same way on the same answers.
type Resolver interface {
	// Resolve returns the facts of an absolute, clean path.
	Resolve(abs string) PathInfo
	// Glob returns what an absolute shell glob matches now; ok is false
	// when it cannot be expanded (the policy then treats it as unknown).
	Glob(pattern string) (matches []string, ok bool)
	// Reach walks root as w describes and returns the first path for
	// which secret reports true ("" when none). An error (a walk too large
	// to finish in time, an unreadable directory) denies.
	Reach(root string, w Walk, secret func(real string) bool) (string, error)
}

// expandHome turns "~" and "~/x" into paths under home; other "~user"
// forms are returned unchanged (and are unknown).
func expandHome(p, home string) string {
	if home == "" || !strings.HasPrefix(p, "~") {
		return p
	}
	if p == "~" {
		return home
	}
	if strings.HasPrefix(p, "~/") {
		return path.Join(home, p[2:])
	}
	return p
}

// absPath returns the lexical absolute form of a path as written in a call:
// "~" expanded, joined to the call's working directory, cleaned.
func (l *Law) absPath(call *ToolCall, p string) string {
	return cleanPath(l.rawAbs(call, p))
}

// rawAbs is absPath before cleaning: the Resolver must see "x/.." as
// written, since the kernel follows a link x before applying "..".
func (l *Law) rawAbs(call *ToolCall, p string) string {
	if r, ok := call.ResolvedPaths[p]; ok && r != "" {
		return r
	}
	if call.win || winCall(call) {
		return l.winAbs(slashCall(call), p)
	}
	p = expandHome(p, l.home())
	if strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || call.Cwd == "" {
		return p
	}
	return strings.TrimSuffix(call.Cwd, "/") + "/" + p
}

// info resolves an absolute path through the call's Resolver; without one
// the path is taken as written (lexically).
func (l *Law) info(call *ToolCall, abs string) PathInfo {
	if !strings.HasPrefix(abs, "/") && (call.win || winCall(call)) {
		return PathInfo{Real: abs, Err: errWinPath}
	}
	if call.Resolver != nil && strings.HasPrefix(abs, "/") {
		return call.Resolver.Resolve(abs)
	}
	return PathInfo{Real: cleanPath(abs)}
}

func (l *Law) home() string {
	if l.opts.Host != nil {
		return l.opts.Host.Home
	}
	return ""
}
