package shell

import (
	"errors"
	"path"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// FuzzAnalyze checks that Analyze never panics, answers within bounds,
// returns a *ParseError exactly when the input does not parse, and reports
// every output redirection to a file that appears in the syntax tree.
func FuzzAnalyze(f *testing.F) {
	for _, c := range loadCorpus(f) {
		f.Add(c.cmd)
	}
	f.Add("exec 3>f; echo x >&3; cat <&3")
	f.Add("cd /etc && echo x > passwd")
	f.Add("f() { echo > a; }; f > b 2>&1 | tee c")
	f.Fuzz(func(t *testing.T, src string) {
		a, err := Analyze(src)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			if a != nil {
				t.Fatal("non-nil analysis with an error")
			}
			return
		}
		if a == nil {
			t.Fatal("nil analysis with nil error")
		}
		file, perr := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
		if perr != nil {
			t.Fatalf("Analyze accepted input the parser rejects: %v", perr)
		}
		if max := 16 * (len(src) + 1); len(a.Commands) > max {
			t.Fatalf("%d commands for %d bytes", len(a.Commands), len(src))
		}
		for _, c := range a.Commands {
			if c.Classes&^(ClassUnknown<<1-1) != 0 {
				t.Fatalf("undefined class bits %b", c.Classes)
			}
		}
		checkInvariants(t, a)
		if a.Classes.Has(ClassUnknown) {
			return // part of the tree was not analysed (depth bound); it is denied anyway
		}
		syntax.Walk(file, func(n syntax.Node) bool {
			r, ok := n.(*syntax.Redirect)
			if !ok || r.Word == nil {
				return true
			}
			switch r.Op {
			case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll,
				syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob, syntax.RdrInOut, syntax.DplOut:
			default:
				return true
			}
			if len(r.Word.Parts) == 1 {
				if _, ok := r.Word.Parts[0].(*syntax.ProcSubst); ok {
					return true
				}
			}
			v, lit := wordValue(r.Word)
			if lit && (harmlessDevice(v) || strings.HasPrefix(v, "/dev/tcp/") || strings.HasPrefix(v, "/dev/udp/")) {
				return true
			}
			if r.Op == syntax.DplOut && lit && (v == "-" || v != "" && strings.Trim(strings.TrimSuffix(v, "-"), "0123456789") == "") {
				return true
			}
			if !reported(src, a.Writes, v, lit) {
				t.Fatalf("redirect %q (literal %v) not among writes %v", v, lit, a.Writes)
			}
			return true
		})
	})
}

// reported reports whether a redirect target v appears among the writes.
// A relative target may have been joined to a directory the line changed to
// with cd, so it is matched by base name.
func reported(src string, ws []Target, v string, lit bool) bool {
	for _, w := range ws {
		if w.Dynamic && (!lit || w.Path == v) {
			return true
		}
	}
	if !lit {
		return false
	}
	clean := path.Clean(v)
	if clean == "." || clean == ".." || clean == "/" {
		return true
	}
	for _, w := range ws {
		if !w.Dynamic && (w.Path == v || !strings.HasPrefix(v, "/") && path.Base(w.Path) == path.Base(clean)) {
			return true
		}
	}
	// after a cd the target may have been joined into a harmless device
	// (cd /dev; > null); TestCdFollowsTargets covers cd itself
	return !strings.HasPrefix(v, "/") && (strings.Contains(src, "cd") || strings.Contains(src, "pushd"))
}

// TestPrefixes analyses every prefix and suffix of every corpus command
// (the shapes an agent's half-written command takes): no panic, a *ParseError or an
// analysis that keeps the invariants.
func TestPrefixes(t *testing.T) {
	n := 0
	for _, c := range loadCorpus(t) {
		for i := 0; i <= 2*len(c.cmd); i++ {
			src := c.cmd[:min(i, len(c.cmd))] // prefixes, then suffixes
			if i > len(c.cmd) {
				src = c.cmd[i-len(c.cmd):]
			}
			a, err := Analyze(src)
			n++
			if err != nil {
				var pe *ParseError
				if !errors.As(err, &pe) || a != nil {
					t.Fatalf("Analyze(%q) = %v, %v", src, a, err)
				}
				continue
			}
			checkInvariants(t, a)
			if t.Failed() {
				t.Fatalf("invariants broken for %q", src)
			}
		}
	}
	t.Logf("%d prefixes and suffixes", n)
}

