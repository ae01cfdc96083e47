// Command hookbench measures the PreToolUse hook exactly as a fresh
// `statewright init claude-code` writes it (docs/hooks.md): the command
// line from the settings file, run through `sh -c` as Claude Code runs it,
// one process per call, spawn to exit, deciding an allowed Read against an
// active run in a SQLite store. In the same run it measures a trivial Go
// binary (the floor any Go hook pays) the same way, and the growth from a
// 10-state to a 1,000-state workflow.
//
//	go run ./bench/hookbench -n 300 > bench/hook.txt
//	go run ./bench/hookbench -n 400 -states 10 -base /tmp/base   (before/after)
//
// It builds statewright, statewright-hook (beside it, as `go install
// ./cmd/...` puts them) and the trivial binary into a temporary directory,
// points HOME and the XDG directories there (its own store, key and
// decider), runs init, starts a run per workflow size, and alternates the
// commands. The first hook call finds no decider: the client decides with
// the full binary and starts one, as it would for a user; that call is
// reported on its own. Every answer must be an allow, and every call must
// be recorded in the store, or the run fails.
//
// With -base DIR it also builds both binaries from the checkout at DIR into
// a directory of their own (their decider has its own socket and shares
// the store and key), and alternates that hook with this one, call by
// call: before and after in one run, at one load.
//
// Figures: wall time p50/p90/p99 per command, the child's CPU time, the
// decider's CPU time per hook (its threads' run time, from /proc), and the ratios the budget
// names (docs/architecture.md: p50 <= 2x a trivial Go binary's spawn, p99 < 10 ms,
// flat within 1.2x from 10 to 1,000 states), with the load average.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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

	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
	_ "github.com/statewright-go/statewright/store/backends"
)

func main() {
	n := flag.Int("n", 300, "calls per command and workflow size")
	sizes := flag.String("states", "10,1000", "workflow sizes (states) to measure the hook at")
	keep := flag.String("keep", "", "set up in DIR and keep it (env.sh, hook.sh, input.json) for profiling, e.g. under valgrind")
	base := flag.String("base", "", "also build the hook from the checkout at DIR (e.g. a worktree of main) and alternate it with this one: before/after in one run")
	flag.Parse()
	var states []int
	for _, s := range strings.Split(*sizes, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || v < 2 {
			fmt.Fprintln(os.Stderr, "hookbench: -states: want sizes of 2 or more")
			os.Exit(2)
		}
		states = append(states, v)
	}
	if err := run(*n, states, *keep, *base); err != nil {
		fmt.Fprintln(os.Stderr, "hookbench:", err)
		os.Exit(1)
	}
}

type bench struct {
	dir, bin, client, trivial, project, storePath string
	env                                           []string
	hookCmd                                       string // the PreToolUse command init wrote
	seq                                           int
	// base, when set, is the checkout the before side is built from;
	// baseBin and baseClient its binaries, baseHookCmd init's command
	// with its client.
	base, baseBin, baseClient, baseHookCmd string
}

