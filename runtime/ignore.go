package runtime

import (
	"bufio"
	"os"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// ignoreRules are the patterns of one ignore file (.gitignore, .ignore,
// .rgignore), relative to the directory that holds it.
//
// This is the subset of gitignore(5) a recursive-read check needs. It
// errs towards NOT ignoring: a file with a negation ("!") is not used at
// all, so that a walk never skips what the reader would read (a skipped
// secret would be a leak; an extra one is only a stricter answer).
type ignoreRules struct {
	dir      string
	patterns []ignorePattern
}

type ignorePattern struct {
	glob     string // doublestar, relative to dir
	anchored bool   // matched against the path relative to dir, else against the base name
	dirOnly  bool
}

// loadIgnores returns rules plus the ignore files of dir (.gitignore only
// inside a git repository).
func (wk *walker) loadIgnores(rules []ignoreRules, dir string) []ignoreRules {
	names := []string{".ignore", ".rgignore"}
	if wk.inRepo {
		names = append(names, ".gitignore")
	}
	out := rules
	for _, n := range names {
		if r, ok := readIgnore(path.Join(dir, n), dir); ok {
			if len(out) == len(rules) {
				out = append([]ignoreRules(nil), rules...)
			}
			out = append(out, r)
		}
	}
	return out
}

func readIgnore(file, dir string) (ignoreRules, bool) {
	f, err := os.Open(file)
	if err != nil {
		return ignoreRules{}, false
	}
	defer f.Close()
	r := ignoreRules{dir: dir}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		ln := strings.TrimRight(sc.Text(), " \t\r")
		if ln == "" || strings.HasPrefix(ln, "#") {
			continue
		}
		if strings.HasPrefix(ln, "!") || strings.Contains(ln, "\\") {
			return ignoreRules{}, false // negations and escapes: not modelled, so not used
		}
		p := ignorePattern{}
		if strings.HasSuffix(ln, "/") {
			p.dirOnly = true
			ln = strings.TrimSuffix(ln, "/")
		}
		if strings.Contains(ln, "/") {
			p.anchored = true
			ln = strings.TrimPrefix(ln, "/")
		}
		if !doublestar.ValidatePattern(ln) {
			return ignoreRules{}, false
		}
		p.glob = ln
		r.patterns = append(r.patterns, p)
	}
	if sc.Err() != nil {
		return ignoreRules{}, false
	}
	return r, len(r.patterns) > 0
}

// ignored reports whether p (a file or directory) is excluded by rules.
func ignored(rules []ignoreRules, p string, isDir bool) bool {
	base := path.Base(p)
	for _, r := range rules {
		rel, ok := strings.CutPrefix(p, r.dir+"/")
		if !ok {
			continue
		}
		for _, pat := range r.patterns {
			if pat.dirOnly && !isDir {
				continue
			}
			target := base
			if pat.anchored {
				target = rel
			}
			if m, _ := doublestar.Match(pat.glob, target); m {
				return true
			}
		}
	}
	return false
}
