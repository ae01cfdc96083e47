package shell

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func mustAnalyze(t *testing.T, src string) *Analysis {
	t.Helper()
	a, err := Analyze(src)
	if err != nil {
		t.Fatalf("Analyze(%.200q): %v", src, err)
	}
	return a
}

func TestClassNames(t *testing.T) {
	for _, cn := range classNames {
		got, ok := ClassByName(cn.name)
		if !ok || got != cn.c {
			t.Errorf("ClassByName(%q) = %v, %v", cn.name, got, ok)
		}
	}
	if _, ok := ClassByName("nope"); ok {
		t.Error("ClassByName(nope) found a class")
	}
	if got := (ClassRead | ClassDelete).String(); got != "read|delete" {
		t.Errorf("String = %q", got)
	}
}

func TestParseErrorPosition(t *testing.T) {
	tests := []struct {
		src       string
		line, col int
	}{
		{"echo (", 1, 1},
		{"ls\nif true; then", 2, 10},
		{"echo 'x", 1, 6},
	}
	for _, tt := range tests {
		a, err := Analyze(tt.src)
		var pe *ParseError
		if !errors.As(err, &pe) || a != nil {
			t.Errorf("Analyze(%q) = %v, %v; want *ParseError and nil analysis", tt.src, a, err)
			continue
		}
		if pe.Line != tt.line || pe.Col != tt.col {
			t.Errorf("Analyze(%q) error at %d:%d, want %d:%d (%v)", tt.src, pe.Line, pe.Col, tt.line, tt.col, pe)
		}
		if !strings.Contains(pe.Error(), ":") {
			t.Errorf("Error() = %q", pe.Error())
		}
	}
}

func TestBounds(t *testing.T) {
	t.Run("input size", func(t *testing.T) {
		_, err := Analyze(strings.Repeat("a", MaxInputSize+1))
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("err = %v, want *ParseError", err)
		}
	})
	t.Run("nested bash -c", func(t *testing.T) {
		cmd := "rm -rf x"
		for i := 0; i < MaxNesting+3; i++ {
			cmd = "bash -c " + shQuote(cmd)
		}
		a := mustAnalyze(t, cmd)
		if !a.Has(ClassExec | ClassUnknown) {
			t.Errorf("classes %s, want exec and unknown beyond the nesting limit", a.Classes)
		}
	})
	t.Run("nested within limit", func(t *testing.T) {
		cmd := "rm -rf x"
		for i := 0; i < MaxNesting; i++ {
			cmd = "bash -c " + shQuote(cmd)
		}
		a := mustAnalyze(t, cmd)
		if !a.Has(ClassDelete) || a.Any(ClassUnknown) {
			t.Errorf("classes %s, want delete found through %d levels", a.Classes, MaxNesting)
		}
	})
	t.Run("deep mixed nesting", func(t *testing.T) {
		// brackets and keywords are bounded separately in the source; the
		// walk's own depth bound catches their combination
		n := maxParenDepth - 1
		src := strings.Repeat("{ ", n) + strings.Repeat("if true; then ", n) + "rm x" + strings.Repeat("; fi", n) + strings.Repeat("; }", n)
		a := mustAnalyze(t, src)
		if !a.Has(ClassExec | ClassUnknown) {
			t.Errorf("classes %s, want exec|unknown past the walk depth bound", a.Classes)
		}
	})
	t.Run("within the bounds", func(t *testing.T) {
		n := maxParenDepth / 2
		a := mustAnalyze(t, strings.Repeat("{ ", n)+"rm x;"+strings.Repeat(" }", n))
		if !a.Has(ClassDelete) || a.Any(ClassUnknown) {
			t.Errorf("classes %s", a.Classes)
		}
	})
	t.Run("parentheses within the bound", func(t *testing.T) {
		n := maxParenDepth / 2
		a := mustAnalyze(t, strings.Repeat("( ", n)+"rm x"+strings.Repeat(" )", n))
		if !a.Has(ClassDelete) || a.Any(ClassUnknown) {
			t.Errorf("classes %s", a.Classes)
		}
	})
	for _, src := range []string{
		strings.Repeat("( ", maxParenDepth+1) + "x" + strings.Repeat(" )", maxParenDepth+1),
		"echo " + strings.Repeat("$(echo ", maxParenDepth+1) + "x" + strings.Repeat(")", maxParenDepth+1),
		"echo " + strings.Repeat("$((", maxParenDepth) + "1" + strings.Repeat("))", maxParenDepth),
		"ls\n" + strings.Repeat("(", 100000),
		"A[" + strings.Repeat("a[", 1000),
		"echo " + strings.Repeat("${a:-", 1000) + "x" + strings.Repeat("}", 1000),
		strings.Repeat("{ ", 1000) + "x;" + strings.Repeat(" }", 1000),
		strings.Repeat("if true; then ", maxKeywordDepth+1) + "x" + strings.Repeat("; fi", maxKeywordDepth+1),
		strings.Repeat("while ", maxKeywordDepth+1),
	} {
		_, err := Analyze(src)
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line < 1 {
			t.Errorf("deeply nested parentheses: err = %v, want a positioned *ParseError", err)
		}
	}
}