func run(n int, states []int, keep, base string) error {
	dir := keep
	if dir == "" {
		d, err := os.MkdirTemp("", "hookbench")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b := &bench{dir: dir, project: filepath.Join(dir, "project"), base: base}
	if err := b.build(); err != nil {
		return err
	}
	home := filepath.Join(dir, "home")
	for _, d := range []string{home, b.project} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	b.env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_STATE_HOME="+filepath.Join(home, ".local", "state"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"STATEWRIGHT_STORE=")
	b.storePath = filepath.Join(home, ".local", "state", "statewright", "state.db")
	defer b.stopDecider()

	// A fresh init, as a user runs it.
	initCmd := exec.Command(b.bin, "init", "claude-code", "--project", b.project, "--store", b.storePath)
	initCmd.Env = b.env
	if out, err := initCmd.CombinedOutput(); err != nil {
		return fmt.Errorf("init: %v\n%s", err, out)
	}
	if err := b.readHookCommand(); err != nil {
		return err
	}
	if !strings.HasPrefix(b.hookCmd, "'"+b.client+"' ") {
		return fmt.Errorf("init did not write the thin client's command: %s", b.hookCmd)
	}
	if b.base != "" {
		b.baseHookCmd = "'" + b.baseClient + "'" + strings.TrimPrefix(b.hookCmd, "'"+b.client+"'")
	}

	// A run per workflow size, each for its own session.
	ctx := context.Background()
	st, err := store.Open(ctx, b.storePath, store.Options{MustExist: true})
	if err != nil {
		return err
	}
	svc := runtime.New(st, runtime.Options{ProjectDir: b.project})
	runs := map[int]string{}
	for _, k := range states {
		wf := filepath.Join(dir, fmt.Sprintf("bench-%d.json", k))
		if err := os.WriteFile(wf, benchWorkflow(k), 0o644); err != nil {
			return err
		}
		v, err := svc.Start(ctx, "claude-code:"+session(k), wf, runtime.Actor{Kind: runtime.ActorHuman, Channel: "cli"})
		if err != nil {
			return fmt.Errorf("start run (%d states): %w", k, err)
		}
		runs[k] = v.Run.ID
	}
	st.Close()

	if keep != "" {
		return b.writeKeep(states[0])
	}

	loadStart := loadavg()
	// The first hook after init: no decider runs yet.
	first, err := b.hook(states[0])
	if err != nil {
		return fmt.Errorf("first hook: %w", err)
	}
	if err := b.waitDecider(b.bin); err != nil {
		return err
	}
	pid := b.deciderPid(b.bin)
	basePid := 0
	if b.base != "" {
		if _, err := b.hookWith(b.baseHookCmd, states[0]); err != nil {
			return fmt.Errorf("first hook (base): %w", err)
		}
		if err := b.waitDecider(b.baseBin); err != nil {
			return err
		}
		basePid = b.deciderPid(b.baseBin)
	}

	// Warm up: page cache, the decider's first compile of each workflow.
	for range 10 {
		for _, k := range states {
			if _, err := b.hook(k); err != nil {
				return fmt.Errorf("warm-up hook: %w", err)
			}
		}
		b.spawn(shellArgs(b.trivial), nil)
		if b.base != "" {
			if _, err := b.hookWith(b.baseHookCmd, states[0]); err != nil {
				return fmt.Errorf("warm-up hook (base): %w", err)
			}
		}
	}

	hookS := map[int]*series{}
	for _, k := range states {
		hookS[k] = &series{}
	}
	var trivSh, trivDirect, clientDirect, full, baseSh, baseDirect series
	var deciderCPU, baseDeciderCPU time.Duration
	_, requests0, err := b.deciderRequests(b.bin)
	if err != nil {
		return err
	}
	clientArgs := b.directArgs(states[0])
	fullArgs := append([]string{b.bin}, clientArgs[1:]...)
	baseArgs := append([]string{b.baseClient}, clientArgs[1:]...)
	// Each decider's whole CPU over the loop, per call it answered (work
	// it does after an answer falls outside the per-hook windows).
	runCPU0, baseRunCPU0 := procCPU(pid), procCPU(basePid)
	for i := range n {
		for j, k := range states {
			// The base and this build alternate which goes first.
			if j == 0 && b.base != "" && i%2 == 1 {
				if err := b.baseHook(&baseSh, &baseDeciderCPU, basePid, k); err != nil {
					return err
				}
			}
			before := procCPU(pid)
			r, err := b.hook(k)
			if err != nil {
				return err
			}
			deciderCPU += procCPU(pid) - before
			hookS[k].wall, hookS[k].cpu = append(hookS[k].wall, r.wall), append(hookS[k].cpu, r.cpu)
			if j == 0 && b.base != "" && i%2 == 0 {
				if err := b.baseHook(&baseSh, &baseDeciderCPU, basePid, k); err != nil {
					return err
				}
			}
		}
		r, err := b.spawn(shellArgs(b.trivial), nil)
		if err != nil {
			return err
		}
		trivSh.wall, trivSh.cpu = append(trivSh.wall, r.wall), append(trivSh.cpu, r.cpu)
		if r, err = b.spawn([]string{b.trivial}, nil); err != nil {
			return err
		}
		trivDirect.wall, trivDirect.cpu = append(trivDirect.wall, r.wall), append(trivDirect.cpu, r.cpu)
		if r, err = b.spawn(clientArgs, b.input(states[0])); err != nil || r.code != 0 {
			return fmt.Errorf("thin client: exit %d, %v: %s", r.code, err, r.stderr)
		}
		clientDirect.wall, clientDirect.cpu = append(clientDirect.wall, r.wall), append(clientDirect.cpu, r.cpu)
		if b.base != "" {
			if r, err = b.spawn(baseArgs, b.input(states[0])); err != nil || r.code != 0 || bytes.Contains(r.stdout, []byte(`"deny"`)) {
				return fmt.Errorf("base thin client: exit %d, %v: %s", r.code, err, r.stderr)
			}
			baseDirect.wall, baseDirect.cpu = append(baseDirect.wall, r.wall), append(baseDirect.cpu, r.cpu)
		}
		if r, err = b.spawn(fullArgs, b.input(states[0])); err != nil || r.code != 0 {
			return fmt.Errorf("full binary: exit %d, %v: %s", r.code, err, r.stderr)
		}
		full.wall, full.cpu = append(full.wall, r.wall), append(full.cpu, r.cpu)
	}
	runCPU, baseRunCPU := procCPU(pid)-runCPU0, procCPU(basePid)-baseRunCPU0
	loadEnd := loadavg()
	pid2, requests1, err := b.deciderRequests(b.bin)
	if err != nil {
		return err
	}
	if pid2 != pid {
		return fmt.Errorf("the decider changed during the run (pid %d, then %d)", pid, pid2)
	}
	if b.base != "" {
		if p, _, err := b.deciderRequests(b.baseBin); err != nil || p != basePid {
			return fmt.Errorf("the base decider changed during the run (pid %d, then %d: %v)", basePid, p, err)
		}
	}
	// Hooks the decider did not answer: the client decided with the full
	// binary (a tail the decider would cause: busy, too slow, refused).
	fellBack := int64(n*(len(states)+1)) - (requests1 - requests0)

	// Every hook was decided and recorded: one call record each.
	st, err = store.Open(ctx, b.storePath, store.Options{MustExist: true})
	if err != nil {
		return err
	}
	defer st.Close()
	var recorded []string
	for _, k := range states {
		calls, err := st.Calls(ctx, runs[k])
		if err != nil {
			return err
		}
		recorded = append(recorded, fmt.Sprintf("%d states: %d", k, len(calls)))
	}

	k0 := states[0]
	fmt.Printf("# PreToolUse hook as `statewright init claude-code` writes it, spawn to exit (go run ./bench/hookbench -n %d -states %s)\n", n, joinInts(states))
	fmt.Printf("# %s, %s/%s, %d CPUs, %s\n", time.Now().UTC().Format(time.RFC3339), stdruntime.GOOS, stdruntime.GOARCH, stdruntime.NumCPU(), stdruntime.Version())
	fmt.Printf("# load average: start %s | end %s\n", loadStart, loadEnd)
	fmt.Printf("# input: an allowed Read in an active run's first phase; call records: %s\n", strings.Join(recorded, ", "))
	fmt.Printf("# hook command (init's): %s\n", redact(b.hookCmd, b.dir))
	fmt.Printf("# first hook after init (no decider yet: the full binary decides and starts one): %v\n", first.wall.Round(10*time.Microsecond))
	fmt.Println("# wall time, spawn to exit; commands alternate, same run:")
	for _, k := range states {
		report(fmt.Sprintf("hook sh -c (%d states)", k), hookS[k].wall)
	}
	report("trivial sh -c", trivSh.wall)
	report("statewright-hook direct", clientDirect.wall)
	report("trivial direct", trivDirect.wall)
	report("full binary direct (no decider)", full.wall)
	fmt.Println("# CPU time (user+sys) of the spawned process tree; the decider's own CPU per hook beside:")
	for _, k := range states {
		report(fmt.Sprintf("hook-cpu sh -c (%d states)", k), hookS[k].cpu)
	}
	report("trivial-cpu sh -c", trivSh.cpu)
	report("full-cpu direct", full.cpu)
	fmt.Printf("decider CPU per hook (mean): %v\n", (deciderCPU / time.Duration(n*len(states))).Round(time.Microsecond))
	fmt.Println("# ratios (p50 against the same run's reference):")
	hp := pct(hookS[k0].wall, 50)
	fmt.Printf("hook / trivial, both as sh -c:      wall %.2f  cpu %.2f   (budget <= 2)\n", ratio(hp, pct(trivSh.wall, 50)), ratio(pct(hookS[k0].cpu, 50), pct(trivSh.cpu, 50)))
	fmt.Printf("statewright-hook / trivial, direct: wall %.2f  cpu %.2f\n", ratio(pct(clientDirect.wall, 50), pct(trivDirect.wall, 50)), ratio(pct(clientDirect.cpu, 50), pct(trivDirect.cpu, 50)))
	fmt.Printf("full binary / trivial, direct:      wall %.2f  (the hook before the thin client)\n", ratio(pct(full.wall, 50), pct(trivDirect.wall, 50)))
	for _, k := range states[1:] {
		fmt.Printf("growth %d -> %d states: p50 %.2f  p90 %.2f   (budget <= 1.2)\n", k0, k, ratio(pct(hookS[k].wall, 50), hp), ratio(pct(hookS[k].wall, 90), pct(hookS[k0].wall, 90)))
	}
	fmt.Printf("hook p99 %v (idle-machine target < 10ms); trivial sh -c p99 %v\n", pct(hookS[k0].wall, 99).Round(10*time.Microsecond), pct(trivSh.wall, 99).Round(10*time.Microsecond))
	fmt.Println("# the tail (p99 against the same run's trivial p99), and where it comes from:")
	fmt.Printf("p99 ratio: hook / trivial, both as sh -c: %.2f   statewright-hook / trivial, direct: %.2f\n",
		ratio(pct(hookS[k0].wall, 99), pct(trivSh.wall, 99)), ratio(pct(clientDirect.wall, 99), pct(trivDirect.wall, 99)))
	fmt.Printf("hooks the decider did not answer (the client fell back to the full binary): %d of %d\n", fellBack, n*(len(states)+1))
	if b.base != "" {
		fmt.Printf("# before/after, alternating in this run: base = the checkout %s\n", b.base)
		report(fmt.Sprintf("base hook sh -c (%d states)", k0), baseSh.wall)
		report(fmt.Sprintf("hook sh -c (%d states)", k0), hookS[k0].wall)
		report("base statewright-hook direct", baseDirect.wall)
		report("statewright-hook direct", clientDirect.wall)
		report(fmt.Sprintf("base hook-cpu sh -c (%d states)", k0), baseSh.cpu)
		report(fmt.Sprintf("hook-cpu sh -c (%d states)", k0), hookS[k0].cpu)
		report("base statewright-hook-cpu direct", baseDirect.cpu)
		report("statewright-hook-cpu direct", clientDirect.cpu)
		fmt.Printf("decider CPU per hook (mean): base %v  this %v\n", (baseDeciderCPU / time.Duration(n)).Round(time.Microsecond),
			(deciderCPU / time.Duration(n*len(states))).Round(time.Microsecond))
		fmt.Printf("decider CPU per call over the whole loop (hooks and direct calls): base %v  this %v  (this / base %.2f)\n",
			(baseRunCPU / time.Duration(2*n)).Round(time.Microsecond), (runCPU / time.Duration(n*(len(states)+1))).Round(time.Microsecond),
			ratio(runCPU/time.Duration(n*(len(states)+1)), baseRunCPU/time.Duration(2*n)))
		for _, p := range []int{50, 90, 99} {
			fmt.Printf("this / base p%d: sh -c wall %.2f cpu %.2f   direct wall %.2f cpu %.2f\n", p,
				ratio(pct(hookS[k0].wall, p), pct(baseSh.wall, p)), ratio(pct(hookS[k0].cpu, p), pct(baseSh.cpu, p)),
				ratio(pct(clientDirect.wall, p), pct(baseDirect.wall, p)), ratio(pct(clientDirect.cpu, p), pct(baseDirect.cpu, p)))
		}
	}
	for _, k := range states {
		fmt.Printf("slowest 1%% of hook sh -c (%d states): %s\n", k, tail(hookS[k].wall, hookS[k].cpu))
	}
	fmt.Printf("slowest 1%% of trivial sh -c:          %s\n", tail(trivSh.wall, trivSh.cpu))
	return nil
}

// tail describes the slowest 1% of calls: their mean wall and CPU time
// beside the median call's. A tail with the median's CPU time waited (the
// scheduler, the decider); one with more CPU did more work.
func tail(wall, cpu []time.Duration) string {
	idx := make([]int, len(wall))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return int(wall[b] - wall[a]) })
	k := max(len(idx)/100, 1)
	var w, c time.Duration
	for _, i := range idx[:k] {
		w += wall[i]
		c += cpu[i]
	}
	r := func(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }
	return fmt.Sprintf("wall %v, cpu %v (n=%d); median call: wall %v, cpu %v",
		r(w/time.Duration(k)), r(c/time.Duration(k)), k, r(pct(wall, 50)), r(pct(cpu, 50)))
}

