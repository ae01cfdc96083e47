package shell

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// word is one argv word as the analysis sees it.
type word struct {
	val   string // the literal value, or the source text when !lit
	lit   bool   // the value is known statically
	split bool   // unquoted expansion or glob: may become several words
	dash  bool   // a dynamic word that may expand to a word starting with "-" (an option)
	input bool   // the words xargs reads from its input: not a file the line names
}

// opt reports whether the word is, or may expand to, an option.
func (a word) opt() bool {
	if a.lit {
		return len(a.val) > 1 && a.val[0] == '-'
	}
	return a.dash
}

// wordValue returns the value of a word after quote removal, and whether it
// is fully literal (no expansion, no glob, no brace expansion).
func wordValue(wd *syntax.Word) (string, bool) {
	if wd == nil {
		return "", true
	}
	if len(wd.Parts) == 1 { // fast paths without a copy
		switch x := wd.Parts[0].(type) {
		case *syntax.Lit:
			return unquotedLit(x.Value)
		case *syntax.SglQuoted:
			if !x.Dollar {
				return x.Value, true
			}
		}
	}
	var sb strings.Builder
	lit := true
	for _, p := range wd.Parts {
		switch x := p.(type) {
		case *syntax.Lit:
			v, ok := unquotedLit(x.Value)
			sb.WriteString(v)
			lit = lit && ok
		case *syntax.SglQuoted:
			if x.Dollar {
				sb.WriteString(ansiC(x.Value))
			} else {
				sb.WriteString(x.Value)
			}
		case *syntax.DblQuoted:
			for _, dp := range x.Parts {
				l, ok := dp.(*syntax.Lit)
				if !ok {
					lit = false
					continue
				}
				sb.WriteString(dqUnescape(l.Value))
			}
		default:
			lit = false
		}
	}
	return sb.String(), lit
}

// splittable reports whether a word has an unquoted expansion or glob, so it
// may expand to several words, options included.
func splittable(wd *syntax.Word) bool {
	for _, p := range wd.Parts {
		switch x := p.(type) {
		case *syntax.Lit:
			if _, ok := unquotedLit(x.Value); !ok {
				return true
			}
		case *syntax.SglQuoted, *syntax.DblQuoted:
		default:
			return true
		}
	}
	return false
}

// mayDash reports whether a dynamic word may expand to a word that starts
// with "-": an unquoted expansion anywhere (word splitting can start a new
// word with anything), or a leading part whose first character is not
// fixed (a quoted expansion, a glob character, brace expansion, an
// extended glob). A glob with a literal first character other than "-"
// (src/*.py, ./*, data/*.csv) cannot.
func mayDash(wd *syntax.Word) bool {
	for _, p := range wd.Parts {
		switch x := p.(type) {
		case *syntax.CmdSubst:
			if !hashSubst(x) {
				return true
			}
		case *syntax.ParamExp, *syntax.ArithmExp, *syntax.ExtGlob:
			return true // unquoted: split or (at the start) any first character
		}
	}
	for _, p := range wd.Parts {
		switch x := p.(type) {
		case *syntax.Lit:
			v := x.Value
			if v == "" {
				continue
			}
			switch v[0] {
			case '-', '*', '?', '[', '{':
				return true
			case '\\':
				return len(v) > 1 && v[1] == '-'
			}
			return false
		case *syntax.SglQuoted:
			v := x.Value
			if x.Dollar {
				v = ansiC(v)
			}
			if v == "" {
				continue
			}
			return v[0] == '-'
		case *syntax.ProcSubst:
			return false // /dev/fd/N
		case *syntax.CmdSubst:
			return false // hashSubst: an object name or an absolute path
		case *syntax.DblQuoted:
			for _, dp := range x.Parts {
				if cs, ok := dp.(*syntax.CmdSubst); ok && hashSubst(cs) {
					return false
				}
				l, ok := dp.(*syntax.Lit)
				if !ok {
					return true
				}
				if v := dqUnescape(l.Value); v != "" {
					return v[0] == '-'
				}
			}
		default:
			return true
		}
	}
	return false
}