// shQuote single-quotes s for bash.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func TestCommandFields(t *testing.T) {
	a := mustAnalyze(t, `FOO=1 sudo -u bob timeout 5 rm -rf "$DIR" /tmp/x > log.txt`)
	if len(a.Commands) != 1 {
		t.Fatalf("%d commands", len(a.Commands))
	}
	c := a.Commands[0]
	want := Command{
		Argv:     []string{"rm", "-rf", `"$DIR"`, "/tmp/x"},
		Program:  "rm",
		Wrappers: []string{"sudo", "timeout"},
		Classes:  ClassDelete | ClassPrivilege | ClassWrite,
		Writes:   []Target{{Path: `"$DIR"`, Dynamic: true}, {Path: "/tmp/x"}, {Path: "log.txt"}},
		Words: []Word{{"sudo", true}, {"-u", true}, {"bob", true}, {"timeout", true}, {"5", true},
			{"rm", true}, {"-rf", true}, {`"$DIR"`, false}, {"/tmp/x", true}},
		Assigns: []string{"FOO=1"},
		Source:  `FOO=1 sudo -u bob timeout 5 rm -rf "$DIR" /tmp/x`,
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got  %+v\nwant %+v", c, want)
	}
	if !reflect.DeepEqual(a.EnvRefs, []string{"DIR"}) {
		t.Errorf("env refs %v", a.EnvRefs)
	}
}

func TestSourceOrder(t *testing.T) {
	a := mustAnalyze(t, "ls | grep x; echo $(date) && { cat f; } || rm g &\nwc -l h")
	got := a.Programs()
	if !reflect.DeepEqual(got, []string{"cat", "date", "echo", "grep", "ls", "rm", "wc"}) {
		t.Errorf("Programs = %v", got)
	}
	var order []string
	for _, c := range a.Commands {
		order = append(order, c.Program)
	}
	if want := []string{"ls", "grep", "echo", "date", "cat", "rm", "wc"}; !reflect.DeepEqual(order, want) {
		t.Errorf("order = %v, want %v", order, want)
	}
	if a.Commands[5].Classes&ClassBackground == 0 || a.Commands[6].Classes&ClassBackground != 0 {
		t.Errorf("background marks wrong: %v / %v", a.Commands[5].Classes, a.Commands[6].Classes)
	}
}

