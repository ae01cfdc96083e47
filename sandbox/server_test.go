//go:build linux

package sandbox

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// serverFixture is a project, a session and a profile maker for the
// server's tests; the session's server is stopped when the test ends.
type serverFixture struct {
	t          *testing.T
	a          Availability
	exe        string
	root, proj string
	session    string
	sess       string
	n          int
}

func newServerFixture(t *testing.T) *serverFixture {
	a := need(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// A short root: a unix socket's path holds at most 107 bytes.
	root, err := os.MkdirTemp("", "sw")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	f := &serverFixture{t: t, a: a, exe: exe, root: filepath.Join(root, "sandboxes"), proj: filepath.Join(root, "proj"), session: "claude-code:" + t.Name()}
	f.sess = SessionDir(f.root, f.session)
	write(t, filepath.Join(f.proj, "sub", "keep"), "")
	write(t, filepath.Join(f.proj, ".claude", "settings.json"), "{}")
	t.Cleanup(func() { StopServer(f.root, f.session) })
	return f
}

// call prepares a call of phase (writable: the project is writable), with
// further read-only paths, and returns the command a harness's shell runs
// for script.
func (f *serverFixture) call(phase string, writable bool, script string, readOnly ...string) (Call, string) {
	f.t.Helper()
	return f.callWith(phase, writable, script, nil, readOnly...)
}

// profile is a fresh call id and the profile of phase for it: its call
// directory writable, and the project too when writable; .claude,
// readOnly and the sessions read-only.
func (f *serverFixture) profile(phase string, writable bool, readOnly ...string) (string, *Profile) {
	f.n++
	id := "toolu_" + strconv.Itoa(f.n)
	c := CallDir(f.sess, id)
	p := &Profile{Phase: phase, Writable: []string{filepath.Join(f.sess, "cache"), c.RW},
		ReadOnly: append([]string{filepath.Join(f.proj, ".claude"), filepath.Dir(f.sess)}, readOnly...), Visible: []string{f.proj, f.root},
		Tmp: filepath.Join(f.sess, "tmp"), Env: []string{"TMPDIR=/tmp"}}
	if writable {
		p.Writable = append(p.Writable, f.proj)
	}
	return id, p
}

// listCall prepares script for the implementing phase, the project
// writable, with a literal pipeline's elements or a list's items (none:
// the inner bash), and returns the command as the harness runs it, with
// no launcher to fall back on (the phase's server must run it).
func (f *serverFixture) listCall(script string, elems [][]string, list []ListItem) string {
	f.t.Helper()
	id, p := f.profile("implementing", true)
	c, err := PrepareCallList(f.sess, "", id, f.a, p, script, elems, list)
	if err != nil {
		f.t.Fatal(err)
	}
	return ShellCommand("/nonexistent/statewright-sandbox", c, script)
}

// callWith is call with the profile changed by prep (nil: unchanged).
func (f *serverFixture) callWith(phase string, writable bool, script string, prep func(*Profile), readOnly ...string) (Call, string) {
	f.t.Helper()
	id, p := f.profile(phase, writable, readOnly...)
	if prep != nil {
		prep(p)
	}
	c2, err := PrepareCall(f.sess, "", id, f.a, p, script)
	if err != nil {
		f.t.Fatal(err)
	}
	return c2, ShellCommand(f.exe, c2, script)
}

// run runs the rewritten command through a real bash in the project, as a
// harness does, with stdin, and returns its output and exit status.
func (f *serverFixture) run(outer, stdin string) (string, int) {
	f.t.Helper()
	cmd := exec.Command("/bin/bash", "-c", outer)
	cmd.Dir = f.proj
	cmd.Env = append(os.Environ(), "STATEWRIGHT_OPERATOR_TOKEN=swop_leak", "CLAUDE_ENV_FILE=/x")
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	code, ok := ExitStatus(err)
	if !ok {
		f.t.Fatal(err)
	}
	return string(out), code
}

// record returns the session's running server as recorded.
func (f *serverFixture) record() serverRecord {
	f.t.Helper()
	var r serverRecord
	b, err := os.ReadFile(filepath.Join(ServerDir(f.root), filepath.Base(f.sess)+".json"))
	if err != nil {
		return r
	}
	if err := json.Unmarshal(b, &r); err != nil {
		f.t.Fatal(err)
	}
	return r
}

// TestServerRunsCommands: commands of one profile run in one long-lived
// sandbox, with the per-command guarantees: exit status, cd carried over,
// stdin, statewright's variables stripped, the protected tree read-only,
// the server unreachable, untraceable and unkillable from inside, no
// privileges.
func TestServerRunsCommands(t *testing.T) {
	f := newServerFixture(t)
	c, outer := f.call("implementing", true, `cd sub && read -r line && echo "in=$line" && echo hi > f.txt && echo "secret=${STATEWRIGHT_OPERATOR_TOKEN:-none} env=${CLAUDE_ENV_FILE:-none} phase=$STATEWRIGHT_SANDBOX_PHASE"; printf x > ../.claude/settings.json; exit 3`)
	out, code := f.run(outer+"\necho \"rc=$? pwd=$(pwd)\"", "typed\n")
	for _, want := range []string{"in=typed\n", "secret=none env=none phase=implementing\n", "Read-only file system", "rc=3 pwd=" + filepath.Join(f.proj, "sub")} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if code != 0 {
		t.Errorf("outer exit %d", code)
	}
	if r, ok := ReadResult(c); !ok || r.ExitCode != 3 {
		t.Errorf("result = %+v %v", r, ok)
	}
	if got := read(t, filepath.Join(f.proj, "sub", "f.txt")); got != "hi\n" {
		t.Errorf("f.txt = %q", got)
	}
	if got := read(t, filepath.Join(f.proj, ".claude", "settings.json")); got != "{}" {
		t.Errorf("settings.json = %q", got)
	}
	first := f.record()
	if first.PID == 0 || first.Phase != "implementing" {
		t.Fatalf("no server recorded: %+v", first)
	}

	// The second command goes to the same server, which its commands can
	// neither reach, read, trace nor kill.
	srv := ServerDir(f.root)
	probe := strings.Join([]string{
		`echo "srv=$(ls -A ` + Quote(srv) + ` | wc -l)"`,
		`python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])' ` + Quote(sockPath(srv, filepath.Base(f.sess), first.Key)) + ` 2>/dev/null && echo CONNECTED`,
		`cat /proc/1/environ /proc/$$/environ 2>/dev/null | tr '\0' '\n' | grep -c STATEWRIGHT_OP`,
		`for l in /proc/1/fd/*; do readlink "$l"; done 2>/dev/null | grep -q . && echo FDS`,
		`cat /proc/1/environ >/dev/null 2>&1 && echo ENVIRON`,
		`python3 -c 'import ctypes; print("PTRACED" if ctypes.CDLL(None, use_errno=True).ptrace(16, 1, 0, 0) == 0 else "no ptrace")'`,
		`kill -9 1; kill -TERM 1; kill -INT 1`,
		`grep -E '^(NoNewPrivs|CapEff)' /proc/self/status | tr -s '\t ' ' '`,
		`echo "pid=$$"`,
	}, "\n")
	_, outer = f.call("implementing", true, probe)
	out, _ = f.run(outer, "")
	for _, want := range []string{"srv=0\n", "\n0\n", "no ptrace\n", "NoNewPrivs: 1\n", "CapEff: 0000000000000000\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	for _, bad := range []string{"CONNECTED", "FDS", "ENVIRON", "PTRACED", "pid=1\n"} {
		if strings.Contains(out, bad) {
			t.Errorf("%q in:\n%s", bad, out)
		}
	}
	_, outer = f.call("implementing", true, "exit 0")
	if _, code := f.run(outer, ""); code != 0 {
		t.Errorf("after kill attempts: exit %d", code)
	}
	if r := f.record(); r != first {
		t.Errorf("the server changed: %+v, was %+v", r, first)
	}
}

// TestServerLeftoversDie: what a command leaves running in the background
// dies when it ends, as with one bubblewrap per command.
func TestServerLeftoversDie(t *testing.T) {
	f := newServerFixture(t)
	late := filepath.Join(f.proj, "late")
	_, outer := f.call("implementing", true, "(sleep 0.5; touch "+Quote(late)+") & nohup sh -c 'sleep 0.5; touch "+Quote(late)+"2' >/dev/null 2>&1 & setsid sh -c 'sleep 0.5; touch "+Quote(late)+"3' >/dev/null 2>&1 & sleep 0.1; exit 0")
	if out, code := f.run(outer, ""); code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	time.Sleep(time.Second)
	for _, p := range []string{late, late + "2", late + "3"} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("a background command outlived its command: %s exists", p)
		}
	}
}

