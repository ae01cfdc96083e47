package shell

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/statewright-go/statewright/sandbox"
)

// The differential tests run real bash (and real GNU tools) inside a
// sandbox and compare what they did with what the analysis says: every
// program bash ran must be a command the analysis found, with the same
// arguments; every file that appeared must be a write the analysis
// reported. Where the two disagree the analysis is wrong (or must deny).

// sandboxRunner runs argv in a sandbox that can write only dir, with no
// network: package sandbox's bubblewrap profile (docs/shell.md: one
// bubblewrap wrapper in the tree).
type sandboxRunner struct{ bwrap string }

func (b sandboxRunner) Run(ctx context.Context, dir string, env []string, argv []string) ([]byte, error) {
	args, err := sandbox.Args(&sandbox.Profile{Writable: []string{dir}, Visible: []string{dir}}, dir, argv)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, b.bwrap, args...)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	return out.Bytes(), err
}

// testSandbox returns the sandbox the differential tests run in. In CI
// (CI=true or STATEWRIGHT_REQUIRE_SANDBOX=1) a missing sandbox fails the
// test instead of skipping it.
func testSandbox(t *testing.T) sandboxRunner {
	t.Helper()
	required := os.Getenv("CI") == "true" || os.Getenv("STATEWRIGHT_REQUIRE_SANDBOX") == "1"
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	a := sandbox.Probe(ctx)
	if a.OK() {
		return sandboxRunner{a.Bwrap}
	}
	if required {
		t.Fatalf("no sandbox for the differential test: %s", a.Why)
	}
	t.Skipf("no sandbox for the differential test: %s", a.Why)
	return sandboxRunner{}
}

// recorder is the program every fake command name runs: it appends its
// name and arguments, NUL separated and ended by \001 NUL, to $DIFFLOG in
// one printf (one write), so that commands run in the background do not
// interleave their records.
const recorder = "#!/bin/sh\nprintf '%s\\0' \"${0##*/}\" \"$@\" \"$(printf '\\001')\" >> \"$DIFFLOG\"\n"

// fakeNames are the commands the generated scripts run.
var fakeNames = []string{"c1", "c2", "c3", "c4", "rm", "curl"}

// diffFragments are shapes where a shell lexer may go wrong.
var diffFragments = []string{
	"c1 a # note \\\nc2 b",
	"c1 a\\\nc2",
	"c1 'a # b' #c1 x",
	"c1 a#b c2",
	"c1 $'a\\'b' c2",
	"c1 \"a\\\" c2\" c3",
	"c1 <<'E'\nc2 x\nE\nc3",
	"c1 <<E; c2\nbody $(c3 in)\nE",
	"c1 <<-E\n\tc2\n\tE\nc3",
	"c1 <<E\"F\"\nc2\nEF\nc3",
	"c1 <<E # c\\\nc2\nE",
	"c1 $(c2 ')' )",
	"c1 `c2 \\`c3\\``",
	"case x in x) c1;; esac",
	"case x in (x) c1 ;& y) c2;; esac",
	"{ c1; }",
	"c1 {a,b}",
	"c1 {a..c}",
	"[[ a == b ]] || c1",
	"(( 1 )) && c2",
	"function f { c1; }; f",
	"f() ( c2 ); f",
	"c1 &>x1",
	"c1 >&x2",
	"c1 2>x3",
	"c1 >x4 c2",
	"c1 $'\\x63'2",
	"alias c1=c2; c1",
	"c1;c2&c3|c4",
	"c1 |& c2",
	"! c1",
	"time c1",
	"c1 \\\n# x\nc2",
	"x=1 c1",
	"eval 'c1 a'",
	"bash -c 'c2 b # \\\nc3'",
	"c1 ${x:-$(c2)}",
	"c1 \"${x:-\"$(c3)\"}\"",
	"c1 a\\ b",
	"c1 'a'\"b\"c",
	"c1 # c2",
	"c1 #\\\nc2",
	"echo x > y5; c1",
	"c1 $((1+1))",
	"c1 <(c2) >(c3)",
	"if c1; then c2; fi",
	"while false; do c1; done; c2",
	"for i in a b; do c1 $i; done",
	"c1 \\# c2",
	"c1 \\\\\nc2",
	"c1 '\\' # \\\nc2",
	"c1 \"#\" \\\nc2",
	"c1 a \\\n\\\nb",
	"c1 ;; c2",
	"c1 &;",
	"c1 $'\\n' # x \\\nc2",
	"c1 <<<\"c2 # \\\n\" ; c3",
	"c1 $(# c \\\nc2)",
	"c1 $( c2 # )\n)",
	"rm -rf target # \\\ncurl x",
}

