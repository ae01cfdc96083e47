package policy

import (
	"path"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

// Fences are matched on every path a call names, and on every ancestor of
// it, so they decide how fast an allowed Read or a denied Write is. The
// sequences and nearly every glob ("**/NAME-PATTERN...", or an absolute
// pattern of components with only * and ? wildcards) are compiled to
// per-component patterns and matched on the path's components in one
// pass, without allocating; so are absolute patterns with one "**"
// between such components ("/home/u/**/*.pem"). Anything else (a path
// that is not clean, a pattern with classes or alternatives) goes the way
// it always went: hasSeq and doublestar (matchSlow), which a differential
// test and a fuzz target hold the fast path to.

// fast are a fenceSet's compiled tables.
type fast struct {
	allFast bool
	// seqFirst maps a sequence's first component to the sequences (by
	// index) that start with it; seqParts are their components.
	seqFirst map[string][]int
	seqParts [][]string
	seqByte  [256]bool // the first bytes of the sequences' first components
	// globs, compiled; except, compiled.
	compiled []compGlob
	excepts  []compPat
	// The globs (by index, ascending) whose last part starts with a byte
	// (literal or prefix parts), ends with one (suffix parts), or can be
	// anything (the rest).
	globByFirst, globByLast [256][]int
	globOther               []int
}

// compGlob is one glob: anyDepth when it started with "**/" (then it
// matches the last len(parts) components of a path or an ancestor);
// anchored at "/" with one "**" component ("/home/u/**/*.pem": then head
// are the parts before it, which match the first components, and parts
// the ones after it, which match the last; none for "/a/**"); else
// anchored at "/" without one (a path of exactly len(parts) components).
type compGlob struct {
	raw      string
	anyDepth bool
	mid      bool
	head     []compPat
	parts    []compPat
}

// compPat is one component pattern with only * and ? wildcards.
type compPat struct {
	kind byte // '=': literal, 'p': prefix*, 's': *suffix, 'w': general
	s    string
}

func compilePat(p string) compPat {
	stars := strings.Count(p, "*")
	switch {
	case !strings.ContainsAny(p, "*?"):
		return compPat{'=', p}
	case stars == 1 && !strings.Contains(p, "?") && strings.HasSuffix(p, "*"):
		return compPat{'p', p[:len(p)-1]}
	case stars == 1 && !strings.Contains(p, "?") && strings.HasPrefix(p, "*"):
		return compPat{'s', p[1:]}
	}
	return compPat{'w', p}
}

func (c compPat) match(s string) bool {
	switch c.kind {
	case '=':
		return s == c.s
	case 'p':
		return strings.HasPrefix(s, c.s)
	case 's':
		return strings.HasSuffix(s, c.s)
	}
	return wildMatch(c.s, s)
}

// fastable reports whether a component pattern can be a compPat.
func fastable(p string) bool {
	return p != "" && !strings.Contains(p, "**") && !strings.ContainsAny(p, "[{\\/")
}

// compileFast fills the fast tables; allFast stays false when any glob or
// exception needs doublestar.
func (s *fenceSet) compileFast() {
	s.allFast = true
	s.seqFirst = map[string][]int{}
	for i, q := range s.seqs {
		parts := strings.Split(q[1:], "/")
		s.seqParts = append(s.seqParts, parts)
		s.seqFirst[parts[0]] = append(s.seqFirst[parts[0]], i)
		if parts[0] != "" {
			s.seqByte[parts[0][0]] = true
		}
		for _, p := range parts {
			if p == "" || p == "." || p == ".." {
				s.allFast = false
			}
		}
	}
	for _, g := range s.globs {
		c := compGlob{raw: g}
		rest, any := strings.CutPrefix(g, "**/")
		for any && strings.HasPrefix(rest, "**/") {
			rest = rest[3:] // "**/**/x" is "**/x"
		}
		if !any {
			var abs bool
			if rest, abs = strings.CutPrefix(g, "/"); !abs {
				s.allFast = false
			}
		}
		c.anyDepth = any
		comps := strings.Split(rest, "/")
		if !any {
			// One "**" after anchored components, and the tail after
			// it, if any ("/a/**" is "/a" and everything below).
			for i, p := range comps {
				if p == "**" {
					c.mid = true
					for _, h := range comps[:i] {
						if !fastable(h) {
							s.allFast = false
						}
						c.head = append(c.head, compilePat(h))
					}
					comps = comps[i+1:]
					break
				}
			}
		}
		for _, p := range comps {
			if !fastable(p) {
				s.allFast = false
			}
			c.parts = append(c.parts, compilePat(p))
		}
		gi := len(s.compiled)
		s.compiled = append(s.compiled, c)
		if len(c.parts) == 0 {
			s.globOther = append(s.globOther, gi)
			continue
		}
		switch lp := c.parts[len(c.parts)-1]; {
		case !(c.anyDepth || c.mid) || lp.s == "" || lp.kind == 'w':
			s.globOther = append(s.globOther, gi)
		case lp.kind == 's':
			s.globByLast[lp.s[len(lp.s)-1]] = append(s.globByLast[lp.s[len(lp.s)-1]], gi)
		default:
			s.globByFirst[lp.s[0]] = append(s.globByFirst[lp.s[0]], gi)
		}
	}
	for _, e := range s.except {
		if !fastable(e) {
			s.allFast = false
		}
		s.excepts = append(s.excepts, compilePat(e))
	}
}

// maxComponents bounds the paths the fast matcher takes.
const maxComponents = 32

// Why matchFast could not decide.
const (
	fastDone  = iota
	fastUpper // lp has upper-case ASCII: lower it and try again
	fastNo    // not clean, not ASCII or too deep: the reference decides
)

// matchFast matches lp against the trees, sequences and globs in one pass
// over its components, when lp is clean, lower-case ASCII and at most
// maxComponents deep.
func (s *fenceSet) matchFast(lp string) (m string, ok bool, why int) {
	var starts, ends [maxComponents]uint16
	if len(lp) >= 1<<16 {
		return "", false, fastNo
	}
	n := 0
	abs := len(lp) > 0 && lp[0] == '/'
	i := 0
	if abs {
		i = 1
	}
	upper := false
	for i < len(lp) {
		if n == maxComponents {
			return "", false, fastNo
		}
		j := i
		for j < len(lp) && lp[j] != '/' {
			if c := lp[j]; c >= 0x80 {
				return "", false, fastNo
			} else if 'A' <= c && c <= 'Z' {
				upper = true
			}
			j++
		}
		if j == i || j-i == 1 && lp[i] == '.' || j-i == 2 && lp[i] == '.' && lp[i+1] == '.' || j == len(lp)-1 {
			return "", false, fastNo
		}
		starts[n], ends[n] = uint16(i), uint16(j)
		n++
		i = j + 1
	}
	if upper {
		return "", false, fastUpper
	}
	for _, t := range s.trees {
		if underOrEqual(lp, t) {
			return t, true, fastDone
		}
	}

	// Sequences: the first in the list that appears anywhere.
	best := -1
	for c := range n {
		if !s.seqByte[lp[starts[c]]] {
			continue
		}
		for _, si := range s.seqFirst[lp[starts[c]:ends[c]]] {
			if best >= 0 && si >= best {
				break
			}
			parts := s.seqParts[si]
			if c+len(parts) > n {
				continue
			}
			hit := true
			for x := 1; x < len(parts) && hit; x++ {
				hit = lp[starts[c+x]:ends[c+x]] == parts[x]
			}
			if hit {
				best = si
				break
			}
		}
	}
	if best >= 0 {
		return s.seqs[best][1:], true, fastDone
	}

	// Globs: the path, then each ancestor, whose last component is not an
	// exception; at each, the first glob in the list that matches. Only
	// the globs whose last part can match the ancestor's last component
	// (by its first or last byte) are tried.
	for e := n; e >= 1; e-- {
		last := lp[starts[e-1]:ends[e-1]]
		hit := -1
		// (Each list by itself: an array of the three cost more than the
		// globs, most of which the lists leave out.)
		if list := s.globByFirst[last[0]]; len(list) > 0 {
			hit = s.globIn(list, hit, lp, &starts, &ends, e, abs)
		}
		if list := s.globByLast[last[len(last)-1]]; len(list) > 0 {
			hit = s.globIn(list, hit, lp, &starts, &ends, e, abs)
		}
		if len(s.globOther) > 0 {
			hit = s.globIn(s.globOther, hit, lp, &starts, &ends, e, abs)
		}
		if hit >= 0 && !s.exceptedFast(last) {
			return s.compiled[hit].raw, true, fastDone
		}
	}
	return "", false, fastDone
}

// globIn is matchFast's search of one glob list (ascending indexes) for
// the first glob, before hit when hit >= 0, that matches the path's first
// e components (starts, ends); it returns that glob's index, else hit.
func (s *fenceSet) globIn(list []int, hit int, lp string, starts, ends *[maxComponents]uint16, e int, abs bool) int {
	for _, gi := range list {
		if hit >= 0 && gi >= hit {
			break
		}
		g := &s.compiled[gi]
		k := len(g.parts)
		switch {
		case g.anyDepth:
			if k > e {
				continue
			}
		case g.mid:
			if !abs || len(g.head)+k > e || !g.matchHead(lp, starts[:], ends[:]) {
				continue
			}
		case !abs || k != e:
			continue
		}
		ok := true
		for x := k - 1; x >= 0 && ok; x-- {
			c := e - k + x
			ok = g.parts[x].match(lp[starts[c]:ends[c]])
		}
		if ok {
			hit = gi
		}
	}
	return hit
}

// matchHead reports whether the path's first components (lp[starts[x]:
// ends[x]]) match g's head.
func (g *compGlob) matchHead(lp string, starts, ends []uint16) bool {
	for x, h := range g.head {
		if !h.match(lp[starts[x]:ends[x]]) {
			return false
		}
	}
	return true
}

func (s *fenceSet) exceptedFast(base string) bool {
	for _, e := range s.excepts {
		if e.match(base) {
			return true
		}
	}
	return false
}

// matchSlow is the reference for the globs: doublestar over every
// ancestor.
func (s *fenceSet) matchSlow(lp string) (string, bool) {
	for q := lp; len(s.globs) > 0 && q != "/" && q != "." && q != ""; q = path.Dir(q) {
		if s.excepted(path.Base(q)) {
			continue
		}
		for _, g := range s.globs {
			target := q
			if !strings.HasPrefix(g, "/") {
				target = strings.TrimPrefix(q, "/")
			}
			if ok, _ := doublestar.Match(g, target); ok {
				return g, true
			}
		}
	}
	return "", false
}

// matchReference is match without the fast path, on a lower-cased path
// (the differential tests hold the fast path to it).
func (s *fenceSet) matchReference(lp string) (string, bool) {
	for _, t := range s.trees {
		if underOrEqual(lp, t) {
			return t, true
		}
	}
	for _, q := range s.seqs {
		if hasSeq(lp, q) {
			return q[1:], true
		}
	}
	return s.matchSlow(lp)
}

// wildMatch matches s against a pattern whose only special characters
// are * (any run) and ? (one rune), as path.Match does within one
// component.
func wildMatch(pat, s string) bool {
	px, sx := 0, 0
	starP, starS := -1, 0
	for sx < len(s) {
		switch {
		case px < len(pat) && pat[px] == '*':
			starP, starS = px, sx
			px++
		case px < len(pat) && pat[px] == '?':
			_, size := utf8.DecodeRuneInString(s[sx:])
			px++
			sx += size
		case px < len(pat) && pat[px] == s[sx]:
			px++
			sx++
		case starP >= 0:
			_, size := utf8.DecodeRuneInString(s[starS:])
			starS += size
			px, sx = starP+1, starS
		default:
			return false
		}
	}
	for px < len(pat) && pat[px] == '*' {
		px++
	}
	return px == len(pat)
}