func (b *bench) build() error {
	b.bin = filepath.Join(b.dir, "bin", "statewright")
	b.client = filepath.Join(b.dir, "bin", "statewright-hook")
	for _, t := range [][2]string{{b.bin, "./cmd/statewright"}, {b.client, "./cmd/statewright-hook"}} {
		if out, err := exec.Command("go", "build", "-o", t[0], "github.com/statewright-go/statewright/"+strings.TrimPrefix(t[1], "./")).CombinedOutput(); err != nil {
			return fmt.Errorf("build %s: %v\n%s", t[1], err, out)
		}
	}
	if b.base != "" {
		// Beside each other in a directory of their own, as installed: its
		// decider has its own socket (hookwire.PathsFor) and shares the
		// store and the key.
		b.baseBin = filepath.Join(b.dir, "base", "statewright")
		b.baseClient = filepath.Join(b.dir, "base", "statewright-hook")
		for _, t := range [][2]string{{b.baseBin, "./cmd/statewright"}, {b.baseClient, "./cmd/statewright-hook"}} {
			if out, err := exec.Command("go", "build", "-C", b.base, "-o", t[0], t[1]).CombinedOutput(); err != nil {
				return fmt.Errorf("build %s in %s: %v\n%s", t[1], b.base, err, out)
			}
		}
	}
	src := filepath.Join(b.dir, "trivial", "main.go")
	if err := os.MkdirAll(filepath.Dir(src), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(src, []byte("package main\n\nimport (\n\t\"io\"\n\t\"os\"\n)\n\nfunc main() { io.Copy(io.Discard, os.Stdin) }\n"), 0o644); err != nil {
		return err
	}
	b.trivial = filepath.Join(b.dir, "bin", "trivial")
	if out, err := exec.Command("go", "build", "-o", b.trivial, src).CombinedOutput(); err != nil {
		return fmt.Errorf("build trivial: %v\n%s", err, out)
	}
	return nil
}

// readHookCommand reads the PreToolUse command from the settings init wrote.
func (b *bench) readHookCommand() error {
	for _, name := range []string{"settings.local.json", "settings.json"} {
		raw, err := os.ReadFile(filepath.Join(b.project, ".claude", name))
		if err != nil {
			continue
		}
		var s struct {
			Hooks map[string][]struct {
				Hooks []struct {
					Command string `json:"command"`
				} `json:"hooks"`
			} `json:"hooks"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return err
		}
		for _, g := range s.Hooks["PreToolUse"] {
			for _, h := range g.Hooks {
				if strings.Contains(h.Command, " hook claude-code pre-tool-use ") {
					b.hookCmd = h.Command
					return nil
				}
			}
		}
	}
	return errors.New("init wrote no PreToolUse hook")
}

// directArgs is the hook command without the shell and its wrapper.
func (b *bench) directArgs(k int) []string {
	cmd, _, _ := strings.Cut(b.hookCmd, " || ")
	var out []string
	for _, f := range strings.Fields(cmd) {
		out = append(out, strings.Trim(f, "'"))
	}
	return out
}

func session(states int) string { return fmt.Sprintf("bench-%d", states) }

func (b *bench) input(states int) []byte {
	b.seq++
	return fmt.Appendf(nil, `{"session_id":%q,"transcript_path":"/tmp/t.jsonl","cwd":%q,"permission_mode":"default",`+
		`"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":%q},"tool_use_id":"toolu_bench_%d"}`,
		session(states), b.project, filepath.Join(b.project, "main.go"), b.seq)
}

// hook runs init's PreToolUse command for the session of a workflow size
// and checks that it allowed the Read.
func (b *bench) hook(states int) (result, error) { return b.hookWith(b.hookCmd, states) }

// baseHook runs the base's hook and adds its figures.
func (b *bench) baseHook(s *series, cpu *time.Duration, pid, states int) error {
	before := procCPU(pid)
	r, err := b.hookWith(b.baseHookCmd, states)
	if err != nil {
		return fmt.Errorf("base: %w", err)
	}
	*cpu += procCPU(pid) - before
	s.wall, s.cpu = append(s.wall, r.wall), append(s.cpu, r.cpu)
	return nil
}

func (b *bench) hookWith(cmd string, states int) (result, error) {
	r, err := b.spawn(shellArgs(cmd), b.input(states))
	if err != nil {
		return r, err
	}
	if r.code != 0 || bytes.Contains(r.stdout, []byte(`"deny"`)) {
		return r, fmt.Errorf("the hook did not allow the Read (exit %d): %s %s", r.code, r.stdout, r.stderr)
	}
	return r, nil
}

// series are the wall and CPU times of one command's calls.
type series struct{ wall, cpu []time.Duration }

func shellArgs(cmd string) []string { return []string{"/bin/sh", "-c", cmd} }

type result struct {
	code      int
	stdout    []byte
	stderr    string
	wall, cpu time.Duration
}

func (b *bench) spawn(argv []string, stdin []byte) (result, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = b.env
	cmd.Dir = b.project
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := result{wall: time.Since(start), stdout: stdout.Bytes(), stderr: stderr.String()}
	if cmd.ProcessState != nil {
		r.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		r.code = cmd.ProcessState.ExitCode()
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		err = nil
	}
	return r, err
}

func (b *bench) deciderStatus(bin string) (int, error) {
	pid, _, err := b.deciderRequests(bin)
	return pid, err
}

// deciderRequests is bin's decider's pid and the hooks it answered so far.
func (b *bench) deciderRequests(bin string) (pid int, requests int64, err error) {
	cmd := exec.Command(bin, "decider", "status")
	cmd.Env = b.env
	out, err := cmd.Output()
	if err != nil {
		return 0, 0, err
	}
	var st struct {
		Pid      int   `json:"pid"`
		Requests int64 `json:"requests"`
	}
	if err := json.Unmarshal(out, &st); err != nil {
		return 0, 0, err
	}
	return st.Pid, st.Requests, nil
}

func (b *bench) waitDecider(bin string) error {
	for range 200 {
		if pid, err := b.deciderStatus(bin); err == nil && pid > 0 {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New("the first hook started no decider within 10s")
}

func (b *bench) deciderPid(bin string) int {
	pid, _ := b.deciderStatus(bin)
	return pid
}

func (b *bench) stopDecider() {
	for _, bin := range []string{b.bin, b.baseBin} {
		if bin == "" {
			continue
		}
		cmd := exec.Command(bin, "decider", "stop")
		cmd.Env = b.env
		cmd.Run()
	}
}

// writeKeep leaves a fixture for profiling: env.sh (the environment),
// hook.sh (init's command) and input.json (an input; its tool_use_id must
// change between calls to be decided rather than replayed).
func (b *bench) writeKeep(states int) error {
	var env strings.Builder
	for _, kv := range b.env {
		if k, v, ok := strings.Cut(kv, "="); ok && (strings.HasPrefix(k, "XDG_") || k == "HOME" || k == "STATEWRIGHT_STORE") {
			fmt.Fprintf(&env, "export %s='%s'\n", k, v)
		}
	}
	files := map[string][]byte{"env.sh": []byte(env.String()), "hook.sh": []byte(b.hookCmd + "\n"), "input.json": b.input(states)}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(b.dir, name), data, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("fixture in %s: . env.sh; sh -c \"$(cat hook.sh)\" < input.json\n", b.dir)
	return nil
}

// benchWorkflow is a workflow of k states: a chain of phases that allow
// the read tools, each with its own instructions and a transition on, so
// that the compiled law grows with k. The run starts in the first.
func benchWorkflow(k int) []byte {
	type state struct {
		Instructions string            `json:"instructions,omitempty"`
		AllowedTools []string          `json:"allowed_tools,omitempty"`
		On           map[string]string `json:"on,omitempty"`
		Type         string            `json:"type,omitempty"`
	}
	states := map[string]state{}
	for i := range k - 1 {
		states[fmt.Sprintf("s%04d", i)] = state{
			Instructions: fmt.Sprintf("Phase %d of the benchmark: read, search, record what you find.", i),
			AllowedTools: []string{"Read", "Grep", "Glob", "LS", "Bash", "TodoWrite"},
			On:           map[string]string{"NEXT": fmt.Sprintf("s%04d", i+1), "DONE": "done"},
		}
	}
	last := fmt.Sprintf("s%04d", k-1)
	states[last] = state{AllowedTools: []string{"Read"}, On: map[string]string{"DONE": "done"}}
	states["done"] = state{Type: "final"}
	b, _ := json.MarshalIndent(map[string]any{"id": fmt.Sprintf("bench-%d", k), "initial": "s0000", "states": states}, "", " ")
	return b
}

// procCPU is a process's CPU time so far (0 when it cannot be read): the
// sum of its threads' run time in nanoseconds (/proc/PID/task/*/schedstat),
// which a few hooks' worth of CPU shows, where /proc/PID/stat counts 10 ms
// ticks.
func procCPU(pid int) time.Duration {
	if pid <= 0 {
		return 0
	}
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0
	}
	var sum time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) < 1 {
			continue
		}
		ns, _ := strconv.ParseInt(f[0], 10, 64)
		sum += time.Duration(ns)
	}
	return sum
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func redact(s, dir string) string { return strings.ReplaceAll(s, dir, "$DIR") }

func joinInts(v []int) string {
	var s []string
	for _, x := range v {
		s = append(s, strconv.Itoa(x))
	}
	return strings.Join(s, ",")
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	if i > 0 {
		i--
	}
	return s[i]
}

func report(name string, d []time.Duration) {
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	fmt.Printf("%-34s n=%d  p50=%v  p90=%v  p99=%v  max=%v  mean=%v\n", name, len(d),
		pct(d, 50).Round(10*time.Microsecond), pct(d, 90).Round(10*time.Microsecond), pct(d, 99).Round(10*time.Microsecond),
		pct(d, 100).Round(10*time.Microsecond), (sum / time.Duration(len(d))).Round(10*time.Microsecond))
}