// genScript builds a script from fragments, joined by separators, with
// line continuations and comments sprinkled between words.
func genScript(r *rand.Rand) string {
	n := 1 + r.Intn(3)
	var parts []string
	for i := 0; i < n; i++ {
		f := diffFragments[r.Intn(len(diffFragments))]
		if r.Intn(4) == 0 {
			f = strings.Replace(f, " ", []string{" \\\n", " #x\\\n", "\t", " # y \\\n"}[r.Intn(4)], 1)
		}
		parts = append(parts, f)
	}
	seps := []string{"\n", "; ", " && ", " || ", " | ", " # z \\\n", "\n#\\\n", " &\n"}
	var sb strings.Builder
	for i, p := range parts {
		if i > 0 {
			sb.WriteString(seps[r.Intn(len(seps))])
		}
		sb.WriteString(p)
	}
	return sb.String()
}

// TestDifferentialBash runs generated scripts under real bash in a sandbox
// and checks that the analysis saw every program bash ran and every file
// bash created.
func TestDifferentialBash(t *testing.T) {
	sb := testSandbox(t)
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal("bash not found")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	must(t, os.Mkdir(bin, 0o755))
	for _, n := range fakeNames {
		must(t, os.WriteFile(filepath.Join(bin, n), []byte(recorder), 0o755))
	}
	must(t, os.Symlink(bash, filepath.Join(bin, "bash")))
	r := rand.New(rand.NewSource(14))
	var scripts []string
	scripts = append(scripts, diffFragments...)
	total := 400
	if n, err := strconv.Atoi(os.Getenv("STATEWRIGHT_DIFF_CASES")); err == nil && n > 0 {
		total = n // a longer run: scripts/fuzz-shell.sh
	}
	for len(scripts) < total {
		scripts = append(scripts, genScript(r))
	}
	cases := filepath.Join(dir, "cases")
	must(t, os.Mkdir(cases, 0o755))
	for i, s := range scripts {
		must(t, os.WriteFile(filepath.Join(cases, strconv.Itoa(i)), []byte(s), 0o644))
		must(t, os.MkdirAll(filepath.Join(dir, "work", strconv.Itoa(i)), 0o755))
	}
	driver := `set +e
for f in "$1"/cases/*; do
  i=${f##*/}
  cd "$1/work/$i" || exit 1
  s=$(cat "$f")
  DIFFLOG="$1/work/$i.log" PATH="$1/bin" "$1/bin/bash" --norc --noprofile -c "$s" </dev/null >/dev/null 2>&1
done
exit 0
`
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if out, err := sb.Run(ctx, dir, []string{"HOME=" + dir, "PATH=/usr/bin:/bin"}, []string{bash, "--norc", "--noprofile", "-c", driver, "driver", dir}); err != nil {
		t.Fatalf("driver: %v\n%s", err, out)
	}
	checked := 0
	for i, s := range scripts {
		a, err := Analyze(s)
		if err != nil {
			continue // denied anyway
		}
		checked++
		log, _ := os.ReadFile(filepath.Join(dir, "work", strconv.Itoa(i)+".log"))
		for _, rec := range strings.Split(string(log), "\x01\x00") {
			if rec == "" {
				continue
			}
			argv := strings.Split(strings.TrimSuffix(rec, "\x00"), "\x00")
			if !analysisRan(a, argv) {
				t.Errorf("script %q: bash ran %q, which the analysis did not see:\n%s", s, argv, describe(a))
			}
		}
		wd := filepath.Join(dir, "work", strconv.Itoa(i))
		entries, _ := os.ReadDir(wd)
		for _, e := range entries {
			if !analysisWrote(a, e.Name()) {
				t.Errorf("script %q: bash created %q, not among the writes %v", s, e.Name(), a.Writes)
			}
		}
	}
	if checked < len(scripts)/2 {
		t.Errorf("only %d of %d scripts parsed", checked, len(scripts))
	}
	t.Logf("%d scripts, %d parsed and compared", len(scripts), checked)
}

// analysisRan reports whether the analysis has a command that runs argv:
// the same program and literal arguments, or a command whose program or
// arguments it could not know (exec/unknown, dynamic words).
func analysisRan(a *Analysis, argv []string) bool {
	for _, c := range a.Commands {
		if c.Dynamic || c.Classes&ClassUnknown != 0 {
			return true
		}
		if c.Program != argv[0] || len(c.Argv) == 0 {
			continue
		}
		off := len(c.Words) - len(c.Argv)
		if off < 0 {
			continue
		}
		ok := true
		dyn := false
		for j, w := range c.Words[off:] {
			if !w.Literal {
				dyn = true
				break
			}
			if j >= len(argv) || w.Text != argv[j] {
				ok = false
				break
			}
		}
		if dyn || ok && len(c.Words)-off == len(argv) {
			return true
		}
	}
	return false
}

