// Command sandboxbench measures what the OS sandbox adds to one shell
// command, as a harness runs it: the command a hook rewrote (the harness's
// `bash -c`, the launcher, bubblewrap, the inner bash) against a plain
// `bash -c` of the same command, in the same run.
//
//	go run ./bench/sandboxbench -n 300 > bench/sandbox.txt
//
// It builds statewright and statewright-sandbox (go build, in a temporary
// directory), derives the profile of the bundled bugfix workflow's
// implementing phase for a temporary project (project writable, protected
// trees read-only, secrets and the store hidden, a per-session /tmp, no
// network), prepares the call directories as a hook does, then alternates
// the commands n times each:
//
//	plain          bash -c 'true'
//	client-exec    statewright-sandbox --version: the launcher's own exec
//	bwrap          bwrap <the call's arguments> -- bash -c 'true'
//	launcher       bash -c "<the rewritten command>"  (what Claude Code runs)
//	               with one bubblewrap per command: statewright-sandbox,
//	               which becomes bubblewrap (the fallback path; the call's
//	               server.json removed)
//	server-launcher the same rewritten command with the fast path skipped
//	               (no $EPOCHREALTIME): the launcher sends it to the phase's
//	               sandbox server (started by the warm-up runs), which forks
//	               bash -c inside (the path before the fast path)
//	server-full    the same through `statewright sandbox exec` (no slim launcher)
//	fast           the rewritten command as it runs now: bash builtins hand
//	               it to the server's keeper (no launcher), the server forks
//	               bash -c inside
//	fast+net       the same with the phase granting Network
//	plain-exec     bash -c '/bin/true': an external program, the reference
//	               for fast-direct
//	fast-direct    the rewritten command for '/bin/true': one program with
//	               literal words, which the server executes itself, without
//	               the inner bash (docs/sandbox.md, "Direct exec"; checked
//	               before the run: the program's parent is the server)
//	plain-pipe     bash -c '/bin/true | /bin/true': a command that needs the
//	               shell (a pipeline), the reference for fast-pipe
//	fast-pipe      the rewritten command for it, through the fast path: a
//	               pipeline of literal simple commands, whose programs the
//	               server runs itself behind the exec gate, without the
//	               inner bash (docs/sandbox.md, "Direct exec of literal
//	               pipelines"; checked before the run like fast-direct)
//	fast-pipe-bash the same pipeline with no elements recorded: the server
//	               forks the inner bash -c for it (the path before direct
//	               pipelines), alternated with fast-pipe in the same run
//	plain-and, plain-cd, plain-redir
//	               bash -c of a list ('/bin/true && /bin/true'), a cd
//	               ('cd /tmp && /bin/true') and redirections ('/bin/true >
//	               /dev/null 2>&1'): the references for the rows below
//	fast-and, fast-cd, fast-redir
//	               the rewritten command for each, through the fast path:
//	               a list the server runs itself, without the inner bash
//	               (docs/sandbox.md, "Direct exec of literal lists";
//	               checked before the run like fast-direct)
//	fast-and-bash, fast-cd-bash, fast-redir-bash
//	               the same commands with no items recorded: the server
//	               forks the inner bash -c (the path before direct lists),
//	               alternated with them in the same run
//	observed       a test command's path: `statewright sandbox exec` running
//	               bubblewrap as its child, its stdout through the observer
//	               (the command is `true`, so the observer only counts bytes)
//
// (-rows plain,fast picks rows) and prints p50/p99 of wall time and of CPU time. CPU is read from a
// cpuacct cgroup the benchmark moves itself into when it may (root, cgroup
// v1 cpuacct: every process of the command, its kernel time included, in
// nanoseconds; the benchmark's own fork and wait are in every row alike),
// else from the process tree's rusage (tick-based: coarse, and blind to
// work the kernel does for a process in other contexts). Budget
// (DESIGN.md): the sandbox adds at most 5 ms at p50 over plain.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	stdruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/statewright-go/statewright/harness"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/sandbox"
	"github.com/statewright-go/statewright/shell"
	"github.com/statewright-go/statewright/testreport/testrun"
	"github.com/statewright-go/statewright/workflow"
)

