package shell

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// corpusCase is one line of testdata/corpus.txt.
type corpusCase struct {
	line   int
	cmd    string
	expect []string
}

func loadCorpus(t testing.TB) []corpusCase {
	t.Helper()
	f, err := os.Open("testdata/corpus.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []corpusCase
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndex(line, " => ")
		if i < 0 {
			if strings.HasPrefix(line, " => ") {
				i = 0
			} else {
				t.Fatalf("corpus.txt:%d: no \" => \" separator", n)
			}
		}
		cmd := line[:i]
		if q, ok := strings.CutPrefix(cmd, "q:"); ok {
			u, err := strconv.Unquote(q)
			if err != nil {
				t.Fatalf("corpus.txt:%d: bad quoted command: %v", n, err)
			}
			cmd = u
		}
		cases = append(cases, corpusCase{line: n, cmd: cmd, expect: strings.Fields(line[i+4:])})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

// TestCorpus runs every case of testdata/corpus.txt.
func TestCorpus(t *testing.T) {
	cases := loadCorpus(t)
	if len(cases) < 400 {
		t.Fatalf("corpus has %d cases, want at least 400", len(cases))
	}
	for _, c := range cases {
		c := c
		t.Run(fmt.Sprintf("L%d", c.line), func(t *testing.T) {
			a, err := Analyze(c.cmd)
			for _, e := range c.expect {
				if msg := checkExpect(a, err, e); msg != "" {
					t.Errorf("corpus.txt:%d %q: %s: %s", c.line, c.cmd, e, msg)
				}
			}
			if a != nil {
				checkInvariants(t, a)
			}
			if t.Failed() && a != nil {
				for _, cmd := range a.Commands {
					t.Logf("  %q %s w=%v r=%v wrap=%v", cmd.Argv, cmd.Classes, cmd.Writes, cmd.Reads, cmd.Wrappers)
				}
				t.Logf("  env=%v dumps=%v", a.EnvRefs, a.DumpsEnv)
			}
		})
	}
}

// checkInvariants checks what holds for every analysis: a command that
// writes, modifies or deletes names at least one target; the line's classes
// are the union of its commands'; every command's targets are in the
// line's unions.
func checkInvariants(t testing.TB, a *Analysis) {
	t.Helper()
	var union Class
	for _, c := range a.Commands {
		union |= c.Classes
		if c.Classes&(ClassWrite|ClassModify|ClassDelete) != 0 && len(c.Writes) == 0 {
			t.Errorf("%q is %s but names no write target", c.Argv, c.Classes)
		}
		for _, w := range c.Writes {
			if !containsTarget(a.Writes, w) {
				t.Errorf("write %v of %q missing from the line's writes", w, c.Argv)
			}
		}
		for _, r := range c.Reads {
			if !containsTarget(a.Reads, r) {
				t.Errorf("read %v of %q missing from the line's reads", r, c.Argv)
			}
		}
	}
	if union != a.Classes {
		t.Errorf("line classes %s, union of commands %s", a.Classes, union)
	}
}

func containsTarget(ts []Target, t Target) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

func checkExpect(a *Analysis, err error, e string) string {
	if e == "err" {
		var pe *ParseError
		if !errors.As(err, &pe) {
			return fmt.Sprintf("want a *ParseError, got err=%v", err)
		}
		return ""
	}
	if err != nil {
		return fmt.Sprintf("unexpected error %v", err)
	}
	if a == nil {
		return "nil analysis with nil error"
	}
	key, val, _ := strings.Cut(e, ":")
	switch {
	case strings.HasPrefix(e, "+") || strings.HasPrefix(e, "-"):
		cl, ok := ClassByName(e[1:])
		if !ok {
			return "unknown class"
		}
		if (e[0] == '+') != a.Classes.Has(cl) {
			return fmt.Sprintf("classes are %s", a.Classes)
		}
	case key == "only":
		var set Class
		for _, n := range strings.Split(val, ",") {
			cl, ok := ClassByName(n)
			if !ok {
				return "unknown class " + n
			}
			set |= cl
		}
		if a.Classes == 0 || a.Classes&^set != 0 {
			return fmt.Sprintf("classes are %s", a.Classes)
		}
	case key == "w":
		for _, t := range a.Writes {
			if val == "?" && t.Dynamic || !t.Dynamic && t.Path == val {
				return ""
			}
		}
		return fmt.Sprintf("writes are %v", a.Writes)
	case key == "r":
		for _, t := range a.Reads {
			if !t.Dynamic && t.Path == val {
				return ""
			}
		}
		return fmt.Sprintf("reads are %v", a.Reads)
	case e == "nowrite":
		if len(a.Writes) > 0 {
			return fmt.Sprintf("writes are %v", a.Writes)
		}
	case e == "dyn":
		for _, c := range a.Commands {
			if c.Dynamic {
				return ""
			}
		}
		return "no dynamic command"
	case key == "env":
		for _, r := range a.EnvRefs {
			if r == val {
				return ""
			}
		}
		return fmt.Sprintf("env refs are %v", a.EnvRefs)
	case e == "dumpsenv":
		if !a.DumpsEnv {
			return "DumpsEnv is false"
		}
	case e == "noenv":
		if len(a.EnvRefs) > 0 || a.DumpsEnv || a.IndirectEnv {
			return fmt.Sprintf("env refs %v, dumps %v, indirect %v", a.EnvRefs, a.DumpsEnv, a.IndirectEnv)
		}
	case e == "indirect":
		if !a.IndirectEnv {
			return "IndirectEnv is false"
		}
	case e == "nested":
		for _, c := range a.Commands {
			if c.Nested {
				return ""
			}
		}
		return "no nested command"
	case key == "prog" || key == "wrap" || key == "sub":
		for _, c := range a.Commands {
			switch key {
			case "prog":
				if c.Program == val {
					return ""
				}
			case "sub":
				if c.Subcommand == val {
					return ""
				}
			case "wrap":
				for _, w := range c.Wrappers {
					if w == val {
						return ""
					}
				}
			}
		}
		return "not found"
	case key == "cmds":
		n, _ := strconv.Atoi(val)
		if len(a.Commands) != n {
			return fmt.Sprintf("%d commands", len(a.Commands))
		}
	default:
		return "unknown expectation"
	}
	return ""
}
