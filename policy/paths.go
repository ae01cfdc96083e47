package policy

import (
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
	"golang.org/x/text/unicode/norm"
)

// foldPath lower-cases a path as a case-insensitive file system compares
// names: each rune to the lower case of its upper case, so that ſ (long
// s) is s and ı (dotless i) is i, as NTFS's upcase table and APFS's case
// folding have them (strings.ToLower leaves both, and .git/hookſ is
// .git/hooks there). ASCII is strings.ToLower's.
//
// It reads p eight bytes at a time: a path is folded on every check of
// denied_paths and of the law's ancestors, and is mostly lower-case ASCII,
// returned as it is.
func foldPath(p string) string {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	var hi, up uint64 // high bits: a non-ASCII byte, an upper-case letter
	i := 0
	for ; i+8 <= len(p); i += 8 {
		b8 := p[i : i+8] // (one bounds check, one load)
		x := uint64(b8[0]) | uint64(b8[1])<<8 | uint64(b8[2])<<16 | uint64(b8[3])<<24 |
			uint64(b8[4])<<32 | uint64(b8[5])<<40 | uint64(b8[6])<<48 | uint64(b8[7])<<56
		hi |= x
		// Of a byte below 0x80, adding 0x3f sets its high bit from 'A'
		// on, adding 0x25 from 'Z'+1 on (no carry leaves a byte): set in
		// the first and not the second is A-Z. (A word with a non-ASCII
		// byte is not read for letters: hi decides.)
		up |= (x + ones*(0x80-'A')) &^ (x + ones*(0x80-'Z'-1))
	}
	if hi&highs != 0 {
		return foldRunes(p)
	}
	upper := up&highs != 0
	for ; i < len(p); i++ {
		c := p[i]
		if c >= utf8.RuneSelf {
			return foldRunes(p)
		}
		upper = upper || 'A' <= c && c <= 'Z'
	}
	if !upper {
		return p
	}
	return strings.ToLower(p)
}

// foldRunes is foldPath of a path that is not all ASCII: its runes
// folded, then composed (NFC), since a file system that compares
// canonically equivalent names as one (APFS; the reference filesystem MCP
// server matches a missing name to an entry of the same NFC) takes
// /home/jose\u0301 for /home/jos\u00e9.
func foldRunes(p string) string {
	return norm.NFC.String(strings.Map(func(r rune) rune { return unicode.ToLower(unicode.ToUpper(r)) }, p))
}

// cleanPath cleans p lexically ("" stays "").
func cleanPath(p string) string {
	if p == "" || isCleanAbs(p) || isCleanRel(p) {
		return p
	}
	return path.Clean(p)
}

// isCleanRel is isCleanAbs for a relative path ("src/a.go", a call's
// file without a working directory): components that are none of "",
// "." and "..". It may say false of a clean path (".", "../a"), never
// true of one that is not (FuzzIsCleanAbs).
func isCleanRel(p string) bool {
	if len(p) == 0 || p[0] == '/' {
		return false
	}
	start := 0
	for i := 0; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			continue
		}
		if n := i - start; n == 0 || p[start] == '.' && (n == 1 || n == 2 && p[start+1] == '.') {
			return false
		}
		start = i + 1
	}
	return true
}

// isCleanAbs reports whether p is an absolute path that path.Clean
// leaves as it is, with a test cheaper than path.Clean's (which copies
// nothing for such a path, but reads it byte by byte through its buffer):
// "/", or components that are none of "", "." and "..". It may say false
// of a clean path, never true of one that is not (FuzzIsCleanAbs).
func isCleanAbs(p string) bool {
	if len(p) == 0 || p[0] != '/' {
		return false
	}
	start := 1
	for i := 1; i < len(p); i++ {
		if p[i] != '/' {
			continue
		}
		if n := i - start; n == 0 || p[start] == '.' && (n == 1 || n == 2 && p[start+1] == '.') {
			return false
		}
		start = i + 1
	}
	n := len(p) - start
	if n == 0 {
		return len(p) == 1
	}
	return !(p[start] == '.' && (n == 1 || n == 2 && p[start+1] == '.'))
}

func baseName(p string) string { return path.Base(p) }