func main() {
	n := flag.Int("n", 300, "runs per command")
	rows := flag.String("rows", "", "comma-separated rows to run (default: all)")
	flag.Parse()
	if err := run(*n, *rows); err != nil {
		fmt.Fprintln(os.Stderr, "sandboxbench:", err)
		os.Exit(1)
	}
}

type sample struct{ wall, cpu time.Duration }

func run(n int, only string) error {
	a := sandbox.Detect()
	if !a.OK() {
		return fmt.Errorf("no sandbox here: %s", a.Why)
	}
	dir, err := os.MkdirTemp("", "sandboxbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// full/statewright alone; slim/ also has statewright-sandbox, which
	// the rewritten command then runs (sandbox.LauncherFor).
	full, slim := filepath.Join(dir, "full", "statewright"), filepath.Join(dir, "slim", "statewright")
	for _, b := range []struct{ out, pkg string }{
		{full, "./cmd/statewright"}, {slim, "./cmd/statewright"}, {filepath.Join(dir, "slim", "statewright-sandbox"), "./cmd/statewright-sandbox"},
	} {
		if out, err := exec.Command("go", "build", "-o", b.out, "github.com/statewright-go/statewright/"+b.pkg[2:]).CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v\n%s", b.pkg, err, out)
		}
	}
	proj := filepath.Join(dir, "proj")
	home := filepath.Join(dir, "home")
	for _, d := range []string{proj + "/.claude", proj + "/.git/hooks", home + "/.ssh", home + "/.config/statewright"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	store := filepath.Join(proj, ".statewright", "state.db")
	os.MkdirAll(filepath.Dir(store), 0o755)
	os.WriteFile(store, []byte("x"), 0o600)

	def, err := workflow.LoadTemplate("bugfix")
	if err != nil {
		return err
	}
	law, err := policy.Compile(def, policy.Options{})
	if err != nil {
		return err
	}
	root := filepath.Join(dir, "sandboxes")
	// A fake go for the observed row: one JSON event, as go test -json.
	fakeBin := filepath.Join(proj, ".bin")
	os.MkdirAll(fakeBin, 0o755)
	if err := os.WriteFile(filepath.Join(fakeBin, "go"), []byte("#!/bin/sh\necho '{\"Action\":\"pass\",\"Package\":\"x\",\"Test\":\"T\"}'\n"), 0o755); err != nil {
		return err
	}
	// One session per profile: a session has one server, for the profile
	// of its latest command (the rows alternate).
	prepareWords := func(network bool, id, command string, words bool) (sandbox.Call, error) {
		session := "bench"
		if network {
			session = "bench-net"
		}
		sess := sandbox.SessionDir(root, session)
		env := policy.SandboxEnv{ProjectDir: proj, Home: home, Store: store, SessionDir: sess, CacheDir: sandbox.SharedCache(root),
			CallDir: sandbox.CallDir(sess, id).RW}
		p, err := law.SandboxProfile("implementing", env)
		if err != nil {
			return sandbox.Call{}, err
		}
		p.Network = network
		// The words the hook records for a literal command or pipeline
		// (harness.Shell).
		var elems [][]string
		var list []sandbox.ListItem
		if words {
			if elems, _ = shell.LiteralPipeline(command); elems == nil {
				list = harness.SandboxList(command)
			}
		}
		return sandbox.PrepareCallList(sess, env.CacheDir, id, a, &p, command, elems, list)
	}
	prepare := func(network bool, id, command string) (sandbox.Call, error) {
		return prepareWords(network, id, command, true)
	}
	c, err := prepare(false, "call-1", "true")
	if err != nil {
		return err
	}
	cNet, err := prepare(true, "call-2", "true")
	if err != nil {
		return err
	}
	cPer, err := prepare(false, "call-4", "true")
	if err != nil {
		return err
	}
	// Without its server.json the call runs with its own bubblewrap.
	if err := os.Remove(filepath.Join(cPer.Dir, "server.json")); err != nil {
		return err
	}
	defer sandbox.StopServer(root, "bench")
	defer sandbox.StopServer(root, "bench-net")
	cDirect, err := prepare(false, "call-5", "/bin/true")
	if err != nil {
		return err
	}
	// A command that needs the shell: a pipeline of two programs.
	const pipeCmd = "/bin/true | /bin/true"
	cPipe, err := prepare(false, "call-6", pipeCmd)
	if err != nil {
		return err
	}
	cPipeBash, err := prepareWords(false, "call-7", pipeCmd, false)
	if err != nil {
		return err
	}
	// Lists (docs/sandbox.md, "Direct exec of literal lists"): each with
	// its items recorded and without.
	lists := []struct{ name, cmd string }{
		{"and", "/bin/true && /bin/true"},
		{"cd", "cd /tmp && /bin/true"},
		{"redir", "/bin/true > /dev/null 2>&1"},
	}
	var listRows []cmdRow
	for i, l := range lists {
		cl, err := prepare(false, "call-list-"+strconv.Itoa(i), l.cmd)
		if err != nil {
			return err
		}
		cb, err := prepareWords(false, "call-list-bash-"+strconv.Itoa(i), l.cmd, false)
		if err != nil {
			return err
		}
		listRows = append(listRows,
			cmdRow{"plain-" + l.name, []string{"/bin/bash", "-c", l.cmd}, nil},
			cmdRow{"fast-" + l.name, []string{"/bin/bash", "-c", sandbox.ShellCommand(sandbox.LauncherFor(slim), cl, l.cmd)}, nil},
			cmdRow{"fast-" + l.name + "-bash", []string{"/bin/bash", "-c", sandbox.ShellCommand(sandbox.LauncherFor(slim), cb, l.cmd)}, nil})
	}
	const testCmd = "go test ./..."
	cTest, err := prepare(false, "call-3", testCmd)
	if err != nil {
		return err
	}
	if err := testrun.Mark(cTest.Dir, proj, testCmd); err != nil {
		return err
	}
	raw, err := os.ReadFile(filepath.Join(c.Dir, "bwrap.args"))
	if err != nil {
		return err
	}
	bargs := strings.Split(strings.TrimSuffix(string(raw), "\x00"), "\x00")
	bargs = append(bargs, "--chdir", proj, "--", "/bin/bash", "-c", "true")
	testPath := "PATH=" + fakeBin + ":" + os.Getenv("PATH")
	// Without $EPOCHREALTIME the rewritten command skips the fast path and
	// runs the launcher, which sends the command to the server (the path
	// before the fast path, kept as the fallback).
	const noFast = "unset EPOCHREALTIME; "
	cmds := []cmdRow{
		{"plain", []string{"/bin/bash", "-c", "true"}, nil},
		{"client-exec", []string{sandbox.LauncherFor(slim), "--version"}, nil},
		{"bwrap", bargs, nil},
		{"launcher", []string{"/bin/bash", "-c", sandbox.ShellCommand(sandbox.LauncherFor(slim), cPer, "true")}, nil},
		{"server-launcher", []string{"/bin/bash", "-c", noFast + sandbox.ShellCommand(sandbox.LauncherFor(slim), c, "true")}, nil},
		{"server-full", []string{"/bin/bash", "-c", noFast + sandbox.ShellCommand(full, c, "true")}, nil},
		{"fast", []string{"/bin/bash", "-c", sandbox.ShellCommand(sandbox.LauncherFor(slim), c, "true")}, nil},
		{"fast+net", []string{"/bin/bash", "-c", sandbox.ShellCommand(sandbox.LauncherFor(slim), cNet, "true")}, nil},
		{"plain-exec", []string{"/bin/bash", "-c", "/bin/true"}, nil},
		{"plain-pipe", []string{"/bin/bash", "-c", pipeCmd}, nil},
		{"fast-pipe", []string{"/bin/bash", "-c", sandbox.ShellCommand(sandbox.LauncherFor(slim), cPipe, pipeCmd)}, nil},
		{"fast-pipe-bash", []string{"/bin/bash", "-c", sandbox.ShellCommand(sandbox.LauncherFor(slim), cPipeBash, pipeCmd)}, nil},
		{"fast-direct", []string{"/bin/bash", "-c", sandbox.ShellCommand(sandbox.LauncherFor(slim), cDirect, "/bin/true")}, nil},
		{"plain-test", []string{"/bin/bash", "-c", testCmd}, []string{testPath}},
		{"observed", []string{"/bin/bash", "-c", sandbox.ShellCommand(full, cTest, testCmd)}, []string{testPath}},
		// What the hooks run since the slim launcher links the observer.
		{"observed-slim", []string{"/bin/bash", "-c", sandbox.ShellCommand(sandbox.LauncherFor(slim), cTest, testCmd)}, []string{testPath}},
	}
	cmds = append(cmds, listRows...)
	if only != "" {
		want := strings.Split(only, ",")
		cmds = slices.DeleteFunc(cmds, func(c cmdRow) bool { return !slices.Contains(want, c.name) })
		if len(cmds) == 0 {
			return fmt.Errorf("-rows %q: no such row", only)
		}
	}
	cpu := newCPUMeter()
	defer cpu.close()
	// After the move into the cgroup: the servers it starts (the keeper,
	// the server, what they run) are counted there too.
	if err := checkDirect(prepare, slim, proj, c); err != nil {
		return err
	}
	res := make([][]sample, len(cmds))
	for i := 0; i < n+5; i++ {
		for j, c := range cmds {
			cmd := exec.Command(c.argv[0], c.argv[1:]...)
			cmd.Dir = proj
			cmd.Env = append(os.Environ(), c.env...)
			before := cpu.read()
			start := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("%s: %v\n%s", c.name, err, out)
			}
			wall := time.Since(start)
			used := cpu.since(before, cmd.ProcessState)
			if i >= 5 { // warm-up
				res[j] = append(res[j], sample{wall, used})
			}
		}
	}
	// The servers leave the cgroup before it is removed.
	sandbox.StopServer(root, "bench")
	sandbox.StopServer(root, "bench-net")
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("# go run ./bench/sandboxbench -n %d   (%s, %d CPUs, bubblewrap %s, load %s)\n", n, time.Now().UTC().Format("2006-01-02 15:04 UTC"),
		stdruntime.NumCPU(), a.Bwrap, string(load[:min(len(load), 14)]))
	fmt.Printf("# each command alternated n times in the same run; CPU from %s\n", cpu.source())
	fmt.Printf("%-16s %10s %10s %10s %10s\n", "command", "wall p50", "wall p99", "cpu p50", "cpu p99")
	p50 := make([]sample, len(cmds))
	for j, c := range cmds {
		w := pct(res[j], func(s sample) time.Duration { return s.wall })
		u := pct(res[j], func(s sample) time.Duration { return s.cpu })
		fmt.Printf("%-16s %10s %10s %10s %10s\n", c.name, ms(w[0]), ms(w[1]), ms(u[0]), ms(u[1]))
		p50[j] = sample{w[0], u[0]}
	}
	fmt.Printf("# added at p50 (budget 5 ms over the row's plain reference):\n")
	row := func(name string) (sample, bool) {
		i := slices.IndexFunc(cmds, func(c cmdRow) bool { return c.name == name })
		if i < 0 {
			return sample{}, false
		}
		return p50[i], true
	}
	// Each row's reference: the same command run by a plain bash -c.
	refOf := func(name string) string {
		switch name {
		case "plain", "plain-test", "plain-exec", "plain-pipe":
			return ""
		case "observed", "observed-slim":
			return "plain-test"
		case "fast-direct":
			return "plain-exec"
		case "fast-pipe", "fast-pipe-bash":
			return "plain-pipe"
		case "plain-and", "plain-cd", "plain-redir":
			return ""
		}
		for _, l := range []string{"and", "cd", "redir"} {
			if name == "fast-"+l || name == "fast-"+l+"-bash" {
				return "plain-" + l
			}
		}
		return "plain"
	}
	for j, c := range cmds {
		refName := refOf(c.name)
		ref, ok := row(refName)
		if refName == "" || !ok {
			continue
		}
		fmt.Printf("%-16s wall %+.2fms  cpu %+.2fms  (over %s)\n", c.name, msf(p50[j].wall-ref.wall), msf(p50[j].cpu-ref.cpu), refName)
	}
	fmt.Printf("# CPU at p50 as a ratio of its reference:")
	for _, r := range [][3]string{{"fast", "plain", "bash -c true"}, {"fast-direct", "plain-exec", "bash -c /bin/true"}, {"fast-pipe", "plain-pipe", "bash -c '/bin/true | /bin/true'"}, {"fast-pipe-bash", "plain-pipe", "bash -c '/bin/true | /bin/true'"},
		{"fast-and", "plain-and", "bash -c '/bin/true && /bin/true'"}, {"fast-and-bash", "plain-and", "the same"},
		{"fast-cd", "plain-cd", "bash -c 'cd /tmp && /bin/true'"}, {"fast-cd-bash", "plain-cd", "the same"},
		{"fast-redir", "plain-redir", "bash -c '/bin/true > /dev/null 2>&1'"}, {"fast-redir-bash", "plain-redir", "the same"}} {
		a, okA := row(r[0])
		b, okB := row(r[1])
		if okA && okB {
			fmt.Printf(" %s %.2fx (%s)", r[0], float64(a.cpu)/float64(b.cpu), r[2])
		}
	}
	fmt.Println()
	return nil
}