// TestServerPhaseChange is the outcome test of the process-model gap: a
// command the harness keeps running in the background (Claude Code's
// run_in_background) under a phase that may write the project stops when
// the session moves to a narrower phase, whether the next command or the
// hook's decision notices first.
func TestServerPhaseChange(t *testing.T) {
	for _, via := range []string{"next command", "decision"} {
		t.Run(via, func(t *testing.T) {
			f := newServerFixture(t)
			ticks := filepath.Join(f.proj, "ticks")
			bg := f.ticking(ticks)
			done := make(chan error, 1)
			go func() { done <- bg.Wait() }()
			defer func() { _ = bg.Process.Kill() }()

			if via == "decision" {
				planning := "planning"
				StopServerUnless(f.root, f.session, &planning)
			} else {
				_, outer := f.call("planning", false, "echo y >> "+Quote(ticks)+"; echo rc=$?")
				out, _ := f.run(outer, "")
				if !strings.Contains(out, "Read-only file system") {
					t.Errorf("planning wrote the project:\n%s", out)
				}
				if r := f.record(); r.Phase != "planning" {
					t.Errorf("server after the change: %+v", r)
				}
			}
			select {
			case err := <-done:
				if code, _ := ExitStatus(err); code != 128+int(syscall.SIGKILL) {
					t.Errorf("background command ended with %d, want 137", code)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the background command of the wider phase still runs")
			}
			if stillGrows(ticks) {
				t.Error("the wider phase's loop still writes the project")
			}
		})
	}
}

// TestServerSignals: a signal to the launcher reaches the command, and a
// launcher killed outright (a harness's timeout) takes the command with it.
func TestServerSignals(t *testing.T) {
	f := newServerFixture(t)
	_, outer := f.call("implementing", true, "trap 'echo got-int; exit 7' INT; echo ready; sleep 30 & wait")
	// The harness signals its shell's process group (the launcher in it).
	cmd := exec.Command("/bin/bash", "-c", outer)
	cmd.Dir = f.proj
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(stdout)
	if line, _ := br.ReadString('\n'); line != "ready\n" {
		t.Fatalf("got %q", line)
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
	rest, _ := br.ReadString(0)
	code, _ := ExitStatus(cmd.Wait())
	if !strings.Contains(rest, "got-int") || code != 7 {
		t.Errorf("after SIGINT: exit %d, output %q", code, rest)
	}

	ticks := filepath.Join(f.proj, "ticks")
	cmd = f.ticking(ticks)
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Wait()
	time.Sleep(300 * time.Millisecond)
	if stillGrows(ticks) {
		t.Error("the command outlived its killed launcher")
	}
}

// ticking starts, in a process group of its own, the rewritten command of
// a loop that appends to ticks in the project, and returns once it runs.
func (f *serverFixture) ticking(ticks string) *exec.Cmd {
	f.t.Helper()
	_, outer := f.call("implementing", true, "while :; do echo x >> "+Quote(ticks)+"; sleep 0.05; done")
	cmd := exec.Command("/bin/bash", "-c", outer)
	cmd.Dir = f.proj
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	waitFor(f.t, func() bool { return fileSize(ticks) > 4 })
	return cmd
}

// stillGrows reports whether the file p grows within 300 ms.
func stillGrows(p string) bool {
	size := fileSize(p)
	time.Sleep(300 * time.Millisecond)
	return fileSize(p) != size
}

// TestServerFallback: when the server cannot start, the command still
// runs, with its own bubblewrap, never unsandboxed.
func TestServerFallback(t *testing.T) {
	f := newServerFixture(t)
	c, outer := f.call("implementing", true, "printf x > .claude/settings.json; echo ran; exit 5")
	breakServer(t, c)
	out, _ := f.run(outer, "")
	if !strings.Contains(out, "ran\n") || !strings.Contains(out, "Read-only file system") {
		t.Errorf("fallback output:\n%s", out)
	}
	if r, ok := ReadResult(c); !ok || r.ExitCode != 5 {
		t.Errorf("result = %+v %v", r, ok)
	}
	if got := read(t, filepath.Join(f.proj, ".claude", "settings.json")); got != "{}" {
		t.Errorf("settings.json = %q", got)
	}
}

// TestServerRefuses: a request for another session or profile, or with
// other file descriptors than stdin, stdout and stderr, or a directory
// among them, runs nothing.
func TestServerRefuses(t *testing.T) {
	f := newServerFixture(t)
	_, outer := f.call("implementing", true, "exit 0")
	if _, code := f.run(outer, ""); code != 0 {
		t.Fatalf("exit %d", code)
	}
	r := f.record()
	sock := sockPath(ServerDir(f.root), filepath.Base(f.sess), r.Key)
	marker := filepath.Join(f.proj, "ran")
	dir, err := os.Open(f.root)
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	for name, tc := range map[string]struct {
		key, session string
		fds          []int
	}{
		"other profile": {"0000", filepath.Base(f.sess), []int{0, 1, 2}},
		"other session": {r.Key, "feedface", []int{0, 1, 2}},
		"two fds":       {r.Key, filepath.Base(f.sess), []int{0, 1}},
		"a directory":   {r.Key, filepath.Base(f.sess), []int{0, 1, int(dir.Fd())}},
	} {
		conn, err := dialServer(sock)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := json.Marshal(request{Key: tc.key, Session: tc.session, Script: "touch " + Quote(marker), Cwd: f.proj})
		msg := binary.BigEndian.AppendUint32(nil, uint32(len(req)))
		if _, _, err := conn.WriteMsgUnix(append(msg, req...), syscall.UnixRights(tc.fds...), nil); err != nil {
			t.Fatal(err)
		}
		var rep reply
		err = readReply(bufio.NewReader(conn), &rep)
		conn.Close()
		if err != nil || rep.Started || rep.Error == "" {
			t.Errorf("%s: reply %+v, %v", name, rep, err)
		}
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused request ran: %v", err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for i := 0; i < 400; i++ {
		if cond() {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatal("timed out")
}

func fileSize(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return -1
	}
	return fi.Size()
}

// TestServerLongPath: a root deeper than a unix socket's name may be still
// gets its server (the launcher binds and connects from the directory).
func TestServerLongPath(t *testing.T) {
	f := newServerFixture(t)
	f.root = filepath.Join(f.root, strings.Repeat("d", 60), strings.Repeat("e", 40))
	f.sess = SessionDir(f.root, f.session)
	t.Cleanup(func() { StopServer(f.root, f.session) })
	if len(sockPath(ServerDir(f.root), filepath.Base(f.sess), "0123456789abcdef")) < 108 {
		t.Fatal("the root is not deep enough")
	}
	_, outer := f.call("implementing", true, "echo pid=$$")
	out, code := f.run(outer, "")
	if code != 0 || strings.Contains(out, "pid=1\n") || f.record().PID == 0 {
		t.Errorf("no server for a long path: exit %d, %q, %+v", code, out, f.record())
	}
}

// TestServerFastPath: once the phase's server runs, the rewritten command
// needs no launcher (it runs none: the launcher's path here does not
// exist): the harness's bash hands the command to the server's keeper.
// stdin, stdout, stderr, the exit status, the variables the shell exported
// (statewright's stripped), a cd and signals behave as in plain bash.
func TestServerFastPath(t *testing.T) {
	f := newServerFixture(t)
	_, outer := f.call("implementing", true, "exit 0")
	if out, code := f.run(outer, ""); code != 0 {
		t.Fatalf("first command: exit %d: %s", code, out)
	}
	fast := func(script string) (Call, string) {
		c, _ := f.call("implementing", true, script)
		return c, ShellCommand("/nonexistent/statewright-sandbox", c, script)
	}
	c, outer := fast(`cd sub && read -r line && echo "in=$line" && echo "err" >&2 && echo "mine=$MINE secret=${STATEWRIGHT_OPERATOR_TOKEN:-none} multi=$MULTI"; printf x > ../.claude/settings.json; exit 4`)
	cmd := exec.Command("/bin/bash", "-c", "export MINE=exported MULTI=$'a\\nb \"c\"'\n"+outer+"\necho \"rc=$? pwd=$(pwd)\"")
	cmd.Dir = f.proj
	cmd.Env = append(os.Environ(), "STATEWRIGHT_OPERATOR_TOKEN=swop_leak")
	cmd.Stdin = strings.NewReader("typed\n")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s %s", err, stdout.String(), stderr.String())
	}
	want := "in=typed\nmine=exported secret=none multi=a\nb \"c\"\nrc=4 pwd=" + filepath.Join(f.proj, "sub") + "\n"
	if stdout.String() != want {
		t.Errorf("stdout = %q, want %q", stdout.String(), want)
	}
	if e := stderr.String(); !strings.HasPrefix(e, "err\n") || !strings.Contains(e, "Read-only file system") || strings.Contains(e, "nonexistent") {
		t.Errorf("stderr = %q", e)
	}
	if r, ok := ReadResult(c); !ok || r.ExitCode != 4 {
		t.Errorf("result = %+v %v", r, ok)
	}
	if got := read(t, filepath.Join(f.proj, ".claude", "settings.json")); got != "{}" {
		t.Errorf("settings.json = %q", got)
	}

	// A signal to the harness's shell reaches the command; a killed shell
	// takes the command with it.
	_, outer = fast("trap 'echo got-int; exit 7' INT; echo ready; sleep 30 & wait")
	sig := exec.Command("/bin/bash", "-c", outer)
	sig.Dir = f.proj
	sig.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, _ := sig.StdoutPipe()
	if err := sig.Start(); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(out)
	if line, _ := br.ReadString('\n'); line != "ready\n" {
		t.Fatalf("got %q", line)
	}
	_ = syscall.Kill(-sig.Process.Pid, syscall.SIGINT)
	rest, _ := br.ReadString(0)
	if code, _ := ExitStatus(sig.Wait()); !strings.Contains(rest, "got-int") || code != 7 {
		t.Errorf("after SIGINT: exit %d, output %q", code, rest)
	}
	ticks := filepath.Join(f.proj, "ticks")
	_, outer = fast("while :; do echo x >> " + Quote(ticks) + "; sleep 0.05; done")
	loop := exec.Command("/bin/bash", "-c", outer)
	loop.Dir = f.proj
	if err := loop.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return fileSize(ticks) > 4 })
	_ = loop.Process.Kill()
	_ = loop.Wait()
	time.Sleep(300 * time.Millisecond)
	if stillGrows(ticks) {
		t.Error("the command outlived its killed shell")
	}
}