// unquotedLit removes backslash escapes from an unquoted literal and reports
// false when it contains an unescaped glob or brace expansion.
func unquotedLit(s string) (string, bool) {
	if !strings.ContainsAny(s, "\\*?[{") {
		return s, true
	}
	var sb strings.Builder
	ok := true
	brace := -1
	lastClose := strings.LastIndexByte(s, ']')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			if i+1 < len(s) {
				i++
				if s[i] != '\n' {
					sb.WriteByte(s[i])
				}
			}
			continue
		case '*', '?':
			ok = false
		case '[':
			if lastClose > i {
				ok = false
			}
		case '{':
			brace = i
		case '}':
			if brace >= 0 {
				inner := s[brace+1 : i]
				if strings.Contains(inner, ",") || strings.Contains(inner, "..") {
					ok = false
				}
			}
		}
		sb.WriteByte(c)
	}
	return sb.String(), ok
}

// dqUnescape removes the escapes bash honours inside double quotes.
func dqUnescape(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '$', '`', '"', '\\':
				sb.WriteByte(s[i+1])
				i++
				continue
			case '\n':
				i++
				continue
			}
		}
		sb.WriteByte(s[i])
	}
	return sb.String()
}

// ansiC decodes the body of a $'...' string.
func ansiC(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			sb.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'a':
			sb.WriteByte(7)
		case 'b':
			sb.WriteByte(8)
		case 'e', 'E':
			sb.WriteByte(27)
		case 'f':
			sb.WriteByte(12)
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 't':
			sb.WriteByte('\t')
		case 'v':
			sb.WriteByte(11)
		case '\\', '\'', '"', '?':
			sb.WriteByte(e)
		case 'c':
			if i+1 < len(s) {
				i++
				sb.WriteByte(s[i] & 0x1f)
			}
		case 'x', 'u', 'U':
			max := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			j := i + 1
			for j < len(s) && j-i-1 < max && isHex(s[j]) {
				j++
			}
			if j == i+1 {
				sb.WriteByte('\\')
				sb.WriteByte(e)
				continue
			}
			n, _ := strconv.ParseUint(s[i+1:j], 16, 32)
			if e == 'x' {
				sb.WriteByte(byte(n))
			} else if utf8.ValidRune(rune(n)) {
				sb.WriteRune(rune(n))
			}
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j-i < 3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(s[i:j], 8, 32)
			sb.WriteByte(byte(n))
			i = j - 1
		default:
			sb.WriteByte('\\')
			sb.WriteByte(e)
		}
	}
	return sb.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// getopt splits arguments into options and operands. short lists the
// single-letter options that take a value, long the long options (without
// "--") that take one. With posix, the first operand ends the options (as
// for wrappers); otherwise options may follow operands (GNU style).
type opt struct {
	name   string // "x" for -x, "--name" for long options
	val    word
	hasVal bool
}

type parsed struct {
	opts []opt
	ops  []word
	dyn  bool // a splittable dynamic word may hide options
}

func (p parsed) has(names ...string) bool {
	for _, o := range p.opts {
		for _, n := range names {
			if o.name == n {
				return true
			}
		}
	}
	return false
}

func (p parsed) get(names ...string) (word, bool) {
	for _, o := range p.opts {
		for _, n := range names {
			if o.name == n && o.hasVal {
				return o.val, true
			}
		}
	}
	return word{}, false
}

func (p parsed) all(names ...string) []word {
	var out []word
	for _, o := range p.opts {
		for _, n := range names {
			if o.name == n && o.hasVal {
				out = append(out, o.val)
			}
		}
	}
	return out
}