// cmdRow is one command the benchmark alternates.
type cmdRow struct {
	name string
	argv []string
	env  []string
}

// checkDirect makes sure the fast-direct row measures what it says: a
// literal command's program runs as the server's child (its parent is PID
// 1 of the sandbox), not under an inner bash (an environment variable
// bash acts on would send it there).
func checkDirect(prepare func(bool, string, string) (sandbox.Call, error), slim, proj string, warm sandbox.Call) error {
	for _, cmd := range []struct {
		c   sandbox.Call
		src string
	}{{warm, "true"}} {
		warm := exec.Command("/bin/bash", "-c", sandbox.ShellCommand(sandbox.LauncherFor(slim), cmd.c, cmd.src))
		warm.Dir = proj
		if out, err := warm.CombinedOutput(); err != nil {
			return fmt.Errorf("starting the server: %v: %s", err, out)
		}
	}
	for i, probe := range []string{"grep PPid /proc/self/status", "/bin/true | grep PPid /proc/self/status",
		"cd / && grep PPid /proc/self/status 2>/dev/null", "/bin/true && grep PPid /proc/self/status"} {
		c, err := prepare(false, "call-probe-"+strconv.Itoa(i), probe)
		if err != nil {
			return err
		}
		cmd := exec.Command("/bin/bash", "-c", sandbox.ShellCommand(sandbox.LauncherFor(slim), c, probe))
		cmd.Dir = proj
		out, err := cmd.CombinedOutput()
		if err != nil || string(out) != "PPid:\t1\n" {
			return fmt.Errorf("%q did not run directly (%v: %q): fast-direct, fast-pipe or the list rows would measure the inner bash", probe, err, out)
		}
	}
	return nil
}

