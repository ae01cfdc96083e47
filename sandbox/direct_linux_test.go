package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/shell"
)

// TestBashOwnVars: every variable whose value in the environment the
// installed bash changes, drops or warns about is in bashOwnVars (or is
// one directCommand computes), so a command whose environment has one runs
// with bash.
func TestBashOwnVars(t *testing.T) {
	out, err := exec.Command("/bin/bash", "-c", "compgen -v").Output()
	if err != nil {
		t.Fatal(err)
	}
	names := append(strings.Fields(string(out)), "BASH_ENV", "ENV", "POSIXLY_CORRECT", "EXECIGNORE", "BASH_XTRACEFD",
		"BASH_COMPAT", "PS1", "PS2", "PS3", "FUNCNEST", "GLOBIGNORE", "CDPATH", "HISTFILE", "HISTSIZE", "MAIL", "MAILPATH",
		"TMOUT", "LANG", "LC_CTYPE", "LC_MESSAGES", "LANGUAGE", "HOME", "INPUTRC", "TIMEFORMAT", "COLUMNS", "LINES")
	dir := t.TempDir()
	for _, name := range names {
		switch name {
		case "SHLVL", "PWD", "OLDPWD", "_", "PATH": // directEnv's, TestDirectCommand
			continue
		}
		for _, v := range []string{"zz", "5", "/", "a:b"} {
			cmd := exec.Command("/bin/bash", "-c", "trap '' EXIT\n/usr/bin/env")
			cmd.Dir = dir
			cmd.Env = []string{"PATH=/usr/bin:/bin", name + "=" + v}
			got, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatal(name, err)
			}
			var rest []string
			for _, kv := range strings.Split(strings.TrimSuffix(string(got), "\n"), "\n") {
				if !strings.HasPrefix(kv, "PWD=") && !strings.HasPrefix(kv, "SHLVL=") && !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "_=") {
					rest = append(rest, kv)
				}
			}
			if !slices.Equal(rest, []string{name + "=" + v}) && !bashOwnVars[name] {
				t.Errorf("bash -c turns %s=%s into %q, and %s is not in bashOwnVars", name, v, rest, name)
			}
		}
	}
}