// relPath returns abs relative to the project root (ProjectDir, else Cwd)
// when it lies inside it; otherwise abs unchanged.
func relPath(call *ToolCall, abs string) string {
	root := call.ProjectDir
	if root == "" {
		root = call.Cwd
	}
	if root == "" || !strings.HasPrefix(abs, "/") {
		return strings.TrimPrefix(abs, "./")
	}
	root = cleanPath(root)
	if abs == root {
		return "."
	}
	if root == "/" {
		return abs[1:]
	}
	if belowRoot(abs, root) {
		return abs[len(root)+1:]
	}
	return abs
}

// belowRoot reports whether p starts with root+"/" (without joining them).
func belowRoot(p, root string) bool {
	return len(p) > len(root) && p[len(root)] == '/' && p[:len(root)] == root
}

// containsFold is an allocation-free ASCII case-insensitive strings.Contains
// for a lower-case needle.
func containsFold(s, lowerNeedle string) bool {
	n := len(lowerNeedle)
	for i := 0; i+n <= len(s); i++ {
		j := 0
		for ; j < n; j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != lowerNeedle[j] {
				break
			}
		}
		if j == n {
			return true
		}
	}
	return false
}

// matchScope matches a path against compiled scope globs: relative patterns
// against the project-relative path, absolute ones against the absolute path.
//
// A Windows path (in slash form, lower-cased) is matched case-insensitively,
// as Windows compares names: against the lower-cased pattern.
func matchScope(globs []pathGlob, abs, rel string) bool {
	return matchScopeIn(globs, abs, rel, false)
}

// matchDenied is matchScope for denied_paths: case-insensitively for
// every path, folded as a case-insensitive file system folds names
// (foldPath): on macOS's APFS (case-insensitive by default) and NTFS,
// Config/prod.yaml is config/prod.yaml. A deny errs on the safe side, as
// deny rules do (pathRule.match).
func matchDenied(globs []pathGlob, abs, rel string) bool {
	return matchScopeIn(globs, foldPath(abs), foldPath(rel), true)
}

// matchScopeIn is matchScope; fold: abs and rel are folded, and so is
// every pattern.
func matchScopeIn(globs []pathGlob, abs, rel string, fold bool) bool {
	win := winSlash(abs)
	for _, g := range globs {
		target, pattern := rel, g.pattern
		if g.abs {
			target = abs
		}
		switch {
		case fold:
			pattern = g.fpattern
		case win:
			pattern = strings.ToLower(pattern)
		}
		if g.tree != "" {
			tree := g.tree
			switch {
			case fold:
				tree = g.ftree
			case win:
				tree = strings.ToLower(tree)
			}
			if target == tree || len(target) > len(tree) && target[len(tree)] == '/' && target[:len(tree)] == tree {
				return true
			}
			continue
		}
		if ok, _ := doublestar.Match(pattern, target); ok {
			return true
		}
	}
	return false
}

// hasMarker reports whether shell text names a protected path.
func (l *Law) hasMarker(s string) bool {
	ls := strings.ToLower(s)
	for _, m := range l.markers {
		if strings.Contains(ls, m) {
			return true
		}
	}
	return false
}

// editPath is the path an edit or shell write is counted under (in
// FilesEdited and path scopes): the real path when the runtime resolved
// it, else the lexical absolute path.
func (l *Law) editPath(call *ToolCall, p string) string {
	abs := l.absPath(call, p)
	if call.Resolver == nil {
		// What info would answer: abs itself (cleaned already).
		return abs
	}
	if r := l.info(call, abs).Real; r != "" {
		return r
	}
	return abs
}

// relTo returns abs relative to the call's project root (as written or
// resolved), else abs unchanged (see relPath).
func (l *Law) relTo(call *ToolCall, abs string) string {
	if call.Resolver != nil {
		roots, n := l.projectRootsIn(call)
		for _, root := range roots[:n] {
			if abs == root {
				return "."
			}
			if belowRoot(abs, root) {
				return abs[len(root)+1:]
			}
		}
	}
	return relPath(call, abs)
}

// isProtected reports whether a path is in the protected set.
func (l *Law) isProtected(p string) bool {
	_, ok := l.protectedBy(p)
	return ok
}
