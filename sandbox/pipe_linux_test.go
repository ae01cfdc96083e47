package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/statewright-go/statewright/shell"
)

// TestPipelineLikeBash is the differential test of direct exec of literal
// pipelines: each pipeline runs through the phase's real sandbox twice,
// once as the hook prepares it (its elements recorded: the server runs
// the programs itself) and once as `bash -c`, from the same harness
// shell; stdout, stderr, the exit status, the directory the harness's
// shell ends in and each element's environment are the same. A pipeline
// one of whose programs cannot be executed runs with bash (the exec
// gate): its other elements run once, as bash runs them, and bash prints
// its own error.
func TestPipelineLikeBash(t *testing.T) {
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
	log := filepath.Join(f.proj, "ran.log")
	for _, tc := range []struct {
		cmd    string
		pre    string // more of the harness's shell before it
		direct bool   // the server runs the programs itself
		env    bool   // stdout is environments: compared sorted
		signal bool   // a signal kills the last element
		ran    int    // the lines `sh -c 'echo ran >> ran.log'` elements wrote
	}{
		{cmd: "ls -a sub | cat", direct: true},
		{cmd: "cat | wc -c", direct: true},                   // stdin to the first
		{cmd: "cat | tr a-z A-Z | cat -n", direct: true},     // three elements
		{cmd: "yes | head -1", direct: true},                 // SIGPIPE
		{cmd: "yes | sh -c 'head -1; exit 3'", direct: true}, // the last one's status
		{cmd: "/bin/false | cat", direct: true},
		{cmd: "cat | /bin/false", direct: true},
		{cmd: "seq 1 200000 | cat", direct: true}, // more than a pipe holds
		{cmd: "head -c 3000000 /dev/zero | wc -c", direct: true},
		{cmd: "sh -c 'echo a; echo b >&2; exit 7' | sh -c 'cat; echo c >&2'", direct: true},
		{cmd: "env | cat", direct: true, env: true},
		{cmd: "cat /dev/null | env", direct: true, env: true},
		{cmd: "env | sort | env", direct: true, env: true},
		{cmd: "cat /dev/null | env", pre: "cd sub\n", direct: true, env: true},
		{cmd: "cat /dev/null | env", pre: "unset OLDPWD; export PWD=/nonexistent\n", direct: true, env: true},
		{cmd: "grep -E '^(Sig(Blk|Ign)|Cap|NoNewPrivs)' /proc/self/status | cat", direct: true},
		{cmd: "cat /dev/null | grep -E '^(Sig(Blk|Ign)|Cap|NoNewPrivs)' /proc/self/status", direct: true},
		{cmd: "sh -c 'umask; ulimit -n' | cat", direct: true},
		{cmd: "./shebang a 'b c' | cat", direct: true},
		{cmd: "cat | touch ../.claude/settings.json", direct: true},
		{cmd: "cat /dev/null | sh -c 'kill -KILL $$'", direct: true, signal: true},
		{cmd: "sh -c 'echo ran >> ran.log' | cat", direct: true, ran: 1},
		// An execve that fails, in any position: bash's own.
		{cmd: "./missing | sh -c 'echo ran >> ran.log'", ran: 1},
		{cmd: "sh -c 'echo ran >> ran.log' | ./missing", ran: 1},
		{cmd: "sh -c 'echo ran >> ran.log' | ./missing | sh -c 'echo ran >> ran.log'", ran: 2},
		{cmd: "sh -c 'echo ran >> ran.log' | ./noexec", ran: 1},
		{cmd: "sh -c 'echo ran >> ran.log' | ./sub", ran: 1},
		{cmd: "cat | ./noshebang x"},
		{cmd: "nonexistent-program-x | cat"},
		{cmd: "cat | nonexistent-program-x arg"},
		// Variables bash acts on.
		{cmd: "env | cat", pre: "export IFS\n", env: true},
		{cmd: "env | cat", pre: "export SHLVL=x\n", env: true},
	} {
		elems, literal := shell.LiteralPipeline(tc.cmd)
		if !literal || len(elems) < 2 {
			t.Fatalf("%q is not a literal pipeline", tc.cmd)
		}
		ranLines := func() int {
			b, _ := os.ReadFile(log)
			_ = os.Remove(log)
			return strings.Count(string(b), "ran\n")
		}
		ranLines()
		do, de, dc, dp := run(tc.cmd, elems, tc.pre)
		dran := ranLines()
		bo, be, bc, bp := run(tc.cmd, nil, tc.pre)
		bran := ranLines()
		// A signal: bash reports the pipeline's last element it killed
		// ("… Done … Killed …").
		sameAsBash(t, tc.cmd, tc.pre, tc.env, tc.signal, ran{do, de, dc, dp}, ran{bo, be, bc, bp})
		if dran != tc.ran || bran != tc.ran {
			t.Errorf("%q: the elements that log ran %d times (direct) and %d (bash); want %d", tc.cmd, dran, bran, tc.ran)
		}
		// Which way it ran under the harness shell's changes: an
		// element's parent is the server (PID 1) only when direct.
		if tc.pre != "" {
			probe := "cat /dev/null | grep PPid /proc/self/status"
			pelems, _ := shell.LiteralPipeline(probe)
			if po, _, _, _ := run(probe, pelems, tc.pre); tc.direct != (po == "PPid:\t1\n") {
				t.Errorf("%q (%s): parent %q, want direct=%v", probe, tc.pre, po, tc.direct)
			}
		}
	}
	// The pipeline runs directly at all (else the comparisons above
	// compared bash with bash).
	probe := "cat /dev/null | grep PPid /proc/self/status"
	pelems, _ := shell.LiteralPipeline(probe)
	if po, pe, _, _ := run(probe, pelems, ""); po != "PPid:\t1\n" {
		t.Errorf("%q: %q %q; want the server as its parent (direct)", probe, po, pe)
	}
	if po, _, _, _ := run(probe, nil, ""); po == "PPid:\t1\n" {
		t.Errorf("%q through bash: %q; want bash as its parent", probe, po)
	}
}