func TestHasPrefixAndMatchesAllowed(t *testing.T) {
	tests := []struct {
		cmd     string
		allowed [][]string
		want    bool
	}{
		{"pytest -x tests/", [][]string{{"pytest"}}, true},
		{"pytest", [][]string{{"pytest"}}, true},
		{"'pytest' -x", [][]string{{"pytest"}}, true},
		{"pytest; rm -rf /", [][]string{{"pytest"}}, false},
		{"pytest && curl x | sh", [][]string{{"pytest"}}, false},
		{"pytestx", [][]string{{"pytest"}}, false},
		{"cargo testbed", [][]string{{"cargo", "test"}}, false},
		{"cargo test -p x", [][]string{{"cargo", "test"}}, true},
		{"cargo test $(kubectl config view)", [][]string{{"cargo", "test"}}, false},
		{"cargo test; kubectl apply -f pod.yaml", [][]string{{"cargo", "test"}}, false},
		{"ghpr list", [][]string{{"gh"}}, false},
		{"gh pr list", [][]string{{"gh"}}, true},
		{"$X pr list", [][]string{{"gh"}}, false},
		{"pytest\nrm -rf /", [][]string{{"pytest"}}, false},
		{"find . -exec rm {} ;", [][]string{{"find"}}, false},
		{"bash -c 'pytest'", [][]string{{"pytest"}}, false},
		{"bash -c 'pytest'", [][]string{{"pytest"}, {"bash", "-c"}}, true},
		{"node --test 'tests/smoke test.mjs'", [][]string{{"node", "--test"}}, true},
		{"anything", [][]string{{}}, false},
		{"anything", nil, false},
	}
	for _, tt := range tests {
		a := mustAnalyze(t, tt.cmd)
		if got := a.MatchesAllowed(tt.allowed); got != tt.want {
			t.Errorf("MatchesAllowed(%q, %v) = %v, want %v", tt.cmd, tt.allowed, got, tt.want)
		}
	}
}

func TestIsTestRunner(t *testing.T) {
	tests := []struct {
		argv string
		want bool
	}{
		{"pytest", true}, {"pytest -x", true}, {"python -m pytest", true}, {"python3 -m unittest", true},
		{"python x.py", false}, {"go test ./...", true}, {"go build", false}, {"cargo test", true},
		{"cargo +nightly test", true}, {"cargo build", false}, {"npm test", true}, {"npm run test", true},
		{"npm run build", false}, {"yarn test", true}, {"pnpm test", true}, {"bun test", true},
		{"deno test", true}, {"jest", true}, {"vitest", true}, {"make test", true}, {"make install", false},
		{"make -n test", false}, {"mvn test", true}, {"mvn deploy", false}, {"gradle test", true},
		{"./gradlew test", true}, {"dotnet test", true}, {"npx jest", true}, {"npx rimraf", false},
		{"uv run pytest", true}, {"uv run python", false}, {"bundle exec rspec", true}, {"node --test", true},
		{"./evil test", false}, {"", false},
	}
	for _, tt := range tests {
		if got := IsTestRunner(strings.Fields(tt.argv)); got != tt.want {
			t.Errorf("IsTestRunner(%q) = %v, want %v", tt.argv, got, tt.want)
		}
	}
}

func TestJSON(t *testing.T) {
	a := mustAnalyze(t, "echo $HOME > out.txt")
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Classes  []string `json:"classes"`
		Commands []struct {
			Classes []string `json:"classes"`
			Argv    []string `json:"argv"`
		} `json:"commands"`
		Writes  []Target `json:"writes"`
		EnvRefs []string `json:"env_refs"`
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Classes, []string{"read", "write"}) ||
		!reflect.DeepEqual(back.Commands[0].Classes, []string{"read", "write"}) ||
		!reflect.DeepEqual(back.Writes, []Target{{Path: "out.txt"}}) ||
		!reflect.DeepEqual(back.EnvRefs, []string{"HOME"}) {
		t.Errorf("JSON = %s", b)
	}
	empty, _ := json.Marshal(mustAnalyze(t, ""))
	if !strings.Contains(string(empty), `"classes":[]`) || !strings.Contains(string(empty), `"commands":[]`) {
		t.Errorf("empty JSON = %s", empty)
	}
}

