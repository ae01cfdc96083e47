// Command hookbench measures `statewright hook claude-code pre-tool-use` as
// Claude Code runs it: a fresh process per call, spawn to exit, deciding
// against an active run in a SQLite store. It also measures the spawn of a
// trivial Go binary in the same run, the floor any Go hook pays.
//
//	go run ./bench/hookbench -n 500 > bench/hook.txt
//
// It builds both binaries itself (go build, in a temporary directory),
// creates a store, starts a one-phase workflow for a session, then
// alternates the two commands n times each, feeding each the same PreToolUse
// input (a Read, allowed in the first phase, with a fresh tool_use_id) on
// stdin. Budgets (docs/architecture.md): p50 < 3 ms, p99 < 10 ms, and the hook's p50 at
// most 2x the trivial binary's.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	stdruntime "runtime"
	"slices"
	"time"

	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
	_ "github.com/statewright-go/statewright/store/backends"
)

func main() {
	n := flag.Int("n", 500, "calls per command")
	bin := flag.String("bin", "", "a statewright binary to measure (default: go build ./cmd/statewright)")
	hold := flag.Bool("hold", false, "keep the store open in this process meanwhile, as the session's MCP server does")
	fixture := flag.String("fixture", "", "only set up DIR (store with an active run, hook.args, hook.json) for profiling, e.g. under valgrind")
	flag.Parse()
	if *fixture != "" {
		if err := setup(*fixture); err != nil {
			fmt.Fprintln(os.Stderr, "hookbench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*n, *bin, *hold); err != nil {
		fmt.Fprintln(os.Stderr, "hookbench:", err)
		os.Exit(1)
	}
}

func run(n int, bin string, hold bool) error {
	dir, err := os.MkdirTemp("", "hookbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if bin == "" {
		bin = filepath.Join(dir, "statewright")
		if out, err := exec.Command("go", "build", "-o", bin, "github.com/statewright-go/statewright/cmd/statewright").CombinedOutput(); err != nil {
			return fmt.Errorf("build statewright: %v\n%s", err, out)
		}
	}
	trivialSrc := filepath.Join(dir, "trivial", "main.go")
	os.MkdirAll(filepath.Dir(trivialSrc), 0o755)
	if err := os.WriteFile(trivialSrc, []byte("package main\n\nimport (\n\t\"io\"\n\t\"os\"\n)\n\nfunc main() { io.Copy(io.Discard, os.Stdin) }\n"), 0o644); err != nil {
		return err
	}
	trivial := filepath.Join(dir, "trivial-bin")
	if out, err := exec.Command("go", "build", "-o", trivial, trivialSrc).CombinedOutput(); err != nil {
		return fmt.Errorf("build trivial: %v\n%s", err, out)
	}

	// A store with an active run for the session.
	ctx := context.Background()
	storePath := filepath.Join(dir, "state.db")
	st, err := store.Open(ctx, storePath, store.Options{})
	if err != nil {
		return err
	}
	svc := runtime.New(st, runtime.Options{ProjectDir: dir})
	const session = "bench-session"
	wf := filepath.Join(dir, "bench.json")
	if err := os.WriteFile(wf, []byte(benchWorkflow), 0o644); err != nil {
		return err
	}
	v, err := svc.Start(ctx, "claude-code:"+session, wf, runtime.Actor{Kind: runtime.ActorHuman, Channel: "cli"})
	if err != nil {
		return fmt.Errorf("start run: %w", err)
	}
	storeID := st.StoreID()
	if hold {
		// `statewright init claude-code` registers the MCP server, a
		// long-lived process with the store open for the whole session; with
		// it, a hook's Close does not checkpoint the WAL.
		defer st.Close()
		fmt.Println("# the store is held open by this process meanwhile (as by the session's MCP server)")
	} else {
		st.Close()
	}

	hookArgs := []string{"hook", "claude-code", "pre-tool-use", "--store", storePath, "--store-id", storeID, "--deadline", "5s"}
	input := func(i int) []byte {
		return fmt.Appendf(nil, `{"session_id":%q,"transcript_path":"/tmp/t.jsonl","cwd":%q,"permission_mode":"default",`+
			`"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":%q},"tool_use_id":"toolu_bench_%d"}`,
			session, dir, filepath.Join(dir, "main.go"), i)
	}
	// Warm up (page cache, first-run costs) and check the answer.
	for i := range 20 {
		code, stderr, err := spawn(bin, hookArgs, input(-1-i))
		if err != nil || code != 0 {
			return fmt.Errorf("warm-up hook: exit %d, %v: %s", code, err, stderr)
		}
		spawn(trivial, nil, input(0))
	}
	hook := make([]time.Duration, 0, n)
	triv := make([]time.Duration, 0, n)
	hookCPU := make([]time.Duration, 0, n)
	trivCPU := make([]time.Duration, 0, n)
	for i := range n {
		start := time.Now()
		code, stderr, cpu, err := spawnCPU(bin, hookArgs, input(i))
		hook = append(hook, time.Since(start))
		hookCPU = append(hookCPU, cpu)
		if err != nil || code != 0 {
			return fmt.Errorf("hook call %d: exit %d, %v: %s", i, code, err, stderr)
		}
		start = time.Now()
		_, _, cpu, err = spawnCPU(trivial, nil, input(i))
		if err != nil {
			return err
		}
		triv = append(triv, time.Since(start))
		trivCPU = append(trivCPU, cpu)
	}

	// Every call was decided and recorded.
	st, err = store.Open(ctx, storePath, store.Options{MustExist: true})
	if err != nil {
		return err
	}
	defer st.Close()
	calls, err := st.Calls(ctx, v.Run.ID)
	if err != nil {
		return err
	}

	fmt.Printf("# statewright hook claude-code pre-tool-use, spawn to exit (go run ./bench/hookbench -n %d)\n", n)
	fmt.Printf("# %s, %s/%s, %d CPUs, %s\n", time.Now().UTC().Format(time.RFC3339), stdruntime.GOOS, stdruntime.GOARCH, stdruntime.NumCPU(), stdruntime.Version())
	fmt.Printf("# active run (bugfix's first phase, no max_iterations) in phase %s; input: an allowed Read; %d call records in the store\n", v.Run.State, len(calls))
	fmt.Printf("# load average at the end: %s\n", loadavg())
	fmt.Println("# wall time, spawn to exit:")
	report("hook", hook)
	report("trivial-go", triv)
	fmt.Println("# CPU time (user+sys) of the child, less sensitive to other load on the machine:")
	report("hook-cpu", hookCPU)
	report("trivial-cpu", trivCPU)
	fmt.Printf("ratio p50 CPU hook/trivial = %.2f\n", float64(pct(hookCPU, 50))/float64(pct(trivCPU, 50)))
	hp, tp := pct(hook, 50), pct(triv, 50)
	fmt.Printf("ratio p50 wall hook/trivial = %.2f (budget <= 2)\n", float64(hp)/float64(tp))
	fmt.Printf("budget p50 < 3ms: %v; p99 < 10ms: %v\n", hp < 3*time.Millisecond, pct(hook, 99) < 10*time.Millisecond)
	return nil
}

// setup writes a fixture into dir: state.db with an active run for the
// bench session, hook.args (the hook's arguments, one a line) and hook.json
// (a PreToolUse input for an allowed Read). Each input needs a fresh
// tool_use_id to be decided rather than replayed: hook.json's id is
// "toolu_fixture_N" with N to be replaced.
func setup(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ctx := context.Background()
	storePath := filepath.Join(dir, "state.db")
	st, err := store.Open(ctx, storePath, store.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	svc := runtime.New(st, runtime.Options{ProjectDir: dir})
	wf := filepath.Join(dir, "bench.json")
	if err := os.WriteFile(wf, []byte(benchWorkflow), 0o644); err != nil {
		return err
	}
	if _, err := svc.Start(ctx, "claude-code:bench-session", wf, runtime.Actor{Kind: runtime.ActorHuman, Channel: "cli"}); err != nil {
		return fmt.Errorf("start run: %w", err)
	}
	args := []string{"hook", "claude-code", "pre-tool-use", "--store", storePath, "--store-id", st.StoreID(), "--deadline", "5s"}
	var b bytes.Buffer
	for _, a := range args {
		b.WriteString(a + "\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "hook.args"), b.Bytes(), 0o644); err != nil {
		return err
	}
	in := fmt.Appendf(nil, `{"session_id":"bench-session","transcript_path":"/tmp/t.jsonl","cwd":%q,"permission_mode":"default",`+
		`"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":%q},"tool_use_id":"toolu_fixture_N"}`,
		dir, filepath.Join(dir, "main.go"))
	return os.WriteFile(filepath.Join(dir, "hook.json"), in, 0o644)
}

// benchWorkflow is the bugfix template's first phase without its
// max_iterations, so that hundreds of calls stay allowed.
const benchWorkflow = `{
  "id": "bench",
  "initial": "localizing",
  "states": {
    "localizing": {
      "instructions": "Reproduce the bug and find where it lives.",
      "allowed_tools": ["Read", "Grep", "Glob", "LS", "Bash", "TodoWrite"],
      "on": {"LOCALIZED": "done"}
    },
    "done": {"type": "final"}
  }
}`

func spawn(bin string, args []string, stdin []byte) (int, string, error) {
	code, stderr, _, err := spawnCPU(bin, args, stdin)
	return code, stderr, err
}

// spawnCPU runs bin and returns its exit code, stderr and CPU time.
func spawnCPU(bin string, args []string, stdin []byte) (int, string, time.Duration, error) {
	cmd := exec.Command(bin, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var cpu time.Duration
	if cmd.ProcessState != nil {
		cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), stderr.String(), cpu, nil
	}
	return 0, stderr.String(), cpu, err
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return string(bytes.TrimSpace(b))
}

func pct(d []time.Duration, p int) time.Duration {
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
	fmt.Printf("%-10s n=%d  p50=%v  p90=%v  p99=%v  max=%v  mean=%v\n", name, len(d),
		pct(d, 50).Round(10*time.Microsecond), pct(d, 90).Round(10*time.Microsecond), pct(d, 99).Round(10*time.Microsecond),
		pct(d, 100).Round(10*time.Microsecond), (sum / time.Duration(len(d))).Round(10*time.Microsecond))
}