// TestExecGate: no element of a pipeline runs before every element's
// execve has succeeded. When startPipeline's hook runs (every element
// forked, none detached) each element is stopped at its exec (state t)
// and has done nothing (its marker file is absent); after, they run. An
// element whose execve fails leaves the others killed before they ran.
func TestExecGate(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "mark")
	sh := []string{"/bin/sh", "-c", "echo ran >> " + Quote(mark)}
	stdio := []uintptr{0, 1, 2}
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	for i := range stdio {
		stdio[i] = devnull.Fd()
	}
	elem := func(argv ...string) directElem {
		return directElem{path: argv[0], argv: argv, env: []string{"PATH=/usr/bin:/bin"}}
	}
	var seen [][]string // each element's state at the hook, and whether the marker existed
	gateHook = func(pids []int) {
		stateOf := func() []string {
			var states []string
			for _, pid := range pids {
				f := procStat(pid)
				if len(f) == 0 {
					states = append(states, "gone")
					continue
				}
				states = append(states, f[0])
			}
			return states
		}
		// A loaded machine may not have run an element to the end of
		// its execve yet: wait until every one is in its stop (or 5 s),
		// then give them time to run, were they not stopped.
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if strings.Join(stateOf(), " ") == strings.TrimSpace(strings.Repeat("t ", len(pids))) {
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
		states := stateOf()
		if _, err := os.Stat(mark); err == nil {
			states = append(states, "marked")
		}
		seen = append(seen, states)
	}
	defer func() { gateHook = nil }()
	s := &server{}
	wait := func(pids []int) {
		for _, pid := range pids {
			var ws syscall.WaitStatus
			if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil {
				t.Fatal(err)
			}
		}
	}

	pids, ok := s.startPipeline([]directElem{elem(sh...), elem("/bin/cat"), elem(sh...)}, dir, stdio)
	if !ok || len(pids) != 3 {
		t.Fatalf("startPipeline: %v %v", pids, ok)
	}
	wait(pids)
	if len(seen) != 1 || strings.Join(seen[0], " ") != "t t t" {
		t.Errorf("at the gate: %q; want every element stopped at its exec (t) and no marker", seen)
	}
	if b, _ := os.ReadFile(mark); string(b) != "ran\nran\n" {
		t.Errorf("after the gate: marker %q; want both sh elements to have run", b)
	}

	write(t, filepath.Join(dir, "noexec"), "#!/bin/sh\n")
	for _, bad := range []string{"/nonexistent", dir, filepath.Join(dir, "noexec")} { // missing, a directory, not executable
		_ = os.Remove(mark)
		seen = nil
		pids, ok := s.startPipeline([]directElem{elem(sh...), elem(sh...), elem(bad), elem(sh...)}, dir, stdio)
		if ok {
			wait(pids)
			t.Fatalf("%q: started %v", bad, pids)
		}
		time.Sleep(50 * time.Millisecond)
		if _, err := os.Stat(mark); err == nil || len(seen) != 0 {
			t.Errorf("%q: the elements before it ran (hook %q)", bad, seen)
		}
		// The killed elements (no test of this package runs in
		// parallel: every child now exited is theirs).
		for {
			var ws syscall.WaitStatus
			if pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); pid <= 0 || err != nil {
				break
			}
		}
	}
}
