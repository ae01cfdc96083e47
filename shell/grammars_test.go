package shell

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestGrammarsKnowRealOptions checks each GNU grammar against the installed
// tool's --help: every long option the tool documents must be in the
// grammar (an option a strict grammar does not know counts as running
// code, so a missing one is a false block; one with a missing effect is a
// hole).
func TestGrammarsKnowRealOptions(t *testing.T) {
	longOpt := regexp.MustCompile(`--([a-zA-Z][-a-zA-Z0-9.]*)`)
	for _, tool := range []string{"sort", "uniq", "shuf", "sed", "tar", "cp", "mv", "ln", "install", "tee",
		"split", "date", "touch", "diff", "diff3", "sdiff", "gawk", "less", "man", "curl", "wget", "patch", "xargs",
		"mktemp", "rsync", "cpio", "env", "timeout", "nice", "stdbuf"} {
		t.Run(tool, func(t *testing.T) {
			path, err := exec.LookPath(tool)
			if err != nil {
				if os.Getenv("CI") == "true" {
					t.Fatalf("%s is not installed (.ci/run installs it)", tool)
				}
				t.Skipf("%s is not installed", tool)
			}
			help := []string{"--help"}
			if tool == "curl" {
				help = append(help, "all") // --help alone lists a few
			}
			out, _ := exec.Command(path, help...).CombinedOutput()
			g, ok := GrammarFor(tool)
			if !ok {
				t.Fatalf("no grammar for %s", tool)
			}
			g.index()
			seen := map[string]bool{}
			for _, m := range longOpt.FindAllStringSubmatch(string(out), -1) {
				name := strings.TrimRight(m[1], "-.")
				if seen[name] || name == "" || strings.Contains(name, "TYPE-") || name == "no-OPTION" {
					continue
				}
				seen[name] = true
				if _, ok := g.long[name]; !ok {
					t.Errorf("%s --help documents --%s, which the grammar does not know", tool, name)
				}
			}
			if len(seen) < 3 {
				t.Errorf("%s --help listed %d long options; is it GNU %s?", tool, len(seen), tool)
			}
		})
	}
}

// TestParseOptionsGrammar pins how the engine reads the styles.
func TestParseOptionsGrammar(t *testing.T) {
	tests := []struct {
		prog string
		args []string
		want []string // canonical option[=value] in order, then "|" and the operands
	}{
		{"sort", []string{"--outp=f", "in"}, []string{"o=f", "|", "in"}},
		{"sort", []string{"-uo", "f", "in"}, []string{"u", "o=f", "|", "in"}},
		{"sort", []string{"-oout", "in", "-r"}, []string{"o=out", "r", "|", "in"}},
		{"sort", []string{"--", "-o", "x"}, []string{"|", "-o", "x"}},
		{"sed", []string{"-ie", "s/a/b/", "f"}, []string{"i=e", "|", "s/a/b/", "f"}},
		{"sed", []string{"--in-pl", "s/a/b/", "f"}, []string{"i", "|", "s/a/b/", "f"}},
		{"gawk", []string{"-o", "x.awk", "f"}, []string{"o", "|", "x.awk", "f"}},
		{"gawk", []string{"-W", "exec=x"}, []string{"E=x", "|"}},
		{"go test", []string{"./...", "-run=X", "--exec", "y"}, []string{"run=X", "exec=y", "|", "./..."}},
		{"go test", []string{"-v", "-args", "-test.v"}, []string{"v", "args", "|"}},
		{"pytest", []string{"-cFILE", "-k", "x", "t/"}, []string{"c=FILE", "k=x", "|", "t/"}},
		{"pytest", []string{"-c=FILE"}, []string{"c=FILE", "|"}},
		{"pytest", []string{"--debug", "t/"}, []string{"debug=t/", "|"}},
		{"pytest", []string{"-xvs", "t/"}, []string{"x", "v", "s", "|", "t/"}},
		{"jest", []string{"--setup-files", "./e.js", "--no-cache"}, []string{"setupFiles=./e.js", "cache", "|"}},
		{"jest", []string{"-t=foo", "src"}, []string{"t=foo", "|", "src"}},
		{"node", []string{"--test", "--test_reporter=x"}, []string{"test", "test-reporter=x", "|"}},
		{"git clone", []string{"--upl=x", "--no-check", "-qb", "main", "src"}, []string{"upload-pack=x", "no-checkout", "quiet", "branch=main", "|", "src"}},
		{"git clone", []string{"--no-upload-pack", "--end-of-options", "-x"}, []string{"no-upload-pack", "|", "-x"}},
		{"git log", []string{"-C", "--output=o", "-5", "-n", "3"}, []string{"C", "output=o", "NUM", "n=3", "|"}},
		{"git log", []string{"--outp=o"}, []string{"outp=o", "|"}},
		{"wget", []string{"--no-verb", "--no-clob", "u"}, []string{"no-verbose", "no-clobber", "|", "u"}},
	}
	for _, tt := range tests {
		p, ok := ParseOptions(tt.prog, tt.args)
		if !ok {
			t.Fatalf("no grammar %s", tt.prog)
		}
		var got []string
		for _, o := range p.Options {
			s := o.Name
			if o.HasValue {
				s += "=" + o.Value.Value
			}
			got = append(got, s)
		}
		got = append(got, "|")
		for _, a := range p.Operands {
			got = append(got, a.Value)
		}
		if strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("%s %q: got %q, want %q", tt.prog, tt.args, got, tt.want)
		}
	}
}

// TestGrammarsKnowRealShortOptions checks the grammars of programs that
// have only short options (OpenSSH's ssh, scp, sftp; Info-ZIP's unzip)
// against the usage the installed program prints: every letter it lists
// must be in the grammar, taking a value exactly when the usage says so.
func TestGrammarsKnowRealShortOptions(t *testing.T) {
	group := regexp.MustCompile(`\[-([0-9A-Za-z]+)\]`)
	valued := regexp.MustCompile(`\[-([0-9A-Za-z]) [^\]]+\]`)
	for _, tool := range []string{"ssh", "scp", "sftp"} {
		t.Run(tool, func(t *testing.T) {
			path, err := exec.LookPath(tool)
			if err != nil {
				t.Skipf("%s is not installed", tool)
			}
			out, _ := exec.Command(path).CombinedOutput()
			g, ok := GrammarFor(tool)
			if !ok {
				t.Fatalf("no grammar for %s", tool)
			}
			g.index()
			n := 0
			for _, m := range group.FindAllStringSubmatch(string(out), -1) {
				for _, c := range []byte(m[1]) {
					n++
					if o := g.short[c]; o == nil {
						t.Errorf("%s's usage lists -%c, which the grammar does not know", tool, c)
					} else if o.Arg != NoArg {
						t.Errorf("%s's usage lists -%c as a flag; the grammar gives it a value", tool, c)
					}
				}
			}
			for _, m := range valued.FindAllStringSubmatch(string(out), -1) {
				n++
				c := m[1][0]
				if o := g.short[c]; o == nil {
					t.Errorf("%s's usage lists -%c VALUE, which the grammar does not know", tool, c)
				} else if o.Arg != RequiredArg {
					t.Errorf("%s's usage lists -%c with a value; the grammar says it takes none", tool, c)
				}
			}
			if n < 10 {
				t.Errorf("%s's usage listed %d options:\n%s", tool, n, out)
			}
		})
	}
}
