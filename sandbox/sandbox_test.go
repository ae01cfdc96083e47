//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

// need returns the sandbox, or skips the test where there is none (CI sets
// STATEWRIGHT_REQUIRE_SANDBOX=1, which makes that a failure).
func need(t *testing.T) Availability {
	t.Helper()
	a := Detect()
	if !a.OK() {
		if os.Getenv("STATEWRIGHT_REQUIRE_SANDBOX") != "" {
			t.Fatalf("no sandbox, and STATEWRIGHT_REQUIRE_SANDBOX is set: %s", a.Why)
		}
		t.Skip("no sandbox: " + a.Why)
	}
	return a
}

// run runs a bash script under p in dir and returns its combined output and
// exit code.
func run(t *testing.T, a Availability, p *Profile, dir, script string, env ...string) (string, int) {
	t.Helper()
	cmd, err := Command(context.Background(), a, p, dir, []string{"/bin/bash", "-c", script},
		append([]string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C"}, env...))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), code
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFilesystem is the outcome test of the filesystem rules: it lets the
// commands run and looks at the disk.
func TestFilesystem(t *testing.T) {
	a := need(t)
	root := t.TempDir()
	proj := filepath.Join(root, "proj")
	write(t, filepath.Join(proj, "main.go"), "package main\n")
	write(t, filepath.Join(proj, ".claude", "settings.json"), `{"hooks":{}}`)
	write(t, filepath.Join(proj, ".git", "config"), "[core]\n")
	secretDir := filepath.Join(root, "home", ".config", "statewright")
	write(t, filepath.Join(secretDir, "operator-token"), "swop_SECRET")
	store := filepath.Join(proj, ".statewright", "state.db")
	write(t, store, "SQLite format 3 STORE")
	write(t, store+"-wal", "WAL STORE")
	outside := filepath.Join(root, "outside.txt")
	write(t, outside, "outside")
	tmp := filepath.Join(root, "session-tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}

	p := &Profile{
		Writable: []string{proj, filepath.Join(proj, "does-not-exist")},
		ReadOnly: []string{filepath.Join(proj, ".claude"), filepath.Join(proj, ".git", "config"), filepath.Join(proj, ".codex")},
		Hidden:   []string{secretDir, store, store + "-wal", store + "-shm"},
		Tmp:      tmp,
		Visible:  []string{proj},
	}
	cases := []struct {
		name, script string
		wantCode     int // -1: any non-zero
		check        func(t *testing.T, out string)
	}{
		{"allowed edit lands", `echo 'package main // edited' > main.go`, 0, func(t *testing.T, out string) {
			if got := read(t, filepath.Join(proj, "main.go")); !strings.Contains(got, "edited") {
				t.Errorf("main.go = %q", got)
			}
		}},
		{"protected file stays", `python3 -c 'open(".claude/settings.json","w").write("{}")' || printf x >> .claude/settings.json`, -1, func(t *testing.T, out string) {
			if got := read(t, filepath.Join(proj, ".claude", "settings.json")); got != `{"hooks":{}}` {
				t.Errorf("settings.json = %q", got)
			}
		}},
		{"protected dir cannot gain files", `echo x > .claude/new.json`, -1, func(t *testing.T, out string) {
			if _, err := os.Stat(filepath.Join(proj, ".claude", "new.json")); err == nil {
				t.Error(".claude/new.json was created")
			}
		}},
		{"protected dir cannot be moved", `mv .claude .claude-old`, -1, func(t *testing.T, out string) {
			if _, err := os.Stat(filepath.Join(proj, ".claude", "settings.json")); err != nil {
				t.Error(err)
			}
		}},
		{"a protected tree's parent cannot be moved aside", `mv .git .git-old || python3 -c 'import os; os.rename(".git", ".git-old")'; mkdir -p .git && echo '[core] fsmonitor = x' > .git/config`, -1, func(t *testing.T, out string) {
			if _, err := os.Lstat(filepath.Join(proj, ".git-old")); err == nil {
				t.Error(".git was moved aside")
			}
			if got := read(t, filepath.Join(proj, ".git", "config")); got != "[core]\n" {
				t.Errorf(".git/config = %q", got)
			}
		}},
		{"git config stays", `git config core.fsmonitor 'touch /tmp/pwned'`, -1, func(t *testing.T, out string) {
			if got := read(t, filepath.Join(proj, ".git", "config")); got != "[core]\n" {
				t.Errorf(".git/config = %q", got)
			}
		}},
		{"secret dir is empty", `ls -A "` + secretDir + `"; cat "` + secretDir + `/operator-token"`, -1, func(t *testing.T, out string) {
			if strings.Contains(out, "swop_SECRET") || strings.Contains(out, "operator-token\n") {
				t.Errorf("the token leaked: %q", out)
			}
		}},
		{"store reads empty", `cat .statewright/state.db .statewright/state.db-wal; grep -r STORE . ; true`, 0, func(t *testing.T, out string) {
			if strings.Contains(out, "STORE") {
				t.Errorf("the store leaked: %q", out)
			}
		}},
		{"store cannot be truncated", `: > .statewright/state.db; rm -f .statewright/state.db`, -1, func(t *testing.T, out string) {
			if got := read(t, store); got != "SQLite format 3 STORE" {
				t.Errorf("store = %q", got)
			}
		}},
		{"outside the scope is read-only", `cat "` + outside + `" && echo x > "` + outside + `"`, -1, func(t *testing.T, out string) {
			if !strings.Contains(out, "outside") {
				t.Errorf("could not read outside: %q", out)
			}
			if got := read(t, outside); got != "outside" {
				t.Errorf("outside = %q", got)
			}
		}},
		{"tmp is the session's", `echo kept > /tmp/f && echo "$TMPDIR"`, 0, func(t *testing.T, out string) {
			if got := read(t, filepath.Join(tmp, "f")); got != "kept\n" {
				t.Errorf("session tmp f = %q", got)
			}
		}},
		{"missing protected names are not created", `true`, 0, func(t *testing.T, out string) {
			for _, n := range []string{".codex", "does-not-exist"} {
				if _, err := os.Lstat(filepath.Join(proj, n)); err == nil {
					t.Errorf("%s was created in the user's tree", n)
				}
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, code := run(t, a, p, proj, c.script)
			if c.wantCode >= 0 && code != c.wantCode || c.wantCode < 0 && code == 0 {
				t.Errorf("exit %d, want %d; output:\n%s", code, c.wantCode, out)
			}
			c.check(t, out)
		})
	}
}

// TestReadOnlyProfile: the zero profile writes nothing anywhere.
func TestReadOnlyProfile(t *testing.T) {
	a := need(t)
	dir := t.TempDir()
	write(t, filepath.Join(dir, "f"), "orig")
	out, code := run(t, a, &Profile{Visible: []string{dir}}, dir, `python3 -c 'open("f","w").write("x")' 2>&1 || echo x > f`)
	if code == 0 {
		t.Errorf("write succeeded: %s", out)
	}
	if got := read(t, filepath.Join(dir, "f")); got != "orig" {
		t.Errorf("f = %q", got)
	}
}

// TestProcessesAndNetwork: PID namespace, no_new_privs, no capabilities,
// no nested user namespaces, no network unless granted.
func TestProcessesAndNetwork(t *testing.T) {
	a := need(t)
	out, code := run(t, a, &Profile{}, "/", `
grep -E '^(NoNewPrivs|CapEff):' /proc/self/status
echo "procs=$(ls /proc | grep -c '^[0-9]')"
cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' ' | tr '\n' ' '; echo
unshare -U true 2>/dev/null && echo nested-userns-ok
umount /proc 2>/dev/null && echo umount-ok
(exec 3<>/dev/tcp/1.1.1.1/53) 2>/dev/null && echo net-ok
kill -0 `+itoa(os.Getpid())+` 2>/dev/null && echo sees-parent
true`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	for _, want := range []string{"NoNewPrivs:\t1", "CapEff:\t0000000000000000"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	for _, bad := range []string{"nested-userns-ok", "umount-ok", "net-ok", "sees-parent", "eth0"} {
		if strings.Contains(out, bad) {
			t.Errorf("%q in:\n%s", bad, out)
		}
	}
	if !strings.Contains(out, "procs=") || strings.Contains(out, "procs=0") {
		t.Errorf("no procs line: %s", out)
	}
	var n int
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(l, "procs="); ok {
			for _, c := range v {
				n = n*10 + int(c-'0')
			}
		}
	}
	if n > 6 {
		t.Errorf("sees %d processes: not its own PID namespace\n%s", n, out)
	}

	// With Network the host's interfaces are there.
	out, _ = run(t, a, &Profile{Network: true}, "/", `tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\n' ' '`)
	hostOut, err := os.ReadFile("/proc/net/dev")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(hostOut), "\n") > 3 && strings.TrimSpace(out) == "lo" {
		t.Errorf("Network granted but only loopback: %q", out)
	}
}

func itoa(i int) string {
	var b [20]byte
	n := len(b)
	for {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
		if i == 0 {
			break
		}
	}
	return string(b[n:])
}

// TestDiesWithParent: killing the sandbox's parent kills what runs inside.
func TestDiesWithParent(t *testing.T) {
	a := need(t)
	dir := t.TempDir()
	marker := filepath.Join(dir, "alive")
	cmd, err := Command(context.Background(), a, &Profile{Writable: []string{dir}, Visible: []string{dir}}, dir,
		[]string{"/bin/bash", "-c", `(while :; do date +%s%N > "` + marker + `"; sleep 0.05; done) & wait`},
		[]string{"PATH=/usr/bin:/bin"})
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		sleep()
	}
	_ = cmd.Process.Kill() // bwrap itself: --die-with-parent kills the tree
	_ = cmd.Wait()
	sleep()
	before := read(t, marker)
	for i := 0; i < 6; i++ {
		sleep()
	}
	if after := read(t, marker); after != before {
		t.Errorf("the background loop outlived the sandbox (%q -> %q)", before, after)
	}
}

func TestStripEnv(t *testing.T) {
	in := []string{"PATH=/bin", "STATEWRIGHT_OPERATOR_TOKEN=swop_x", "STATEWRIGHT_STORE=/s", "CLAUDE_ENV_FILE=/e", "HOME=/h", "STATEWRIGHTX=keep"}
	got := StripEnv(in)
	want := []string{"PATH=/bin", "HOME=/h", "STATEWRIGHTX=keep"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("StripEnv = %q, want %q", got, want)
	}
	if got := MergeEnv([]string{"A=1", "B=2"}, []string{"B=3", "C=4"}); !reflect.DeepEqual(got, []string{"A=1", "B=3", "C=4"}) {
		t.Errorf("MergeEnv = %q", got)
	}
}

func TestUnavailable(t *testing.T) {
	_, err := Command(context.Background(), Availability{Why: "no bwrap"}, &Profile{}, "/", []string{"true"}, nil)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "no bwrap") {
		t.Errorf("err = %v", err)
	}
}

// TestNoUserNamespaces: where the kernel refuses user namespaces (here: a
// user namespace whose max_user_namespaces is 0, made by bubblewrap's
// --disable-userns), Probe reports no sandbox and says why. The probe runs
// in a child process of this test binary.
func TestNoUserNamespaces(t *testing.T) {
	if os.Getenv("SANDBOX_TEST_PROBE_CHILD") == "1" {
		a := Probe(context.Background())
		os.Stdout.WriteString("ok=" + map[bool]string{true: "yes", false: "no"}[a.OK()] + " why=" + a.Why + "\n")
		return
	}
	a := need(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(a.Bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-user", "--disable-userns", "--",
		exe, "-test.run=^TestNoUserNamespaces$", "-test.count=1")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "SANDBOX_TEST_PROBE_CHILD=1"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !strings.Contains(string(out), "ok=no why=bubblewrap cannot create its namespaces here") {
		t.Errorf("probe under no user namespaces: %s", out)
	}
}

func sleep() { _ = exec.Command("sleep", "0.05").Run() }

// TestFilesystemUnprivileged runs TestFilesystem and TestShellCommand again
// as an unprivileged user (nobody), when this test runs as root: root
// passes file modes and some namespace limits, so the protections must
// hold without it (docs/e2e.md: outcome tests run as an unprivileged user).
func TestFilesystemUnprivileged(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("already unprivileged: TestFilesystem ran as this user")
	}
	need(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// A directory nobody can use for its temporary files, and a copy of
	// this binary it can run.
	dir, err := os.MkdirTemp("", "sandbox-unprivileged")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "sandbox.test")
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^(TestFilesystem|TestShellCommand|TestReadOnlyProfile|TestProcessesAndNetwork|TestNetworkProxy|TestServerRunsCommands|TestServerLeftoversDie|TestServerPhaseChange)$", "-test.count=1", "-test.v")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "TMPDIR=" + dir, "HOME=" + dir, "STATEWRIGHT_REQUIRE_SANDBOX=1", "LANG=C"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	for _, name := range []string{"TestFilesystem", "TestShellCommand", "TestReadOnlyProfile", "TestProcessesAndNetwork", "TestNetworkProxy",
		"TestServerRunsCommands", "TestServerLeftoversDie", "TestServerPhaseChange"} {
		if !strings.Contains(string(out), "--- PASS: "+name+" ") {
			t.Errorf("%s did not pass as nobody:\n%s", name, out)
		}
	}
}