func TestCdFollowsTargets(t *testing.T) {
	tests := []struct {
		cmd  string
		want Target
	}{
		{"cd /etc && echo x > passwd", Target{Path: "/etc/passwd"}},
		{"cd src; cd sub; echo x > f", Target{Path: "src/sub/f"}},
		{"cd src/../lib && touch f", Target{Path: "lib/f"}},
		{"(cd /tmp; echo x > f); echo y > g", Target{Path: "g"}},
		{"cd \"$D\" && echo x > f", Target{Path: "f", Dynamic: true}},
		{"cd && echo x > f", Target{Path: "f", Dynamic: true}},
		{"cd - && echo x > f", Target{Path: "f", Dynamic: true}},
		{"false || cd /x; echo > f", Target{Path: "f", Dynamic: true}},
		{"cd /x; echo > /abs", Target{Path: "/abs"}},
		{"cd /x; echo > ~/f", Target{Path: "~/f"}},
	}
	for _, tt := range tests {
		a := mustAnalyze(t, tt.cmd)
		found := false
		for _, w := range a.Writes {
			if w == tt.want {
				found = true
			}
		}
		if !found {
			t.Errorf("%q: writes %v, want %v among them", tt.cmd, a.Writes, tt.want)
		}
	}
}

func TestHelpers(t *testing.T) {
	a := mustAnalyze(t, `$X > "$Y"; cat f`)
	if !a.HasDynamicProgram() || !a.HasDynamicWrite() {
		t.Errorf("dynamic program %v, dynamic write %v", a.HasDynamicProgram(), a.HasDynamicWrite())
	}
	if !a.Any(ClassExec|ClassNetwork) || a.Only(ClassRead) || !a.Only(ClassRead|ClassWrite|ClassExec) {
		t.Errorf("Any/Only wrong for %s", a.Classes)
	}
	b := mustAnalyze(t, "cat f")
	if b.HasDynamicProgram() || b.HasDynamicWrite() || !b.Only(ClassRead) {
		t.Errorf("cat f: %+v", b)
	}
}

func TestWordDecoding(t *testing.T) {
	tests := []struct {
		src  string
		want string
		lit  bool
	}{
		{`$'\x72m'`, "rm", true},
		{`$'\162m'`, "rm", true},
		{`$'\u0072m'`, "rm", true},
		{`$'a\tb'`, "a\tb", true},
		{`$'\cA'`, "\x01", true},
		{`"a\"b\$c\\d\e"`, `a"b$c\d\e`, true},
		{`a\ b`, "a b", true},
		{`'x'"y"z`, "xyz", true},
		{`*.go`, "", false},
		{`a{b,c}`, "", false},
		{`a{b}`, "a{b}", true},
		{`[`, "[", true},
		{`x[ab]`, "", false},
		{`"$x"`, "", false},
		{`\*`, "*", true},
	}
	for _, tt := range tests {
		a := mustAnalyze(t, "echo "+tt.src)
		w := a.Commands[0].Words[1]
		if w.Literal != tt.lit || (tt.lit && w.Text != tt.want) {
			t.Errorf("word %s = %q literal=%v, want %q literal=%v", tt.src, w.Text, w.Literal, tt.want, tt.lit)
		}
	}
}

func TestScanSed(t *testing.T) {
	tests := []struct {
		script string
		fx     sedEffects
	}{
		{"s/a/b/g", sedEffects{}},
		{"1,12p", sedEffects{}},
		{"s/a/b/w out", sedEffects{writes: []string{"out"}}},
		{"/x/w out\np", sedEffects{writes: []string{"out"}}},
		{"s/a/b/e", sedEffects{exec: true}},
		{"1e ls", sedEffects{exec: true}},
		{"r in", sedEffects{reads: []string{"in"}}},
		{`s/a\/b/c/;W o2`, sedEffects{writes: []string{"o2"}}},
		{"s|a|b|;$!{N;D}", sedEffects{}},
		{"K", sedEffects{unknown: true}},
		{"s/unterminated", sedEffects{unknown: true}},
	}
	for _, tt := range tests {
		if got := scanSed(tt.script); !reflect.DeepEqual(got, tt.fx) {
			t.Errorf("scanSed(%q) = %+v, want %+v", tt.script, got, tt.fx)
		}
	}
}

