package sandbox

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/statewright-go/statewright/shell"
)

// sandboxItems is what the hook records for a list (harness.sandboxList).
func sandboxItems(t *testing.T, cmd string) []ListItem {
	t.Helper()
	items, ok := shell.LiteralList(cmd)
	if !ok {
		t.Fatalf("%q is not a literal list", cmd)
	}
	list := make([]ListItem, len(items))
	for i, it := range items {
		cmds := make([]ListCmd, len(it.Cmds))
		for j, c := range it.Cmds {
			cmds[j] = ListCmd{Argv: c.Argv}
			for _, r := range c.Redirs {
				cmds[j].Redirs = append(cmds[j].Redirs, Redir{Fd: r.Fd, Op: r.Op, Target: r.Target})
			}
		}
		list[i] = ListItem{Op: it.Op, Offset: it.Offset, Cmds: cmds}
	}
	return list
}

// TestListLikeBash is the differential test of direct exec of literal
// lists: each list runs through the phase's real sandbox twice, once as
// the hook prepares it (its items recorded: the server runs them) and once
// as `bash -c`, from the same harness shell; stdout, stderr, the exit
// status, the directory the harness's shell ends in, the files the list
// left in a scratch directory, and the lines its logging commands wrote
// are the same. The protected tree stays unchanged both ways. An item the
// server is not sure of (a program not found, a redirection that fails, a
// cd it does not reproduce) hands the rest to bash: what ran before it
// does not run again.
func TestListLikeBash(t *testing.T) {
	f := newServerFixture(t)
	_, outer := f.call("implementing", true, "exit 0")
	if out, code := f.run(outer, ""); code != 0 {
		t.Fatalf("first command: exit %d: %s", code, out)
	}
	if err := os.Symlink("sub", filepath.Join(f.proj, "link")); err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(f.proj, ".claude", "settings.json")
	run := likeBashListRunner(t, f)
	log := filepath.Join(f.proj, "ran.log")
	scratch := filepath.Join(f.proj, "w")
	reset := func() {
		if err := os.RemoveAll(scratch); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(scratch, "in"), "abc\ndef\n")
		if err := os.Symlink("../.claude/settings.json", filepath.Join(scratch, "law")); err != nil {
			t.Fatal(err)
		}
	}
	// files lists the scratch directory: names and contents.
	files := func() string {
		var out []string
		_ = filepath.WalkDir(scratch, func(p string, d os.DirEntry, err error) error {
			if err != nil || p == scratch {
				return nil
			}
			b, _ := os.ReadFile(p)
			out = append(out, strings.TrimPrefix(p, scratch)+"="+string(b))
			return nil
		})
		slices.Sort(out)
		return strings.Join(out, "\n")
	}
	const logs = "sh -c 'echo ran >> ran.log'"
	for _, tc := range []struct {
		cmd    string
		pre    string // more of the harness's shell before it
		env    bool   // stdout is environments: compared sorted
		signal bool   // a signal kills an item
		ran    int    // the lines the logging items wrote
	}{
		{cmd: "/bin/echo a && /bin/echo b"},
		{cmd: "/bin/false && /bin/echo no"},
		{cmd: "/bin/false || /bin/echo yes"},
		{cmd: "/bin/true || /bin/echo no; /bin/echo after"},
		{cmd: "/bin/echo a; /bin/false"},
		{cmd: "sh -c 'exit 3' || sh -c 'exit 4'"},
		{cmd: "sh -c 'exit 3' && /bin/echo no"},
		{cmd: "false || true && /bin/echo ok"},
		{cmd: ": && true && false"},
		{cmd: "true x; false --help"},
		{cmd: "/bin/false && /bin/echo no || /bin/echo yes && /bin/echo also"},
		{cmd: "/bin/echo a\n/bin/false\n\n/bin/echo b # comment"},
		{cmd: "cat && cat", pre: ""}, // stdin: the first reads it all
		{cmd: "head -c 2 && cat"},    // … or some
		// cd: the list's directory, $PWD and $OLDPWD, and the harness's.
		{cmd: "cd sub"},
		{cmd: "cd sub && ls -a"},
		{cmd: "cd sub && env", env: true},
		{cmd: "cd sub && cd .. && cd sub && env | grep PWD | sort"},
		{cmd: "cd ./sub/ && /bin/pwd && /bin/pwd -L"},
		{cmd: "cd link && /bin/pwd -L && /bin/pwd -P && cd .. && /bin/pwd -L"},
		{cmd: "cd link/.. && /bin/pwd -L"},
		{cmd: "cd sub/../sub && env", env: true},
		{cmd: "cd / && ls -d bin"},
		{cmd: "cd /tmp && /bin/true"},
		{cmd: "cd sub && ls", pre: "cd link\n"},
		{cmd: "cd .. && /bin/pwd -L", pre: "cd link\n"},
		{cmd: "cd sub && env", pre: "export PWD=/nonexistent\n", env: true},
		{cmd: "cd sub && env", pre: "unset OLDPWD\n", env: true},
		{cmd: "cd nonexistent && /bin/echo no"},
		{cmd: "cd nonexistent || /bin/pwd"},
		{cmd: "cd w/in && /bin/echo no"},
		{cmd: "cd sub && ls", pre: "export CDPATH=/\n"},
		// procfs is the server's view of itself (PID 1): bash judges it.
		{cmd: "cd /proc/1/cwd || /bin/echo refused"},
		{cmd: "cd /proc/1/cwd && /bin/echo in-it"},
		{cmd: "cd /proc/sys && /bin/pwd"},
		{cmd: "cd sub; nonexistent-program-x; /bin/pwd -L && env", env: true},
		{cmd: "cd w && /bin/echo x > rel && cat rel"},
		// Redirections, left to right.
		{cmd: "/bin/echo hi > w/out && cat w/out"},
		{cmd: "/bin/echo a > w/f; /bin/echo b >> w/f; cat < w/f"},
		{cmd: "sh -c 'echo o; echo e >&2' > w/f 2>&1; cat w/f"},
		{cmd: "sh -c 'echo o; echo e >&2' 2>&1 > w/f; cat w/f"},
		{cmd: "sh -c 'echo o; echo e >&2' &> w/f; cat w/f"},
		{cmd: "sh -c 'echo o; echo e >&2' &>> w/f; sh -c 'echo p; echo q >&2' &>> w/f; cat w/f"},
		{cmd: "sh -c 'echo o; echo e >&2' 1>&2"},
		{cmd: "sh -c 'echo e >&2' 2>/dev/null && /bin/echo ok"},
		{cmd: "/bin/echo x >/dev/null 2>&1 && /bin/echo ok"},
		{cmd: "true > w/t; : >> w/u; false > w/v || ls w"},
		{cmd: "/bin/echo old > w/t && : > w/t && wc -c w/t"},
		{cmd: "sh -c 'echo e >&2' 2>&1 | cat -n"},
		{cmd: "cat < w/in | tr a-z A-Z > w/up && cat w/up"},
		{cmd: "wc -l < w/in 0< w/in"},
		{cmd: "cat w/in 2> w/err | cat 1>&2 && cat w/err"},
		{cmd: "sh -c 'echo $0 $1' x 'y z' > w/o; cat w/o"},
		// Spellings without blanks: the same words and redirections as bash's.
		{cmd: "sh -c 'echo o; echo e >&2'>w/f 2>&1;cat w/f"},
		{cmd: "/bin/echo x&>w/g&&cat w/g"},
		{cmd: "/bin/echo 2>w/h;/bin/echo a2>w/j; cat w/h w/j"},
		{cmd: "/bin/echo a 1>>w/i;/bin/echo b 1>>w/i||/bin/false; cat<w/i"},
		{cmd: "sh -c 'echo e >&2' 2>&1>w/k|cat -n;cat w/k"},
		{cmd: "/bin/echo \"q'\" '\"' >w/l;cat w/l"},
		// Failing redirections: bash's message and status, from the item on.
		{cmd: "cat < w/missing && /bin/echo no"},
		{cmd: "cat < w/missing || /bin/echo yes"},
		{cmd: "/bin/echo x > w/nodir/f || /bin/echo failed"},
		{cmd: "/bin/echo x > w || /bin/echo failed"},
		{cmd: "cat < w; /bin/echo after"},
		{cmd: "cat < /proc/self/status > /dev/null && /bin/echo read"},
		{cmd: "ls > /proc/self/fd/9; /bin/echo after"},
		// The protected tree: read-only inside, whoever opens it.
		{cmd: "/bin/echo x > .claude/settings.json; cat .claude/settings.json"},
		{cmd: "true > .claude/settings.json && /bin/echo no"},
		{cmd: ": >> .claude/settings.json || /bin/echo refused"},
		{cmd: "cd .claude && /bin/echo x > settings.json"},
		{cmd: "/bin/echo pwned > w/law; cat w/law"},
		{cmd: "/bin/echo pwned &>> w/law; /bin/echo after"},
		{cmd: logs + " > .claude/new && " + logs, ran: 0},
		// Programs bash must run, from the item on; nothing before runs twice.
		{cmd: "nonexistent-program-x && /bin/echo no"},
		{cmd: logs + " && nonexistent-program-x; /bin/echo after", ran: 1},
		{cmd: logs + "\n" + logs + "\nnonexistent-program-x\n" + logs, ran: 3},
		{cmd: logs + " && ./w/in; " + logs, ran: 2},
		{cmd: logs + " > w/o && cat < w/missing; " + logs, ran: 2},
		{cmd: logs + " | cat && ./w | cat", ran: 1},
		{cmd: "cd sub && ./missing || env", env: true},
		{cmd: "/bin/true && env", pre: "export IFS\n", env: true},
		{cmd: "sh -c 'kill -KILL $$'; /bin/echo after", signal: true},
	} {
		list := sandboxItems(t, tc.cmd)
		ranLines := func() int {
			b, _ := os.ReadFile(log)
			_ = os.Remove(log)
			return strings.Count(string(b), "ran\n")
		}
		ranLines()
		reset()
		do, de, dc, dp := run(tc.cmd, nil, list, tc.pre)
		dran, dfiles := ranLines(), files()
		reset()
		bo, be, bc, bp := run(tc.cmd, nil, nil, tc.pre)
		bran, bfiles := ranLines(), files()
		sameAsBash(t, tc.cmd, tc.pre, tc.env, tc.signal, ran{do, de, dc, dp}, ran{bo, be, bc, bp})
		if dfiles != bfiles {
			t.Errorf("%q (%s): direct and bash -c left different files:\n%q\n   vs %q", tc.cmd, tc.pre, dfiles, bfiles)
		}
		if dran != tc.ran || bran != tc.ran {
			t.Errorf("%q: the logging items ran %d times (direct) and %d (bash); want %d", tc.cmd, dran, bran, tc.ran)
		}
		if b, err := os.ReadFile(settings); err != nil || string(b) != "{}" {
			t.Fatalf("%q: the protected settings are now %q (%v)", tc.cmd, b, err)
		}
		if _, err := os.Lstat(filepath.Join(f.proj, ".claude", "new")); err == nil {
			t.Fatalf("%q: a file was created in the protected tree", tc.cmd)
		}
	}
	// The lists run directly at all (else the comparisons above compared
	// bash with bash): a program's parent is the server (PID 1).
	for _, probe := range []string{
		"/bin/true && grep PPid /proc/self/status",
		"cd sub && grep PPid /proc/self/status > ../w/p; cat ../w/p",
		"true > w/p && cat < /dev/null | grep PPid /proc/self/status 2>&1",
	} {
		reset()
		if po, pe, _, _ := run(probe, nil, sandboxItems(t, probe), ""); po != "PPid:\t1\n" {
			t.Errorf("%q: %q %q; want the server as its parent (direct)", probe, po, pe)
		}
		reset()
		if po, _, _, _ := run(probe, nil, nil, ""); po == "PPid:\t1\n" {
			t.Errorf("%q through bash: %q; want bash as its parent", probe, po)
		}
	}
}