func getopt(args []word, short string, long []string, posix bool) parsed {
	var p parsed
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.lit {
			if a.dash {
				p.dyn = true
			}
			if name, val, ok := dynamicLongOpt(a); ok {
				// --output=$X, "--output=$(…)": a long option whose name is
				// literal and whose value is not known statically (a
				// write to an unknown file, for git log).
				p.opts = append(p.opts, opt{name: name, val: val, hasVal: true})
				continue
			}
			p.ops = append(p.ops, a)
			if posix {
				p.ops = append(p.ops, args[i+1:]...)
				return p
			}
			continue
		}
		v := a.val
		switch {
		case v == "--":
			p.ops = append(p.ops, args[i+1:]...)
			return p
		case strings.HasPrefix(v, "--"):
			name, val, hasEq := strings.Cut(v, "=")
			o := opt{name: name}
			if hasEq {
				o.val, o.hasVal = word{val: val, lit: true}, true
			} else if contains(long, name[2:]) && i+1 < len(args) {
				i++
				o.val, o.hasVal = args[i], true
			}
			p.opts = append(p.opts, o)
		case len(v) > 1 && v[0] == '-':
			for j := 1; j < len(v); j++ {
				ch := v[j : j+1]
				if strings.Contains(short, ch) {
					o := opt{name: ch, hasVal: true}
					if j+1 < len(v) {
						o.val = word{val: v[j+1:], lit: true}
					} else if i+1 < len(args) {
						i++
						o.val = args[i]
					} else {
						o.hasVal = false
					}
					p.opts = append(p.opts, o)
					break
				}
				p.opts = append(p.opts, opt{name: ch})
			}
		default:
			p.ops = append(p.ops, a)
			if posix {
				p.ops = append(p.ops, args[i+1:]...)
				return p
			}
		}
	}
	return p
}

// dynamicLongOpt splits a dynamic word written as a long option with a
// literal name and "=" ("--output=$X", "--output="$(cmd)"", quoted as a
// whole or not) into the option's name and its value, a dynamic word.
func dynamicLongOpt(a word) (string, word, bool) {
	src := a.val
	if q := src[:min(1, len(src))]; q == `"` || q == "'" {
		src = strings.TrimSuffix(src[1:], q) // quoted as a whole
	}
	if !strings.HasPrefix(src, "--") {
		return "", word{}, false
	}
	eq := strings.IndexByte(src, '=')
	if eq < 3 {
		return "", word{}, false
	}
	for _, c := range src[2:eq] {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return "", word{}, false
		}
	}
	return src[:eq], word{val: src[eq+1:], split: a.split, dash: a.dash}, true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// hashSubst reports whether a command substitution prints only object
// names or absolute paths, which cannot start with "-": git merge-base,
// git rev-parse with options that print hashes or paths (not the flags
// it is given, nor ref names), git rev-list with options that print
// hashes. git diff $(git merge-base main HEAD) is then an operand.
func hashSubst(cs *syntax.CmdSubst) bool {
	if len(cs.Stmts) != 1 || cs.Stmts[0].Negated || cs.Stmts[0].Background {
		return false
	}
	for _, r := range cs.Stmts[0].Redirs {
		if r.N == nil || r.N.Value != "2" {
			return false
		}
	}
	ce, ok := cs.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(ce.Assigns) > 0 || len(ce.Args) < 2 {
		return false
	}
	args := make([]string, len(ce.Args))
	for i, a := range ce.Args {
		v, lit := wordValue(a)
		if !lit {
			return false
		}
		args[i] = v
	}
	if args[0] != "git" {
		return false
	}
	var safe func(string) bool
	switch args[1] {
	case "merge-base":
		safe = func(string) bool { return true } // prints commit hashes (or nothing)
	case "rev-parse":
		safe = func(o string) bool {
			switch o {
			case "--verify", "-q", "--quiet", "--short", "--symbolic-full-name", "--show-toplevel",
				"--absolute-git-dir", "--end-of-options":
				return true
			}
			return strings.HasPrefix(o, "--short=")
		}
	case "rev-list":
		safe = func(o string) bool {
			switch o {
			case "--first-parent", "--reverse", "--no-merges", "--merges", "--count", "--all", "--topo-order",
				"--date-order", "-n":
				return true
			}
			return strings.HasPrefix(o, "--max-count=") || strings.Trim(o, "-0123456789") == "" && len(o) > 1
		}
	default:
		return false
	}
	for i, a := range args[2:] {
		if strings.HasPrefix(a, "-") && !safe(a) {
			return false
		}
		if a == "-n" && (i+3 >= len(args) || strings.Trim(args[i+3], "0123456789") != "") {
			return false
		}
	}
	return true
}
