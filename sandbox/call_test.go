//go:build linux

package sandbox

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestMain lets this test binary act as the launcher (ShellCommand names
// it in place of the statewright binary) and as the network forwarder
// inside a sandbox whose network goes through the proxy.
func TestMain(m *testing.M) {
	if len(os.Args) > 3 && os.Args[1] == "sandbox" && os.Args[2] == "exec" {
		os.Exit(Main(os.Args[3:], os.Stdin, os.Stdout, os.Stderr, testObserve))
	}
	if len(os.Args) > 2 && os.Args[1] == "sandbox" && os.Args[2] == "serve" {
		os.Exit(Serve(os.Args[3:], os.Stderr))
	}
	if len(os.Args) > 2 && os.Args[1] == "sandbox" && os.Args[2] == "keep" {
		os.Exit(Keep(os.Args[3:], os.Stderr))
	}
	if len(os.Args) > 2 && os.Args[1] == "sandbox" && os.Args[2] == "netinit" {
		os.Exit(NetInit(os.Args[3:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// TestShellCommand drives the rewritten command through a real bash, as a
// harness's shell runs it: the command runs sandboxed, its exit status
// comes back, a cd inside carries over to the harness's shell, and the
// launcher's result (outside the sandbox) names what was refused.
func TestShellCommand(t *testing.T) {
	a := need(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	proj := filepath.Join(root, "proj")
	write(t, filepath.Join(proj, "sub", "keep"), "")
	write(t, filepath.Join(proj, ".claude", "settings.json"), "{}")
	sess := SessionDir(filepath.Join(root, "sandboxes"), "claude-code:s1")
	c := CallDir(sess, "toolu_1")
	p := &Profile{Phase: "implementing", Writable: []string{proj, filepath.Join(sess, "cache"), c.RW},
		ReadOnly: []string{filepath.Join(proj, ".claude"), filepath.Dir(sess)}, Visible: []string{proj}, Tmp: filepath.Join(sess, "tmp"),
		Env: []string{"TMPDIR=/tmp"}}
	agent := "cd sub && echo hi > f.txt && echo \"secret=${STATEWRIGHT_OPERATOR_TOKEN:-none} phase=$STATEWRIGHT_SANDBOX_PHASE\"; cat /proc/1/environ /proc/$$/environ 2>/dev/null | tr '\\0' '\\n' | grep -c STATEWRIGHT_OP; printf x > ../.claude/settings.json; echo 'ls $TMPDIR' > /dev/null; exit 3"
	c2, err := PrepareCall(sess, "", "toolu_1", a, p, agent)
	if err != nil {
		t.Fatal(err)
	}
	if c2 != c {
		t.Fatalf("PrepareCall = %+v, CallDir = %+v", c2, c)
	}
	outer := ShellCommand(exe, c, agent) + "\necho \"rc=$? pwd=$(pwd)\""
	cmd := exec.Command("/bin/bash", "-c", outer)
	cmd.Dir = proj
	cmd.Env = append(os.Environ(), "STATEWRIGHT_OPERATOR_TOKEN=swop_leak")
	out, _ := cmd.CombinedOutput()
	s := string(out)
	for _, want := range []string{"secret=none phase=implementing\n0\n", "rc=3 pwd=" + filepath.Join(proj, "sub"), "Read-only file system"} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %q in:\n%s", want, s)
		}
	}
	if strings.Contains(s, "swop_leak") {
		t.Errorf("the token reached the command:\n%s", s)
	}
	if got := read(t, filepath.Join(proj, "sub", "f.txt")); got != "hi\n" {
		t.Errorf("f.txt = %q", got)
	}
	if got := read(t, filepath.Join(proj, ".claude", "settings.json")); got != "{}" {
		t.Errorf("settings.json = %q", got)
	}
	r, ok := ReadResult(c)
	if !ok {
		t.Fatal("no result")
	}
	if want := (Result{ExitCode: 3, Phase: "implementing", Command: agent}); !reflect.DeepEqual(r, want) {
		t.Errorf("result = %+v, want %+v", r, want)
	}
	if got := RefusedPaths(s, 3); !reflect.DeepEqual(got, []string{"../.claude/settings.json"}) {
		t.Errorf("RefusedPaths = %q", got)
	}

	// The sandboxed command cannot forge the result or the profile.
	c3, err := PrepareCall(sess, "", "toolu_2", a, &Profile{Writable: []string{CallDir(sess, "toolu_2").RW}, Visible: []string{proj}}, "")
	if err != nil {
		t.Fatal(err)
	}
	forge := ""
	for _, f := range []string{"result.json", "profile.json", "status", "bwrap.args"} {
		forge += `echo 0 > ` + Quote(filepath.Join(c3.Dir, f)) + `; `
	}
	forge += `(sleep 0.3; echo 0 > ` + Quote(filepath.Join(c3.Dir, "status")) + `) & exit 1`
	cmd = exec.Command("/bin/bash", "-c", ShellCommand(exe, c3, forge))
	cmd.Dir = proj
	out, _ = cmd.CombinedOutput()
	time.Sleep(500 * time.Millisecond) // the background writer died with the sandbox
	if r, ok := ReadResult(c3); !ok || r.ExitCode != 1 {
		t.Errorf("result after a forgery attempt = %+v %v (%s)", r, ok, out)
	}
	if err := c3.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(c3.Dir); !os.IsNotExist(err) {
		t.Errorf("call dir left: %v", err)
	}

	// No profile: the command does not run.
	cmd = exec.Command("/bin/bash", "-c", ShellCommand(exe, CallDir(sess, "never-prepared"), "touch "+Quote(filepath.Join(proj, "ran"))))
	cmd.Dir = proj
	out, err = cmd.CombinedOutput()
	if _, serr := os.Stat(filepath.Join(proj, "ran")); serr == nil || err == nil || !strings.Contains(string(out), "did not run") {
		t.Errorf("unprepared call ran or did not fail: %v %s", err, out)
	}
}

// testObserve watches calls whose script starts with "#observe": it
// replaces the script, counts the command's stdout outside the sandbox and
// records the count and the exit status.
func testObserve(c Call, script string, env []string) Observer {
	if !strings.HasPrefix(script, "#observe") {
		return nil
	}
	return &countObserver{script: "echo observed" + strings.TrimPrefix(script, "#observe")}
}

type countObserver struct {
	script string
	n      int
}

func (o *countObserver) Script() string { return o.script }
func (o *countObserver) Stdout(w io.Writer) io.WriteCloser {
	return nopCloser{io.MultiWriter(w, writerFunc(func(b []byte) (int, error) { o.n += len(b); return len(b), nil }))}
}
func (o *countObserver) Finish(code int) any { return map[string]int{"bytes": o.n, "code": code} }

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// TestObserved: a launcher with an observer runs the command as its child,
// sees its stdout outside the sandbox and records what it saw; the
// sandboxed command cannot write that record.
func TestObserved(t *testing.T) {
	a := need(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	proj := filepath.Join(root, "proj")
	write(t, filepath.Join(proj, "keep"), "")
	sess := SessionDir(filepath.Join(root, "sandboxes"), "s")
	c, err := PrepareCall(sess, "", "t1", a, &Profile{Writable: []string{CallDir(sess, "t1").RW}, Visible: []string{proj}}, "x")
	if err != nil {
		t.Fatal(err)
	}
	script := "#observe\necho hi; echo '{}' > " + Quote(filepath.Join(c.Dir, "result.json")) + " 2>/dev/null; exit 4"
	cmd := exec.Command("/bin/bash", "-c", ShellCommand(exe, c, script))
	cmd.Dir = proj
	cmd.Env = append(os.Environ(), "STATEWRIGHT_OPERATOR_TOKEN=swop_leak")
	out, _ := cmd.CombinedOutput()
	if string(out) != "observed\nhi\n" {
		t.Errorf("output: %s", out)
	}
	r, ok := ReadResult(c)
	if !ok || r.ExitCode != 4 || string(r.Observed) != `{"bytes":12,"code":4}` {
		t.Errorf("result = %+v %v (observed %s)", r, ok, r.Observed)
	}
}

// TestArgsSkipsRedundantBinds: a protected file under the read-only root,
// a cache inside a writable tree and a visible tree later made writable
// cost no mount of their own; a protected tree inside a writable one does.
func TestArgsSkipsRedundantBinds(t *testing.T) {
	root := t.TempDir()
	home, proj := filepath.Join(root, "home"), filepath.Join(root, "home", "proj")
	for _, f := range []string{"home/.bashrc", "home/proj/.claude/settings.json", "home/proj/target/x", "home/.cache/sw/x"} {
		write(t, filepath.Join(root, f), "")
	}
	p := &Profile{Writable: []string{proj, filepath.Join(proj, "target"), filepath.Join(home, ".cache", "sw")},
		ReadOnly: []string{filepath.Join(home, ".bashrc"), filepath.Join(proj, ".claude"), filepath.Join(home, ".cache")},
		Visible:  []string{home, proj}}
	args, err := Args(p, "", []string{"true"})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(args, " ")
	for _, want := range []string{"--ro-bind " + home + " " + home, "--bind " + proj + " " + proj, "--ro-bind " + filepath.Join(proj, ".claude"), "--bind " + filepath.Join(home, ".cache", "sw")} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in %s", want, got)
		}
	}
	for _, bad := range []string{".bashrc", "target", "--ro-bind " + proj + " ", "--ro-bind " + filepath.Join(home, ".cache") + " "} {
		if strings.Contains(got, bad) {
			t.Errorf("redundant %q in %s", bad, got)
		}
	}
}

func TestRefusedPath(t *testing.T) {
	for line, want := range map[string]string{
		"bash: line 1: .claude/settings.json: Read-only file system":         ".claude/settings.json",
		"OSError: [Errno 30] Read-only file system: '.claude/settings.json'": ".claude/settings.json",
		"touch: cannot touch '/p/.git/config': Read-only file system":        "/p/.git/config",
		"open /p/main.go: read-only file system":                             "/p/main.go",
		"panic: mkdir /p/out: read-only file system\n":                       "/p/out",
		"everything is fine": "",
		"Error: EROFS: read-only file system, open \"/p/.mcp.json\"": "/p/.mcp.json",
	} {
		if got := RefusedPath(line); got != want {
			t.Errorf("RefusedPath(%q) = %q, want %q", line, got, want)
		}
	}
}