// TestListSignals: a signal the harness sends reaches the running item of
// a list the server runs, and the list then goes on or stops as bash -c's
// would (both ways compared: output and status); a killed harness shell
// takes the list with it, and no later item runs.
func TestListSignals(t *testing.T) {
	f := newServerFixture(t)
	_, outer := f.call("implementing", true, "exit 0")
	if out, code := f.run(outer, ""); code != 0 {
		t.Fatalf("first command: exit %d: %s", code, out)
	}
	prep := func(script string, direct bool) string {
		t.Helper()
		var list []ListItem
		if direct {
			list = sandboxItems(t, script)
		}
		return f.listCall(script, nil, list)
	}
	// interrupt runs script, sends sig to the harness's group once it
	// printed "ready", and returns the rest of its output and its status.
	interrupt := func(script string, direct bool, sig syscall.Signal) (string, int) {
		t.Helper()
		cmd := exec.Command("/bin/bash", "-c", prep(script, direct))
		cmd.Dir = f.proj
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(stdout)
		if line, _ := br.ReadString('\n'); line != "ready\n" {
			t.Fatalf("%q: got %q", script, line)
		}
		_ = syscall.Kill(-cmd.Process.Pid, sig)
		rest, _ := br.ReadString(0)
		code, _ := ExitStatus(cmd.Wait())
		return rest, code
	}
	// The item says it is ready only once its parent waits for it, when
	// that parent is bash (the fallback): bash that gets an INT before it
	// waits for its child dies of it, whatever the child does (a race of
	// bash's own under load, not the list's); the server (PID 1 of the
	// sandbox, the direct list's parent) waits from the fork on. Bounded,
	// so a kernel without wchan only brings the race back.
	const ready = `read c < /proc/$PPID/comm; if [ "$c" = bash ]; then i=0; while [ $i -lt 100000 ]; do w=; read w < /proc/$PPID/wchan; [ "$w" = do_wait ] && break; i=$((i+1)); done; fi; echo ready`
	for _, tc := range []struct {
		script string
		sig    syscall.Signal
		// out and code are bash's answer, which the direct list gives.
		out  string
		code int
		// raced: bash -c may print nothing instead of out. When bash
		// dies of the signal the server ends its session at once (what a
		// command leaves running dies with it), and a child that traps
		// the signal may die before its trap prints; the direct list
		// waits for its item, which is its own process.
		raced bool
	}{
		// The item survives INT: bash goes on.
		{`sh -c 'trap "echo got-int; exit 7" INT; ` + ready + `; sleep 20 & wait'; /bin/echo next`, syscall.SIGINT, "got-int\nnext\n", 0, false},
		// The item dies of INT: so does bash.
		{`sh -c '` + ready + `; exec sleep 20'; /bin/echo next`, syscall.SIGINT, "", 130, false},
		{`sh -c '` + ready + `; exec sleep 20' || /bin/echo next`, syscall.SIGINT, "", 130, false},
		// TERM: bash dies of it, though the item traps it.
		{`sh -c 'trap "echo got-term; exit 3" TERM; ` + ready + `; sleep 20 & wait'; /bin/echo next`, syscall.SIGTERM, "got-term\n", 143, true},
	} {
		do, dc := interrupt(tc.script, true, tc.sig)
		bo, bc := interrupt(tc.script, false, tc.sig)
		if do != tc.out || dc != tc.code {
			t.Errorf("%q after %v: direct %q exit %d; want bash's %q exit %d", tc.script, tc.sig, do, dc, tc.out, tc.code)
		}
		if (bo != tc.out && !(tc.raced && bo == "")) || bc != tc.code {
			t.Errorf("%q after %v: bash -c %q exit %d; want %q exit %d", tc.script, tc.sig, bo, bc, tc.out, tc.code)
		}
	}
	// A killed harness shell: the running item dies, the next never runs.
	ticks := filepath.Join(f.proj, "ticks")
	after := filepath.Join(f.proj, "after")
	script := "sh -c 'while :; do echo x >> " + ticks + "; sleep 0.05; done'; sh -c 'echo x > " + after + "'"
	loop := exec.Command("/bin/bash", "-c", prep(script, true))
	loop.Dir = f.proj
	loop.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := loop.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return fileSize(ticks) > 4 })
	_ = syscall.Kill(-loop.Process.Pid, syscall.SIGKILL)
	_ = loop.Wait()
	time.Sleep(300 * time.Millisecond)
	if stillGrows(ticks) {
		t.Error("the list's item outlived its killed shell")
	}
	time.Sleep(300 * time.Millisecond)
	if _, err := os.Stat(after); err == nil {
		t.Error("the list's next item ran after its shell was killed")
	}
}
