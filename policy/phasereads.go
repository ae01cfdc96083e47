package policy

import (
	"fmt"
	"strings"
)

// A phase's read fences (issue 19 item 2): its denied_paths and the
// workflow's and phase's Read deny and ask rules apply to every read, by
// the mechanism that keeps secrets unread (fences.go, guard.go): Read,
// Grep, Glob and LS, MCP tools handed a path, every shell read, and
// recursive walks of an ancestor that would reach such a path. A phase
// with any of them gets its own view of the law (compiledState.view) whose
// read checks see them beside the secret set.

// phaseRead is one fence of a phase: what it is and what a read of it gets.
type phaseRead struct {
	set  fenceSet
	rule Rule // path-scope (denied_paths), permission-deny or permission-ask
	ask  bool
	what string // "denied_paths entry secrets/** of phase 'x'", "the deny rule Read(.env) of the workflow"
}

// phaseReads are a phase's read fences, deny entries first.
type phaseReads struct {
	entries []phaseRead
	// literal are the absolute trees among the deny entries, hidden in the
	// phase's OS sandbox.
	literal []string
}

// compilePhaseReads builds a phase's read fences, or nil when it has none.
func compilePhaseReads(cs *compiledState, rs *ruleSet, h *Host) *phaseReads {
	pr := &phaseReads{}
	add := func(f Fence, rule Rule, ask bool, what string) {
		set := compileFences([]Fence{f}, nil)
		pr.entries = append(pr.entries, phaseRead{set: set, rule: rule, ask: ask, what: what})
		if !ask && !f.Pattern {
			pr.literal = append(pr.literal, f.Path)
		}
	}
	for _, g := range cs.st.DeniedPaths {
		pat := strings.TrimPrefix(g, "./")
		if s, err := slashPattern(pat); err == nil {
			pat = s // (an error fails compileGlobs)
		}
		if strings.HasSuffix(pat, "/") {
			pat += "**"
		}
		var f Fence
		if strings.HasPrefix(pat, "/") {
			f = literalOrPattern(pat, "")
		} else {
			f = pathRule{pat: strings.TrimSuffix(pat, "/**"), mode: pmProject}.fence(h, "")
		}
		add(f, RulePathScope, false, fmt.Sprintf("denied_paths entry %s of phase '%s'", g, cs.name))
	}
	if rs != nil {
		for _, lst := range [][]*permRule{rs.deny, rs.ask} {
			for _, r := range lst {
				if r.target != rtRead {
					continue
				}
				rule := RulePermissionDeny
				if r.verdict == Ask {
					rule = RulePermissionAsk
				}
				add(r.path.fence(h, ""), rule, r.verdict == Ask, r.describe())
			}
		}
	}
	if len(pr.entries) == 0 {
		return nil
	}
	return pr
}

// match returns the phase fence covering p (a deny entry before an ask
// entry), or nil.
func (pr *phaseReads) match(p string, asks bool) *phaseRead {
	if pr == nil || p == "" {
		return nil
	}
	var ask *phaseRead
	for i := range pr.entries {
		e := &pr.entries[i]
		if e.ask && (!asks || ask != nil) {
			continue
		}
		if _, ok := e.set.match(p); ok {
			if !e.ask {
				return e
			}
			ask = e
		}
	}
	return ask
}

// hasAsk reports whether any entry asks.
func (pr *phaseReads) hasAsk() bool {
	if pr == nil {
		return false
	}
	for i := range pr.entries {
		if pr.entries[i].ask {
			return true
		}
	}
	return false
}

// block is the decision for a read of t that e covers.
func (e *phaseRead) block(verb string, t resolved) *block {
	b := &block{rule: e.rule, ask: e.ask}
	if e.ask {
		b.reason = fmt.Sprintf("%s %s, which %s names: a person must agree", verb, describe(t), e.what)
	} else {
		b.reason = fmt.Sprintf("%s %s, which %s forbids reading", verb, describe(t), e.what)
	}
	return b
}

// phaseReadBlock is readBlock's check of the phase's fences.
func (l *Law) phaseReadBlock(t resolved, verb string) *block {
	if l.phase == nil {
		return nil
	}
	var ask *block
	var pbuf [2]string
	for _, p := range t.paths(&pbuf) {
		if e := l.phase.match(p, true); e != nil {
			if !e.ask {
				return e.block(verb, t)
			}
			if ask == nil {
				ask = e.block(verb, t)
			}
		}
	}
	return ask
}

// isReadDenied is the predicate a recursive walk stops at: a secret or a
// path the phase denies reading (asks too, when asks is set).
func (l *Law) isReadDenied(asks bool) func(string) bool {
	return func(p string) bool {
		if _, ok := l.secretBy(p); ok {
			return true
		}
		return l.phase.match(p, asks) != nil
	}
}
