//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestMain lets this test binary act as the launcher (ShellCommand names
// it in place of the statewright binary) and as the network forwarder
// inside a sandbox whose network goes through the proxy.
func TestMain(m *testing.M) {
	if len(os.Args) > 3 && os.Args[1] == "sandbox" && os.Args[2] == "exec" {
		os.Exit(Main(os.Args[3:], os.Stdin, os.Stdout, os.Stderr))
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
	c2, err := PrepareCall(sess, "", "toolu_1", a, p)
	if err != nil {
		t.Fatal(err)
	}
	if c2 != c {
		t.Fatalf("PrepareCall = %+v, CallDir = %+v", c2, c)
	}
	agent := "cd sub && echo hi > f.txt && echo \"secret=${STATEWRIGHT_OPERATOR_TOKEN:-none} phase=$STATEWRIGHT_SANDBOX_PHASE\"; printf x > ../.claude/settings.json; echo 'ls $TMPDIR' > /dev/null; exit 3"
	outer := ShellCommand(exe, c, agent) + "\necho \"rc=$? pwd=$(pwd)\""
	cmd := exec.Command("/bin/bash", "-c", outer)
	cmd.Dir = proj
	cmd.Env = append(os.Environ(), "STATEWRIGHT_OPERATOR_TOKEN=swop_leak")
	out, _ := cmd.CombinedOutput()
	s := string(out)
	for _, want := range []string{"secret=none phase=implementing", "rc=3 pwd=" + filepath.Join(proj, "sub"), "Read-only file system"} {
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
	if want := (Result{ExitCode: 3, Phase: "implementing", Refused: []string{"../.claude/settings.json"}}); !reflect.DeepEqual(r, want) {
		t.Errorf("result = %+v, want %+v", r, want)
	}

	// The sandboxed command cannot forge the result or the profile.
	c3, err := PrepareCall(sess, "", "toolu_2", a, &Profile{Writable: []string{CallDir(sess, "toolu_2").RW}, Visible: []string{proj}})
	if err != nil {
		t.Fatal(err)
	}
	forge := `echo '{"exit_code":0}' > ` + Quote(filepath.Join(c3.Dir, "result.json")) + `; echo '{}' > ` + Quote(filepath.Join(c3.Dir, "profile.json")) + `; exit 1`
	cmd = exec.Command("/bin/bash", "-c", ShellCommand(exe, c3, forge))
	cmd.Dir = proj
	out, _ = cmd.CombinedOutput()
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