// TestServerDiesWithHarness: when the harness (the shell's parent) exits,
// its keeper exits and the phase's sandbox dies with it, whether or not
// the fast path took commands.
func TestServerDiesWithHarness(t *testing.T) {
	f := newServerFixture(t)
	_, first := f.call("implementing", true, "exit 0")
	_, second := f.call("implementing", true, "exit 0")
	// The harness: a bash whose child shell runs the rewritten commands.
	cmd := exec.Command("/bin/bash", "-c", "/bin/bash -c "+Quote(first+"\n"+second)+"; exit 0")
	cmd.Dir = f.proj
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	r := f.record()
	if r.PID == 0 {
		t.Fatal("no server recorded")
	}
	waitFor(t, func() bool { return !alive(r.PID, r.Start) })
	// The session goes on (a resumed harness): its next command runs.
	f.runWithin(60*time.Second, "after the harness exited")

	// A keeper killed outright leaves its FIFO with no reader: the next
	// command waits for the keeper's answer, then runs the launcher.
	r = f.record()
	bwrap, _ := strconv.Atoi(procStat(r.PID)[1])
	k, _ := strconv.Atoi(procStat(bwrap)[1])
	if !strings.Contains(read(t, "/proc/"+strconv.Itoa(k)+"/cmdline"), "keep") {
		t.Fatalf("%d is not the keeper", k)
	}
	_ = syscall.Kill(k, syscall.SIGKILL)
	waitFor(t, func() bool { return !alive(r.PID, r.Start) })
	f.runWithin(90*time.Second, "after the keeper was killed")
}

