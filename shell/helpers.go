package shell

import "sort"

// Programs returns the distinct program names the line runs (after
// unwrapping), sorted. Dynamic program names are left out; check
// HasDynamicProgram for those.
func (a *Analysis) Programs() []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range a.Commands {
		if c.Program != "" && !c.Dynamic && !seen[c.Program] {
			seen[c.Program] = true
			out = append(out, c.Program)
		}
	}
	sort.Strings(out)
	return out
}

// HasDynamicProgram reports whether some command's program name is computed
// at run time ($x, $(...), a glob).
func (a *Analysis) HasDynamicProgram() bool {
	for _, c := range a.Commands {
		if c.Dynamic {
			return true
		}
	}
	return false
}

// HasDynamicWrite reports whether some write target cannot be known
// statically (> "$X", a glob, files an archive or xargs will name).
func (a *Analysis) HasDynamicWrite() bool {
	for _, t := range a.Writes {
		if t.Dynamic {
			return true
		}
	}
	return false
}

// Has reports whether the line's classes include every class in c.
func (a *Analysis) Has(c Class) bool { return a.Classes.Has(c) }

// Any reports whether the line's classes include at least one class in c.
func (a *Analysis) Any(c Class) bool { return a.Classes&c != 0 }

// Only reports whether the line's classes are all within allowed.
func (a *Analysis) Only(allowed Class) bool { return a.Classes&^allowed == 0 }

// MatchesAllowed reports whether every command of the line matches one of
// the allowed prefixes (each prefix a list of literal words, as
// Command.HasPrefix takes). Commands without words (a bare redirection or
// assignment) match only when they have no class. It says nothing about
// redirections' write targets: check Analysis.Writes separately.
func (a *Analysis) MatchesAllowed(prefixes [][]string) bool {
	for i := range a.Commands {
		c := &a.Commands[i]
		if len(c.Words) == 0 {
			if c.Classes != 0 && c.Classes != ClassRead {
				return false
			}
			continue
		}
		ok := false
		for _, p := range prefixes {
			if c.HasPrefix(p) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}