// analysisWrote reports whether name (created in the script's directory)
// is a write the analysis reported, or the analysis has a write it could
// not name.
func analysisWrote(a *Analysis, name string) bool {
	for _, w := range a.Writes {
		if w.Dynamic || w.Path == name || w.Path == "./"+name {
			return true
		}
	}
	return false
}

func describe(a *Analysis) string {
	var sb strings.Builder
	for _, c := range a.Commands {
		fmt.Fprintf(&sb, "  %q %s\n", c.Argv, c.Classes)
	}
	return sb.String()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// toolCases run real GNU tools on fixture files; the canary program
// `evil` records that it ran. Each case is checked both ways where the
// analysis has a grammar: what the tool really wrote or ran must be in the
// analysis.
var toolCases = []string{
	"sort --outp=o1 in.txt", "sort -oo2 in.txt", "sort -uo o3 in.txt", "sort --output o4 in.txt",
	"sort --comp=evil -S 1 -T . big.txt", "sort --compress-prog=evil --buffer=1 -T. big.txt",
	"sort -u in.txt", "sort -k1 -t, in.txt", "sort --debug in.txt", "sort -T t1 in.txt",
	"shuf --outp=o5 in.txt", "shuf -o o6 in.txt", "shuf -n1 in.txt",
	"uniq in.txt o7", "uniq -c in.txt", "uniq --skip-f=1 in.txt o8",
	"sed --in-pl s/a/b/ e1.txt", "sed -i.bak s/a/b/ e2.txt", "sed -ie s/a/b/ e3.txt", "sed -n 1p in.txt",
	"sed --expr=1e\\ evil in.txt", "sed -e 's/a/b/w o9' in.txt", "sed --e='1w o10' in.txt", "sed --sand -n 1p in.txt",
	"sed -s -n '$p' in.txt", "sed -E 's/(a)/\\1/' in.txt", "sed 's/a/b/e' in.txt",
	"gawk -oo11 'BEGIN{}'", "gawk -o o12 'BEGIN{}'", "gawk --pretty=o13 'BEGIN{}'", "gawk -p 'BEGIN{}'",
	"gawk --dump=o14 'BEGIN{}'", "gawk 'BEGIN{system(\"evil\")}'", "gawk 'BEGIN{print \"x\" | \"evil\"}'",
	"gawk 'BEGIN{\"evil\" | getline x}'", "gawk 'BEGIN{print 1 > \"o15\"}'", "gawk 'BEGIN{x=4/2; print x/2}'",
	"gawk -i inplace '{print}' e4.txt", "gawk --incl=inplace '{print}' e5.txt", "gawk '{print $1}' in.txt",
	"mawk 'BEGIN{system(\"evil\")}'", "mawk '{print > \"o16\"}' in.txt", "mawk 'BEGIN { a = 6 / 3 / 1; print a }'",
	"gawk 'BEGIN { n = 1; x = n /2/ 1; print x }'", "gawk '/a|evil/ {print}' in.txt",
	"tar -cf o17.tar in.txt", "tar --to-comm=evil -xf a.tar", "tar -xf a.tar --checkpoint=1 --checkpoint-act=exec=evil",
	"tar -cf o18.tar -I evil in.txt", "tar -tf a.tar", "tar -xf a.tar -C x1", "tar cf o19.tar in.txt",
	"tar -cf /dev/null --index-file=o20 in.txt", "tar --use-comp=evil -cf o21.tar in.txt",
	"less -oo22 in.txt", "less --log-f=o23 in.txt", "less in.txt", "less '+!evil' in.txt",
	"find . -name in.txt", "find . -name in.txt -fprint o24", "find . -name in.txt -exec evil {} ;",
	"find . -newer in.txt -delete", "find . -maxdepth 1 -type f",
	"cp in.txt o25", "cp -t x2 in.txt", "cp --target-dir=x3 in.txt", "mv e6.txt o26", "ln -s in.txt o27",
	"tee o28 < in.txt", "tee -a o29 < in.txt", "split -l1 in.txt o30", "split --filter='evil' in.txt",
	"diff3 --diff-prog=evil in.txt in.txt in.txt", "sdiff -o o31 in.txt in.txt", "sdiff --diff-pro=evil in.txt in.txt",
	"head -n1 in.txt", "tail -n1 in.txt", "cat in.txt", "wc -l in.txt", "cut -c1 in.txt", "touch o32",
	"date", "date -r in.txt", "install --strip-prog=evil -s in.txt o33", "install -m 644 in.txt o34",
}

// TestDifferentialTools runs real tools in a sandbox and checks the
// analysis against what each did: a file it created, changed or removed
// must be a write target (or the analysis has one it cannot name), and a
// canary program it ran must make the analysis exec.
func TestDifferentialTools(t *testing.T) {
	sb := testSandbox(t)
	bash, _ := exec.LookPath("bash")
	for _, tool := range []string{"gawk", "mawk", "tar", "less", "sed", "find", "diff3", "sdiff"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not installed (.ci/run installs it)", tool)
			}
			t.Skipf("%s is not installed", tool)
		}
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	must(t, os.Mkdir(bin, 0o755))
	must(t, os.WriteFile(filepath.Join(bin, "evil"), []byte("#!/bin/sh\necho ran >> \"$DIFFLOG\"\ncat >/dev/null\n"), 0o755))
	fixture := filepath.Join(dir, "fixture")
	must(t, os.MkdirAll(filepath.Join(fixture, "x1"), 0o755))
	must(t, os.MkdirAll(filepath.Join(fixture, "x2"), 0o755))
	must(t, os.MkdirAll(filepath.Join(fixture, "x3"), 0o755))
	must(t, os.WriteFile(filepath.Join(fixture, "in.txt"), []byte("a b\na c\nb d\n"), 0o644))
	var big strings.Builder
	for i := 0; i < 30000; i++ {
		fmt.Fprintf(&big, "%d line\n", (i*7919)%30000)
	}
	must(t, os.WriteFile(filepath.Join(fixture, "big.txt"), []byte(big.String()), 0o644))
	for i := 1; i <= 6; i++ {
		must(t, os.WriteFile(filepath.Join(fixture, fmt.Sprintf("e%d.txt", i)), []byte("abc\n"), 0o644))
	}
	tarCmd := exec.Command("tar", "-cf", filepath.Join(fixture, "a.tar"), "-C", fixture, "in.txt")
	if out, err := tarCmd.CombinedOutput(); err != nil {
		t.Fatalf("tar: %v %s", err, out)
	}
	cases := filepath.Join(dir, "cases")
	must(t, os.Mkdir(cases, 0o755))
	for i, c := range toolCases {
		must(t, os.WriteFile(filepath.Join(cases, strconv.Itoa(i)), []byte(c), 0o644))
	}
	driver := `set +e
for f in "$1"/cases/*; do
  i=${f##*/}
  cp -a "$1/fixture" "$1/work.$i"
  s=$(cat "$f")
  ( cd "$1/work.$i" && DIFFLOG="$1/log.$i" PATH="$1/bin:/usr/bin:/bin" timeout 20 bash --norc -c "$s" </dev/null >/dev/null 2>&1 )
done
exit 0
`
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if out, err := sb.Run(ctx, dir, []string{"HOME=" + dir, "PATH=/usr/bin:/bin", "LESSOPEN=", "LESS="}, []string{bash, "--norc", "-c", driver, "driver", dir}); err != nil {
		t.Fatalf("driver: %v\n%s", err, out)
	}
	before := snapshot(t, fixture)
	ran := 0
	defer func() {
		if ran < 10 {
			t.Errorf("the canary ran in %d cases; the harness is not observing the tools", ran)
		}
	}()
	for i, c := range toolCases {
		a, err := Analyze(c)
		if err != nil {
			t.Errorf("%q does not parse: %v", c, err)
			continue
		}
		if log, _ := os.ReadFile(filepath.Join(dir, "log."+strconv.Itoa(i))); len(log) > 0 {
			ran++
			if !a.Has(ClassExec) {
				t.Errorf("%q ran a program, but the analysis says %s", c, a.Classes)
			}
		}
		after := snapshot(t, filepath.Join(dir, "work."+strconv.Itoa(i)))
		for p, sum := range after {
			if before[p] == sum {
				continue
			}
			if !analysisWrote(a, p) && !analysisWrote(a, strings.SplitN(p, "/", 2)[0]) {
				t.Errorf("%q wrote %s, not among the writes %v (classes %s)", c, p, a.Writes, a.Classes)
			}
		}
		for p := range before {
			if _, ok := after[p]; !ok && !analysisWrote(a, p) {
				t.Errorf("%q removed %s, not among the writes %v", c, p, a.Writes)
			}
		}
	}
}

// snapshot maps every file under dir (relative path) to its size and
// content hash.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		m[rel] = fmt.Sprintf("%d:%x", len(b), b[:min(len(b), 64)])
		return nil
	})
	return m
}