// runWithin runs a command of the session's profile and fails unless it
// ends, successfully, within d.
func (f *serverFixture) runWithin(d time.Duration, when string) {
	f.t.Helper()
	_, outer := f.call("implementing", true, "echo ran")
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/bash", "-c", outer)
	cmd.Dir = f.proj
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != "ran\n" {
		f.t.Errorf("%s: %v, %q", when, err, out)
	}
}

// TestHarnessCrashSweeps: the harness dies (no SessionEnd) while a
// command of the fast path that planted a name of the law (.mcp.json,
// absent at the decision) still runs. The keeper stops the sandbox and
// the command's sweep takes the name out.
func TestHarnessCrashSweeps(t *testing.T) {
	f := newServerFixture(t)
	mcp := filepath.Join(f.proj, ".mcp.json")
	_, first := f.call("implementing", true, "exit 0")
	_, second := f.call("implementing", true, "printf '{}' > .mcp.json; echo planted; sleep 60", mcp)
	// The harness: a bash whose child shell runs the rewritten commands.
	harness := exec.Command("/bin/bash", "-c", "/bin/bash -c "+Quote(first+"\n"+second)+"; exit 0")
	harness.Dir = f.proj
	// Its output goes to a file: a shell left waiting must not hold a pipe
	// the test waits on.
	out, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	harness.Stdout, harness.Stderr = out, out
	harness.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := harness.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Kill(-harness.Process.Pid, syscall.SIGKILL) }()
	waitFor(t, func() bool { _, err := os.Lstat(mcp); return err == nil })
	_ = harness.Process.Kill()
	_ = harness.Wait()
	waitFor(t, func() bool { _, err := os.Lstat(mcp); return err != nil })
}