// cpuMeter reads the CPU time the benchmark's children use: from a
// cpuacct cgroup the benchmark moved itself into, else from rusage.
type cpuMeter struct{ usage string }

func newCPUMeter() *cpuMeter {
	cg := filepath.Join("/sys/fs/cgroup/cpuacct", fmt.Sprintf("sandboxbench-%d", os.Getpid()))
	if err := os.Mkdir(cg, 0o755); err != nil {
		return &cpuMeter{}
	}
	if err := os.WriteFile(filepath.Join(cg, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		os.Remove(cg)
		return &cpuMeter{}
	}
	return &cpuMeter{usage: filepath.Join(cg, "cpuacct.usage")}
}

// close moves the benchmark back to the root cgroup and removes its own.
func (m *cpuMeter) close() {
	if m.usage == "" {
		return
	}
	_ = os.WriteFile("/sys/fs/cgroup/cpuacct/cgroup.procs", []byte(strconv.Itoa(os.Getpid())), 0o644)
	_ = os.Remove(filepath.Dir(m.usage))
}

func (m *cpuMeter) source() string {
	if m.usage != "" {
		return "a cpuacct cgroup (ns; every process of the command, kernel time included)"
	}
	return "rusage of the process tree (user+sys, tick-based)"
}

func (m *cpuMeter) read() int64 {
	if m.usage == "" {
		return 0
	}
	b, _ := os.ReadFile(m.usage)
	v, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return v
}

func (m *cpuMeter) since(before int64, ps *os.ProcessState) time.Duration {
	if m.usage == "" {
		return ps.UserTime() + ps.SystemTime()
	}
	return time.Duration(m.read() - before)
}

func pct(s []sample, f func(sample) time.Duration) [2]time.Duration {
	v := make([]time.Duration, len(s))
	for i := range s {
		v[i] = f(s[i])
	}
	slices.Sort(v)
	return [2]time.Duration{v[len(v)*50/100], v[min(len(v)-1, len(v)*99/100)]}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", msf(d)) }

func msf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