func TestScanAwk(t *testing.T) {
	tests := []struct {
		prog   string
		exec   bool
		writes int
	}{
		{`{print $1}`, false, 0},
		{`$1 > 3 {print}`, false, 0},
		{`{print ($1 > 3)}`, false, 0},
		{`{print > "f"}`, false, 1},
		{`{printf "%s", $0 >> "f"}`, false, 1},
		{`{print | "sh"}`, true, 0},
		{`BEGIN{system("x")}`, true, 0},
		{`{ "date" | getline }`, true, 0},
		{`/a|b/ {print}`, false, 0},
		{`{a = b || c; print a}`, false, 0},
		{`{print "x" |& "cmd"}`, true, 0},
		{`# system("x")` + "\n{print}", false, 0},
	}
	for _, tt := range tests {
		fx := scanAwk(tt.prog)
		if fx.exec != tt.exec || len(fx.writes) != tt.writes {
			t.Errorf("scanAwk(%q) = exec %v writes %v, want %v/%d", tt.prog, fx.exec, fx.writes, tt.exec, tt.writes)
		}
	}
}

func TestWrappers(t *testing.T) {
	tests := []struct {
		cmd      string
		program  string
		wrappers []string
		argv     string
	}{
		{"env -i -- A=1 rm x", "rm", []string{"env"}, "rm x"},
		{"env -u HOME rm x", "rm", []string{"env"}, "rm x"},
		{"sudo -u bob -- nice -n 5 rm x", "rm", []string{"sudo", "nice"}, "rm x"},
		{"timeout -s KILL 10s curl u", "curl", []string{"timeout"}, "curl u"},
		{"nohup setsid stdbuf -oL ionice -c3 make", "make", []string{"nohup", "setsid", "stdbuf", "ionice"}, "make"},
		{"command -p builtin exec -a n ls", "ls", []string{"command", "builtin", "exec"}, "ls"},
		{"xargs -0 -n1 -I{} cp {} d", "cp", []string{"xargs"}, "cp {} d"},
		{"xargs", "echo", []string{"xargs"}, "echo (xargs input)"},
		{"busybox toybox rm x", "rm", []string{"busybox", "toybox"}, "rm x"},
		{"flock -w 5 /tmp/l make", "make", []string{"flock"}, "make"},
		{"chroot --userspec=a /srv ls", "ls", []string{"chroot"}, "ls"},
		{"/usr/bin/time -o t -f %e ls", "ls", []string{"time"}, "ls"},
		{"watch -x -n 1 ls", "ls", []string{"watch"}, "ls"},
		{"doas -u root rm x", "rm", []string{"doas"}, "rm x"},
		{"npx --yes jest", "jest", []string{"npx"}, "jest"},
		{"env", "env", nil, "env"},
		{"sudo -l", "sudo", nil, "sudo -l"},
		{"command -v ls", "command", nil, "command -v ls"},
		{"timeout 5", "timeout", nil, "timeout 5"},
	}
	for _, tt := range tests {
		a := mustAnalyze(t, tt.cmd)
		c := a.Commands[0]
		if c.Program != tt.program || !reflect.DeepEqual(c.Wrappers, tt.wrappers) || strings.Join(c.Argv, " ") != tt.argv {
			t.Errorf("%q: program %q wrappers %v argv %q; want %q %v %q", tt.cmd, c.Program, c.Wrappers, c.Argv, tt.program, tt.wrappers, tt.argv)
		}
	}
}

func TestHeredocOfCodeIsNotRefused(t *testing.T) {
	var body strings.Builder
	for i := 0; i < 300; i++ {
		body.WriteString("    if f(x[0]):\n        for y in {z}:\n            while q: pass  # a comment\n")
	}
	a := mustAnalyze(t, "cat > gen.py <<'EOF'\n"+body.String()+"EOF")
	if !a.Has(ClassWrite) || len(a.Writes) != 1 || a.Writes[0].Path != "gen.py" {
		t.Errorf("classes %s writes %v", a.Classes, a.Writes)
	}
}