// TestOptionInjection inserts option-like words after the first and second
// word of every corpus command, where option parsers consume values: no
// panic, and the invariants hold.
func TestOptionInjection(t *testing.T) {
	tokens := []string{"-o", "-c", "-e", "-f", "--", "-i", "-x", "-C", "-exec", "-D", "-S", "--output", "-", "''", "$x"}
	for _, c := range loadCorpus(t) {
		words := strings.Fields(c.cmd)
		for pos := 1; pos <= 2 && pos <= len(words); pos++ {
			for _, tok := range tokens {
				for _, atEnd := range []bool{false, true} {
					w := append(append(append([]string{}, words[:pos]...), tok), words[pos:]...)
					if atEnd {
						w = append(append([]string{}, words[:pos]...), tok)
					}
					src := strings.Join(w, " ")
					a, err := Analyze(src)
					if err != nil {
						continue
					}
					checkInvariants(t, a)
					if t.Failed() {
						t.Fatalf("invariants broken for %q", src)
					}
				}
			}
		}
	}
}

// FuzzParseOptions checks the option parser on every grammar: no panic,
// every word is accounted for (an option, its value, an operand or passed
// on), and indexes point at the words they came from.
func FuzzParseOptions(f *testing.F) {
	f.Add("sort", "--outp=f\x00-uo\x00x\x00in.txt")
	f.Add("go test", "-run=X\x00./...\x00-args\x00-test.v")
	f.Add("pytest", "-cFILE\x00-k\x00not slow\x00--debug\x00t/")
	f.Add("jest", "--setup-files\x00x.js\x00--no-cache\x00-t=x")
	f.Add("gawk", "-W\x00exec=x\x00-iinplace\x00--incl=x")
	f.Add("tar", "-xzf\x00a.tgz\x00--to-comm=sh\x00--\x00-x")
	f.Add(gJSRunner, "-u\x00--coverage\x00--reporter=./r.js")
	f.Add("git clone", "--upl=x\x00--no-check\x00-qbmain\x00--end-of-options\x00-x")
	f.Add("git log", "-C\x00--output\x00o\x00-5\x00--no-ext-diff")
	f.Add("fd", "-Hx\x00--ignore-file=f\x00-e\x00go")
	f.Fuzz(func(t *testing.T, name, joined string) {
		g, ok := GrammarFor(name)
		if !ok {
			return
		}
		args := strings.Split(joined, "\x00")
		if len(args) > 64 {
			args = args[:64]
		}
		p, _ := ParseOptions(name, args)
		if p == nil || p != nil && g.Name == "" {
			t.Fatal("no result")
		}
		used := map[int]bool{}
		for _, o := range p.Options {
			if o.Index < 0 || o.Index >= len(args) {
				t.Fatalf("option index %d out of range", o.Index)
			}
			used[o.Index] = true
			if o.As == "-W" && o.Index+1 < len(args) {
				used[o.Index+1] = true // gawk's -W NAME
			}
			if o.HasValue {
				if o.Value.Index < 0 || o.Value.Index >= len(args) {
					t.Fatalf("value index %d out of range", o.Value.Index)
				}
				used[o.Value.Index] = true
			}
		}
		for _, a := range p.Operands {
			if a.Index < 0 || a.Index >= len(args) || args[a.Index] != a.Value {
				t.Fatalf("operand %+v does not match its word", a)
			}
			used[a.Index] = true
		}
		for _, a := range p.Passed {
			used[a.Index] = true
		}
		if p.DashDash >= 0 {
			used[p.DashDash] = true
		}
		for i := range args {
			if !used[i] {
				t.Fatalf("word %d %q is neither option, value nor operand: %+v", i, args[i], p)
			}
		}
	})
}