// TestDirectCommand: the program bash would find, and the environment it
// would give it; anything else is left to bash.
func TestDirectCommand(t *testing.T) {
	dir := t.TempDir()
	bin1, bin2 := filepath.Join(dir, "bin1"), filepath.Join(dir, "bin2")
	write(t, filepath.Join(bin1, "prog"), "#!/bin/sh\n") // not executable: bash goes on
	write(t, filepath.Join(bin2, "prog"), "#!/bin/sh\n")
	write(t, filepath.Join(bin1, "onlyhere"), "x")
	if err := os.Chmod(filepath.Join(bin2, "prog"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(bin1, "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(bin2, "adir"), "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(bin2, "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	cwd := filepath.Join(dir, "work")
	if err := os.MkdirAll(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(cwd, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	path := "PATH=" + bin1 + ":" + bin2 + "/"
	for _, tc := range []struct {
		name string
		argv []string
		env  []string
		prog string   // "" when bash must run it
		want []string // the environment (sorted), when prog is set
	}{
		{"first executable", []string{"prog", "a"}, []string{path, "HOME=/h"}, bin2 + "/prog",
			[]string{"HOME=/h", path, "PWD=" + cwd, "SHLVL=1", "_=" + bin2 + "/prog"}},
		{"a directory is passed over", []string{"adir"}, []string{path}, bin2 + "/adir",
			[]string{path, "PWD=" + cwd, "SHLVL=1", "_=" + bin2 + "/adir"}},
		{"a slash: as is", []string{"./x"}, []string{path, "SHLVL=4", "PWD=" + filepath.Join(dir, "link"), "OLDPWD=" + dir}, "./x",
			[]string{"OLDPWD=" + dir, path, "PWD=" + filepath.Join(dir, "link"), "SHLVL=5", "_=./x"}},
		{"stale PWD and OLDPWD", []string{"/bin/x"}, []string{"PWD=" + dir, "OLDPWD=/nonexistent", "_=old"}, "/bin/x",
			[]string{"PWD=" + cwd, "SHLVL=1", "_=/bin/x"}},
		{"relative OLDPWD", []string{"/bin/x"}, []string{"OLDPWD=..", "PWD=relative"}, "/bin/x",
			[]string{"OLDPWD=..", "PWD=" + cwd, "SHLVL=1", "_=/bin/x"}},
		{"not executable anywhere", []string{"onlyhere"}, []string{path}, "", nil},
		{"not found", []string{"nothere"}, []string{path}, "", nil},
		{"no PATH", []string{"prog"}, nil, "", nil},
		{"empty PATH element", []string{"prog"}, []string{"PATH=" + bin1 + "::" + bin2}, "", nil},
		{"relative PATH element", []string{"prog"}, []string{"PATH=bin:" + bin2}, "", nil},
		{"found before a relative element", []string{"prog"}, []string{"PATH=" + bin2 + ":."}, bin2 + "/prog",
			[]string{"PATH=" + bin2 + ":.", "PWD=" + cwd, "SHLVL=1", "_=" + bin2 + "/prog"}},
		{"empty name", []string{""}, []string{path}, "", nil},
		{"an exported function", []string{"/bin/x"}, []string{"BASH_FUNC_x%%=() { :; }"}, "", nil},
		{"BASH_ENV", []string{"/bin/x"}, []string{"BASH_ENV=/x"}, "", nil},
		{"IFS", []string{"/bin/x"}, []string{"IFS=x"}, "", nil},
		{"SHELLOPTS", []string{"/bin/x"}, []string{"SHELLOPTS=xtrace"}, "", nil},
		{"a duplicate", []string{"/bin/x"}, []string{"A=1", "A=2"}, "", nil},
		{"no =", []string{"/bin/x"}, []string{"A"}, "", nil},
		{"LC_ALL not installed", []string{"/bin/x"}, []string{"LC_ALL=xx_YY.UTF-8"}, "", nil},
		{"LC_ALL C", []string{"/bin/x"}, []string{"LC_ALL=C.UTF-8"}, "/bin/x", []string{"LC_ALL=C.UTF-8", "PWD=" + cwd, "SHLVL=1", "_=/bin/x"}},
		{"SHLVL not a number", []string{"/bin/x"}, []string{"SHLVL=x"}, "", nil},
		{"SHLVL too high", []string{"/bin/x"}, []string{"SHLVL=999"}, "", nil},
		{"SHLVL empty", []string{"/bin/x"}, []string{"SHLVL="}, "/bin/x", []string{"PWD=" + cwd, "SHLVL=1", "_=/bin/x"}},
	} {
		prog, env, ok := directCommand(tc.argv, tc.env, cwd)
		if tc.prog == "" {
			if ok {
				t.Errorf("%s: direct %q %q; want bash", tc.name, prog, env)
			}
			continue
		}
		slices.Sort(env)
		slices.Sort(tc.want)
		if !ok || prog != tc.prog || !slices.Equal(env, tc.want) {
			t.Errorf("%s: %q %q %v; want %q %q", tc.name, prog, env, ok, tc.prog, tc.want)
		}
	}
}

// TestDirectExecLikeBash is the differential test: each command runs
// through the phase's real sandbox twice, once as the hook prepares it
// (literal words: the server executes the program directly) and once as
// `bash -c` (no argv), from the same harness shell; stdout, stderr, the
// exit status, the directory the harness's shell ends in and the
// environment (`env`, sorted) are the same. A program's parent tells which
// way it ran: the server (PID 1) when direct.
func TestDirectExecLikeBash(t *testing.T) {
	f := newServerFixture(t)
	_, outer := f.call("implementing", true, "exit 0")
	if out, code := f.run(outer, ""); code != 0 {
		t.Fatalf("first command: exit %d: %s", code, out)
	}
	write(t, filepath.Join(f.proj, "noexec"), "echo never\n")
	write(t, filepath.Join(f.proj, "noshebang"), "echo from-script \"$0\" \"$1\"; exit 5\n")
	write(t, filepath.Join(f.proj, "shebang"), "#!/bin/sh\necho \"from-sh $0 $*\"\n")
	for _, n := range []string{"noshebang", "shebang"} {
		if err := os.Chmod(filepath.Join(f.proj, n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	run := likeBashRunner(t, f)
	for _, tc := range []struct {
		cmd    string
		pre    string // more of the harness's shell before it
		direct bool   // the server runs the program itself
		signal bool   // a signal kills it
	}{
		{cmd: "sh -c 'echo before; kill -KILL $$'", direct: true, signal: true},
		{cmd: "env", direct: true},
		{cmd: "/usr/bin/env", direct: true},
		{cmd: "env", pre: "cd sub\n", direct: true},
		{cmd: "env", pre: "unset OLDPWD; export PWD=/nonexistent\n", direct: true},
		{cmd: "ls -a sub", direct: true},
		{cmd: "cat", direct: true},
		{cmd: "sh -c 'echo out; echo err >&2; exit 3'", direct: true},
		{cmd: "/bin/false", direct: true},
		{cmd: "grep -E '^Sig(Blk|Ign)' /proc/self/status", direct: true},
		{cmd: "sh -c 'umask; ulimit -n; cat /proc/self/loginuid 2>/dev/null; ps -o pgid= -o sid= -p $$ 2>/dev/null | wc -w'", direct: true},
		{cmd: "./shebang a 'b c'", direct: true},
		{cmd: "touch ../.claude/settings.json", direct: true},
		// bash's own: lookup errors, a script without #!, exported
		// functions, variables bash acts on.
		{cmd: "nonexistent-program-x arg"},
		{cmd: "./noexec"},
		{cmd: "./sub"},
		{cmd: "./noshebang x"},
		{cmd: "./missing"},
		// export -p leaves functions out: neither way sees one.
		{cmd: "env", pre: "greet() { echo hi; }; export -f greet\n", direct: true},
		{cmd: "env", pre: "export IFS\n"},
		{cmd: "env", pre: "export SHLVL=x\n"},
		{cmd: "env", pre: "export LC_ALL=xx_YY.UTF-8\n"},
	} {
		argv, literal := shell.LiteralArgv(tc.cmd)
		if !literal {
			t.Fatalf("%q is not literal", tc.cmd)
		}
		do, de, dc, dp := run(tc.cmd, [][]string{argv}, tc.pre)
		bo, be, bc, bp := run(tc.cmd, nil, tc.pre)
		sameAsBash(t, tc.cmd, tc.pre, strings.HasSuffix(tc.cmd, "env"), tc.signal, ran{do, de, dc, dp}, ran{bo, be, bc, bp})
		// Which way it ran: the program's parent is the server (PID 1)
		// only when direct.
		if tc.direct || tc.pre != "" {
			parent := "grep PPid /proc/self/status"
			pargv, _ := shell.LiteralArgv(parent)
			if po, _, _, _ := run(parent, [][]string{pargv}, tc.pre); tc.direct != (po == "PPid:\t1\n") {
				t.Errorf("%q (%s): parent %q, want direct=%v", tc.cmd, tc.pre, po, tc.direct)
			}
		}
	}
}

// likeBashRunner returns the differential tests' runner: script runs
// through the phase's real sandbox (the fast path, from a harness shell
// with stdin "typed\n"), with elems as the hook would record them (nil:
// `bash -c`); it returns stdout, stderr, the exit status and the
// directory the harness's shell ends in.
func likeBashRunner(t *testing.T, f *serverFixture) func(script string, elems [][]string, pre string) (stdout, stderr string, code int, pwd string) {
	run := likeBashListRunner(t, f)
	return func(script string, elems [][]string, pre string) (stdout, stderr string, code int, pwd string) {
		t.Helper()
		return run(script, elems, nil, pre)
	}
}

// likeBashListRunner is likeBashRunner with a list's items too
// (PrepareCallList).
func likeBashListRunner(t *testing.T, f *serverFixture) func(script string, elems [][]string, list []ListItem, pre string) (stdout, stderr string, code int, pwd string) {
	// The harness's shell: OLDPWD and PWD set by cd, an exported variable
	// with a newline, SHLVL as the harness left it.
	const harness = "cd sub && cd .. && export MINE=$'a\\nb' SHLVL=3\n"
	return func(script string, elems [][]string, list []ListItem, pre string) (stdout, stderr string, code int, pwd string) {
		t.Helper()
		cmd := exec.Command("/bin/bash", "-c", harness+pre+f.listCall(script, elems, list)+"\n__rc=$?; pwd >&3; exit $__rc")
		cmd.Dir = f.proj
		cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + f.proj, "LANG=C.UTF-8", "STATEWRIGHT_OPERATOR_TOKEN=swop_leak"}
		cmd.Stdin = strings.NewReader("typed\n")
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.ExtraFiles = []*os.File{pw}
		var o, e strings.Builder
		cmd.Stdout, cmd.Stderr = &o, &e
		err = cmd.Run()
		pw.Close()
		b := make([]byte, 4096)
		n, _ := pr.Read(b)
		pr.Close()
		code, ok := ExitStatus(err)
		if !ok {
			t.Fatal(err)
		}
		return o.String(), e.String(), code, string(b[:n])
	}
}

// ran is what a command's run showed: stdout, stderr, its status and the
// directory the harness's shell carried over.
type ran struct {
	stdout, stderr string
	code           int
	pwd            string
}

// sameAsBash fails t unless a command's run on the direct path (d)
// matches its run through the inner bash (b). With env, stdout is an
// environment: compared sorted, and the direct one must hold the
// harness's MINE and nothing of the server's. With signal, a signal
// killed a program: bash reports it ("Killed", with PIDs) and the direct
// path does not (docs/sandbox.md); the rest must match.
func sameAsBash(t *testing.T, cmd, pre string, env, signal bool, d, b ran) {
	t.Helper()
	do, de, dc, dp := d.stdout, d.stderr, d.code, d.pwd
	bo, be, bc, bp := b.stdout, b.stderr, b.code, b.pwd
	if env {
		do, bo = sortedEnvOutput(do), sortedEnvOutput(bo)
		if strings.Contains(do, "swop_leak") || !strings.Contains(do, "MINE=a\n") {
			t.Errorf("%q: env %q", cmd, do)
		}
	}
	if signal {
		if de != "" || !strings.Contains(be, "Killed") {
			t.Errorf("%q: stderr %q (direct) and %q (bash)", cmd, de, be)
		}
		de = be
	}
	if do != bo || de != be || dc != bc || dp != bp {
		t.Errorf("%q (%s): direct and bash -c differ:\nstdout %.300q\n   vs  %.300q\nstderr %q\n   vs  %q\nexit %d vs %d, pwd %q vs %q", cmd, pre, do, bo, de, be, dc, bc, dp, bp)
	}
}

// sortedEnvOutput is env's output sorted, without the inner bash's own
// variable.
func sortedEnvOutput(s string) string {
	var kept []string
	for _, kv := range strings.Split(s, "\n") {
		if !strings.HasPrefix(kv, cwdEnv+"=") { // the inner bash's own
			kept = append(kept, kv)
		}
	}
	slices.Sort(kept)
	return strings.Join(kept, "\n")
}
