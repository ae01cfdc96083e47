// Command servebench measures `statewright serve` on its HTTP hook decision
// path under concurrent sessions, beside a reference measured in the same
// run on the same machine:
//
//   - on SQLite (the default), raw SQLite small transactions: the same
//     driver and settings as the store (modernc.org/sqlite, WAL,
//     synchronous=NORMAL), one connection, BEGIN IMMEDIATE + one prepared
//     INSERT + COMMIT, by as many goroutines as there are sessions taking
//     turns on it;
//   - on PostgreSQL (-store postgres://...), pgbench's plain inserts (a
//     one-statement INSERT script, -c as many clients as sessions, -j 2)
//     against the same server.
//
// For each session count it starts the serve replicas (-replicas; each a
// `statewright serve` process on the same store), starts one run per session
// (a one-phase workflow that allows Read), and drives every session as a
// closed loop: POST /hook/claude-code/pre-tool-use with an allowed Read and
// a fresh tool_use_id, the next as soon as the answer arrives, for
// -duration. Sessions are spread over the replicas round robin. It reports
// decisions/s, p50/p90/p99 latency, the reference and the ratio, then checks
// the store: every answered decision recorded exactly once (a decision event
// and a call record per tool_use_id) and every run's chain verified.
//
//	go run ./bench/servebench > bench/serve.txt
//	go run ./bench/servebench -store "$STATEWRIGHT_TEST_POSTGRES" -replicas 1,2 -sessions 50 > bench/postgres.txt
//
// -serve-env-alt runs every row a second time with another environment for
// the replicas, alternating in the same run (e.g. the Go runtime's monitor
// kept out of deep sleep: -serve-env-alt GODEBUG=schedtrace=2000000000).
//
// Absolute figures depend on the machine and on what else runs on it;
// compare each figure with its reference from the same run.
package main

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	stdruntime "runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	_ "modernc.org/sqlite"

	"github.com/statewright-go/statewright/bench/internal/selfcpu"
	"github.com/statewright-go/statewright/gateway/tokens"
	"github.com/statewright-go/statewright/harness/adapters"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/serve"
	"github.com/statewright-go/statewright/store"
	_ "github.com/statewright-go/statewright/store/backends"
)

const workflowJSON = `{"id":"bench","initial":"work","states":{
 "work":{"allowed_tools":["Read","Grep"],"on":{"DONE":"done"}},
 "done":{"type":"final"}}}`

type config struct {
	sessions  []int
	replicas  []int
	duration  time.Duration
	warmup    time.Duration
	storeLoc  string
	bin       string
	hookPath  string
	keep      bool
	perf      string
	inProcess bool
	cpuprof   string
	pgbenchJ  int
	rounds    int
	detail    bool
	serveEnv  []string
	cpuShare  bool
	// altEnv, with -serve-env-alt, is a second environment: every row
	// runs with serveEnv and then with it, in the same round.
	altEnv    []string
	hasAltEnv bool
}

func main() {
	var c config
	sessions := flag.String("sessions", "1,10,50,200", "comma-separated concurrent session counts")
	replicas := flag.String("replicas", "1", "comma-separated serve replica counts (2 needs a shared store: PostgreSQL)")
	flag.DurationVar(&c.duration, "duration", 10*time.Second, "how long each measurement runs")
	flag.DurationVar(&c.warmup, "warmup", 2*time.Second, "load before each measurement that is not counted")
	flag.StringVar(&c.storeLoc, "store", "", "the store: a postgres:// URL (default: a fresh SQLite file per row)")
	flag.StringVar(&c.bin, "bin", "", "the statewright binary (default: go build ./cmd/statewright)")
	flag.StringVar(&c.hookPath, "hook-path", "/hook/claude-code/pre-tool-use", "serve's PreToolUse hook endpoint")
	flag.BoolVar(&c.keep, "keep", false, "keep the temporary directory (logs, stores)")
	flag.StringVar(&c.perf, "perf", "", "record a perf profile (perf record -g) of the first replica at this session count into servebench-perf-N.data")
	flag.IntVar(&c.pgbenchJ, "pgbench-jobs", 2, "pgbench -j")
	flag.IntVar(&c.rounds, "rounds", 1, "measure every row this many times, round after round (the spread shows the machine's noise)")
	serveEnv := flag.String("serve-env", "", "comma-separated KEY=VALUE pairs added to each serve replica's environment (e.g. GOMAXPROCS=1), to examine the runtime's settings")
	altEnv := flag.String("serve-env-alt", "", "a second -serve-env (may be empty): every row of a round runs with -serve-env, then again with this, so two runtime settings alternate in the same run (e.g. -serve-env-alt GODEBUG=schedtrace=2000000000)")
	flag.BoolVar(&c.cpuShare, "cpu-share", false, "give each of N serve replicas GOMAXPROCS=max(1, NumCPU/N), the share of this machine's cores a container CPU limit of NumCPU/N would give it (Go reads such a limit itself); default: every replica's runtime schedules on all cores")
	flag.BoolVar(&c.detail, "detail", false, "after each row, a comment line with each process's CPU time and context switches per decision (the load generator, each serve replica, PostgreSQL's backends)")
	flag.BoolVar(&c.inProcess, "inprocess", false, "serve the hook endpoint from this process (serve.MountHooks on the same store) instead of statewright serve processes")
	flag.StringVar(&c.cpuprof, "cpuprofile", "", "with -inprocess: write a CPU profile of each row's measured window to FILE-SESSIONS (pprof; the load generator's own work is in it too)")
	flag.Parse()
	var err error
	c.serveEnv = envList(*serveEnv)
	flag.Visit(func(f *flag.Flag) {
		if f.Name == "serve-env-alt" {
			c.altEnv, c.hasAltEnv = envList(*altEnv), true
		}
	})
	if c.sessions, err = ints(*sessions); err == nil {
		c.replicas, err = ints(*replicas)
	}
	if err == nil {
		err = run(c)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "servebench:", err)
		os.Exit(1)
	}
}

// envList splits a comma-separated KEY=VALUE list ("" is none).
func envList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// envs are the serve environments each row runs with, in order: -serve-env,
// then -serve-env-alt when it is given.
func envs(c config) [][]string {
	if !c.hasAltEnv {
		return [][]string{c.serveEnv}
	}
	return [][]string{c.serveEnv, c.altEnv}
}

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad count %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// procCPU returns a process's user+system CPU time from /proc/PID/stat
// (every thread; clock ticks of 10 ms).
func procCPU(pid int) time.Duration {
	st, ok := procStat(pid)
	if !ok {
		return 0
	}
	return st.cpu
}

// stat is what procStat reads of /proc/PID/stat.
type stat struct {
	ppid          int
	cpu, children time.Duration // user+system; of the children waited for
}

func procStat(pid int) (stat, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return stat{}, false
	}
	// Fields after the command name (which may hold spaces) in parentheses.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 15 {
		return stat{}, false
	}
	n := func(i int) int64 { v, _ := strconv.ParseInt(f[i], 10, 64); return v }
	const tick = 10 * time.Millisecond
	return stat{ppid: int(n(1)), cpu: time.Duration(n(11)+n(12)) * tick, children: time.Duration(n(13)+n(14)) * tick}, true
}

// liveChildren returns the /proc stat of each live child of pid, by PID.
func liveChildren(pid int) map[int]stat {
	out := map[int]stat{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := procStat(child); ok && st.ppid == pid {
			out[child] = st
		}
	}
	return out
}

// pgServerCPU returns a function that reads the CPU time of the whole
// PostgreSQL server of loc when it runs on this machine: the postmaster,
// its live children (backends, WAL writer, checkpointer, ...) and the
// children it has reaped (cutime/cstime), so a backend that exits between
// two readings still counts. It returns nil when the server's postmaster
// cannot be found (another machine, no permission).
func pgServerCPU(loc string) func() time.Duration {
	pid := pgServerPID(loc)
	if pid == 0 {
		return nil
	}
	return func() time.Duration {
		pm, _ := procStat(pid)
		d := pm.cpu + pm.children
		for _, st := range liveChildren(pid) {
			d += st.cpu
		}
		return d
	}
}

// pgServerPID returns the pid of loc's PostgreSQL postmaster when it runs
// on this machine and can be read (else 0).
func pgServerPID(loc string) int {
	out, err := exec.Command("psql", psqlConn(loc), "-Atc", "SHOW data_directory").Output()
	if err != nil {
		return 0
	}
	b, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "postmaster.pid"))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if err != nil {
		return 0
	}
	if _, ok := procStat(pid); !ok {
		return 0
	}
	return pid
}

// switches is a process's context switches: voluntary (it blocked) and
// involuntary (it was preempted), summed over its threads.
type switches struct{ vol, invol int64 }

// procSwitches reads the context switches of every live thread of pid.
func procSwitches(pid int) switches {
	var sw switches
	ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, e := range ents {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/status", pid, e.Name()))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			switch k {
			case "voluntary_ctxt_switches":
				sw.vol += n
			case "nonvoluntary_ctxt_switches":
				sw.invol += n
			}
		}
	}
	return sw
}

// pgSwitches sums the context switches of the postmaster's live children.
func pgSwitches(pid int) switches {
	var sw switches
	for child := range liveChildren(pid) {
		c := procSwitches(child)
		sw.vol, sw.invol = sw.vol+c.vol, sw.invol+c.invol
	}
	return sw
}

// detail is what -detail reads of each process at both ends of the
// measured window.
type detail struct {
	gen     time.Duration // the load generator's (this process's) CPU
	genSw   switches
	serve   []time.Duration
	serveSw []switches
	pg      switches
}

func readDetail(servers []*server, pgPID int) detail {
	var d detail
	d.gen = selfcpu.Time()
	d.genSw = procSwitches(os.Getpid())
	for _, s := range servers {
		if s.cmd == nil {
			continue
		}
		d.serve = append(d.serve, procCPU(s.cmd.Process.Pid))
		d.serveSw = append(d.serveSw, procSwitches(s.cmd.Process.Pid))
	}
	if pgPID != 0 {
		d.pg = pgSwitches(pgPID)
	}
	return d
}

// detailLine formats the difference of two readings per decision.
func detailLine(a, b detail, n int64) string {
	per := func(d time.Duration) string {
		return fmt.Sprintf("%.0fus", float64(d)/float64(time.Microsecond)/float64(n))
	}
	sw := func(x, y switches) string {
		return fmt.Sprintf("%.2f+%.2f", float64(y.vol-x.vol)/float64(n), float64(y.invol-x.invol)/float64(n))
	}
	line := fmt.Sprintf("# detail per decision (cpu; context switches voluntary+involuntary): generator %s %s", per(b.gen-a.gen), sw(a.genSw, b.genSw))
	for i := range b.serve {
		line += fmt.Sprintf("; serve%d %s %s", i, per(b.serve[i]-a.serve[i]), sw(a.serveSw[i], b.serveSw[i]))
	}
	return line + "; postgres backends " + sw(a.pg, b.pg)
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return strings.TrimSpace(string(b))
}

func isPostgres(loc string) bool { return store.IsPostgresURL(loc) }

func run(c config) error {
	dir, err := os.MkdirTemp("", "servebench")
	if err != nil {
		return err
	}
	if c.keep {
		fmt.Fprintln(os.Stderr, "servebench: keeping", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	if c.bin == "" {
		c.bin = filepath.Join(dir, "statewright")
		if out, err := exec.Command("go", "build", "-o", c.bin, "github.com/statewright-go/statewright/cmd/statewright").CombinedOutput(); err != nil {
			return fmt.Errorf("build statewright: %v\n%s", err, out)
		}
	}
	tokens := filepath.Join(dir, "tokens.json")
	out, err := exec.Command(c.bin, "tokens", "create", "--role", "hook", "--tokens-file", tokens).Output()
	if err != nil {
		return fmt.Errorf("tokens create: %v", err)
	}
	token := strings.TrimSpace(string(out))
	wf := filepath.Join(dir, "bench.json")
	if err := os.WriteFile(wf, []byte(workflowJSON), 0o644); err != nil {
		return err
	}
	host, _ := os.Hostname()
	backendName := "sqlite"
	if isPostgres(c.storeLoc) {
		backendName = "postgres"
	}
	fmt.Printf("# servebench %s, %s/%s, GOMAXPROCS=%d, NumCPU=%d, host %s, store %s\n", time.Now().UTC().Format(time.RFC3339),
		stdruntime.GOOS, stdruntime.GOARCH, stdruntime.GOMAXPROCS(0), stdruntime.NumCPU(), host, backendName)
	fmt.Printf("# %s\n", strings.Join(os.Args, " "))
	fmt.Printf("# each row: %s of closed-loop PreToolUse hooks (an allowed Read) over HTTP after %s of warm-up\n", c.duration, c.warmup)
	if c.cpuShare {
		fmt.Printf("# -cpu-share: each of N serve replicas runs with GOMAXPROCS=max(1, %d/N), its share of the cores (the load generator and PostgreSQL are not limited)\n", stdruntime.NumCPU())
	}
	if backendName == "sqlite" {
		fmt.Printf("# reference: raw SQLite small transactions (BEGIN IMMEDIATE; one prepared INSERT; COMMIT; WAL, synchronous=NORMAL) by as many goroutines as sessions on one connection\n")
	} else {
		fmt.Printf("# reference: pgbench plain inserts (INSERT INTO servebench_ref (v) VALUES ('x')), -c sessions -j %d, on the same server\n", c.pgbenchJ)
	}
	fmt.Printf("# cpu/dec: CPU time (user+system) of the serve processes per answered decision (with -inprocess, of this whole process, load included);\n")
	if backendName == "sqlite" {
		fmt.Printf("# ref cpu: CPU time per reference transaction; cpu rat = ref cpu over cpu/dec, which a busy machine skews less than the throughput ratio\n")
	} else {
		fmt.Printf("# pg/dec: CPU time of the whole PostgreSQL server (postmaster, backends, WAL writer, ...) per decision; ref cpu: the same per pgbench\n")
		fmt.Printf("# transaction; cpu rat = ref cpu over pg/dec, which a busy machine skews less than the throughput ratio (- : the server's processes are not readable here)\n")
	}
	fmt.Printf("%-9s %-8s %12s %9s %9s %9s %9s %14s %7s %9s %9s %9s %7s  %s\n", "sessions", "replicas", "decisions/s", "p50", "p90", "p99", "max",
		"reference/s", "ratio", "cpu/dec", "pg/dec", "ref cpu", "cpu rat", "load average")
	for r := 0; r < max(c.rounds, 1); r++ {
		for _, n := range c.sessions {
			for _, env := range envs(c) {
				rc := c
				rc.serveEnv = env
				for _, reps := range c.replicas {
					if c.hasAltEnv {
						fmt.Printf("# serve-env: %s\n", cmp.Or(strings.Join(env, ","), "(none)"))
					}
					if err := row(rc, dir, token, tokens, wf, n, reps); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

type result struct {
	decisions int64
	elapsed   time.Duration
	lat       []time.Duration
	cpu       time.Duration // CPU time of the servers and this process in the window
	pgCPU     time.Duration // CPU time of the PostgreSQL server in the window (0: unknown)
}

func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[min(len(d)-1, int(float64(len(d))*p))]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond)) }

func us(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0fus", float64(d)/float64(time.Microsecond))
}

func row(c config, dir, token, tokens, wf string, sessions, reps int) error {
	ctx := context.Background()
	rowDir, err := os.MkdirTemp(dir, fmt.Sprintf("row-%d-%d-", sessions, reps))
	if err != nil {
		return err
	}
	loc := c.storeLoc
	if loc == "" {
		loc = filepath.Join(rowDir, "state.db")
	} else {
		loc = withSchema(loc, fmt.Sprintf("servebench_%d_%d_%d", sessions, reps, time.Now().Unix()))
	}
	st, err := store.Open(ctx, loc, store.Options{})
	if err != nil {
		return err
	}
	defer func() {
		st.Close()
		if isPostgres(loc) && !c.keep {
			// Drop the row's schema once the row is done, so that
			// autovacuum does not vacuum and analyze its tables (tens of
			// thousands of events and calls) during a later row's
			// measured window, where that work would count as
			// PostgreSQL's CPU per decision of whichever row it fell in.
			dropSchema(loc)
		}
	}()
	svc := runtime.New(st, runtime.Options{ProjectDir: rowDir})
	human := runtime.Actor{Kind: runtime.ActorHuman, Channel: "bench"}
	for s := 0; s < sessions; s++ {
		if _, err := svc.Start(ctx, sessionKey(s), wf, human); err != nil {
			return err
		}
	}
	var servers []*server
	defer func() {
		for _, s := range servers {
			s.stop()
		}
	}()
	for r := 0; r < reps; r++ {
		var (
			s   *server
			err error
		)
		if c.inProcess {
			s, err = startInProcess(ctx, rowDir, loc, st.StoreID(), tokens)
		} else {
			s, err = startServe(c, rowDir, loc, st.StoreID(), tokens, r, reps)
		}
		if err != nil {
			return err
		}
		servers = append(servers, s)
	}
	var startProf, stopProf func()
	switch {
	case c.perf != "" && strconv.Itoa(sessions) == c.perf && !c.inProcess:
		startProf = func() {
			stopProf = startPerf(servers[0].cmd.Process.Pid, fmt.Sprintf("servebench-perf-%d.data", sessions))
		}
	case c.cpuprof != "" && c.inProcess:
		startProf = func() { stopProf = startCPUProfile(fmt.Sprintf("%s-%d", c.cpuprof, sessions)) }
	}
	var (
		pgCPU func() time.Duration
		pgPID int
	)
	if isPostgres(loc) {
		pgCPU, pgPID = pgServerCPU(loc), pgServerPID(loc)
	}
	res, err := drive(c, servers, token, rowDir, sessions, startProf, pgCPU, pgPID)
	if stopProf != nil {
		stopProf()
	}
	if err != nil {
		return err
	}
	for _, s := range servers {
		s.stop()
	}
	servers = nil
	if err := check(ctx, st, res.decisions+res.warm, res.late, sessions); err != nil {
		return err
	}
	var (
		refRate float64
		refCPU  time.Duration // CPU per reference transaction (of PostgreSQL's server, on PostgreSQL)
	)
	if isPostgres(c.storeLoc) {
		refRate, refCPU, err = pgbench(c, loc, sessions, rowDir, pgCPU)
	} else {
		refRate, refCPU, err = rawSQLite(filepath.Join(rowDir, "ref.db"), sessions, c.duration)
	}
	if err != nil {
		return err
	}
	rate := float64(res.decisions) / res.elapsed.Seconds()
	perDecision := res.cpu / time.Duration(res.decisions)
	pgPerDecision := res.pgCPU / time.Duration(res.decisions)
	cpuRatio := "-"
	switch {
	case isPostgres(loc) && refCPU > 0 && pgPerDecision > 0:
		cpuRatio = fmt.Sprintf("%.1f%%", 100*float64(refCPU)/float64(pgPerDecision))
	case !isPostgres(loc) && refCPU > 0:
		cpuRatio = fmt.Sprintf("%.1f%%", 100*float64(refCPU)/float64(perDecision))
	}
	slices.Sort(res.lat)
	fmt.Printf("%-9d %-8d %12.0f %9s %9s %9s %9s %14.0f %6.1f%% %9s %9s %9s %7s  %s\n", sessions, reps, rate,
		ms(pct(res.lat, .5)), ms(pct(res.lat, .9)), ms(pct(res.lat, .99)), ms(res.lat[len(res.lat)-1]), refRate, 100*rate/refRate,
		us(perDecision), us(pgPerDecision), us(refCPU), cpuRatio, loadavg())
	if res.detail != "" {
		fmt.Println(res.detail)
	}
	if res.late > 0 {
		fmt.Printf("# %d calls in flight when the window ended failed (not measured; the store may hold their decisions); the first: %s\n", res.late, res.lateErr)
	}
	return nil
}

func sessionKey(s int) string { return "claude-code:" + sessionID(s) }
func sessionID(s int) string  { return fmt.Sprintf("bench-%04d", s) }

// withSchema puts a PostgreSQL store in its own schema.
func withSchema(loc, schema string) string {
	u, err := url.Parse(loc)
	if err != nil {
		return loc
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

type server struct {
	cmd  *exec.Cmd
	base string
	log  *os.File
	once sync.Once
	down func() // an in-process server's shutdown
}

func (s *server) stop() {
	s.once.Do(func() {
		if s.down != nil {
			s.down()
			return
		}
		s.cmd.Process.Signal(syscall.SIGTERM)
		s.cmd.Wait()
		s.log.Close()
	})
}

// startInProcess serves the hook endpoint from this process, as `statewright
// serve` mounts it, on its own handle of the store.
func startInProcess(ctx context.Context, dir, loc, id, tokensPath string) (*server, error) {
	st, err := store.Open(ctx, loc, store.Options{MustExist: true, ExpectID: id})
	if err != nil {
		return nil, err
	}
	svc := runtime.New(st, runtime.Options{ProjectDir: dir})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		st.Close()
		return nil, err
	}
	srv, err := serve.New(serve.Options{Tokens: tokens.Open(tokensPath), Addr: ln.Addr().String()})
	if err != nil {
		st.Close()
		return nil, err
	}
	srv.MountHooks(serve.HookOptions{Adapters: adapters.All, Runtime: svc, ProjectDir: dir})
	sctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		serve.Run(sctx, ln, srv.Handler(), time.Second)
		close(done)
	}()
	return &server{base: "http://" + ln.Addr().String(), down: func() {
		cancel()
		<-done
		st.Close()
	}}, nil
}

func startCPUProfile(path string) func() {
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "servebench: cpuprofile:", err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// replicaEnv is what a serve replica's environment gets besides this
// process's, when reps replicas share cpus cores: -cpu-share's GOMAXPROCS,
// then -serve-env (which may override it).
func replicaEnv(c config, cpus, reps int) []string {
	var env []string
	if c.cpuShare {
		env = append(env, "GOMAXPROCS="+strconv.Itoa(max(1, cpus/reps)))
	}
	return append(env, c.serveEnv...)
}

func startServe(c config, dir, loc, id, tokens string, i, reps int) (*server, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(c.bin, "serve", "--listen", addr, "--store", loc, "--store-id", id, "--tokens-file", tokens, "--project-dir", dir)
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	cmd.Env = append(cmd.Env, replicaEnv(c, stdruntime.NumCPU(), reps)...)
	logf, err := os.Create(filepath.Join(dir, fmt.Sprintf("serve-%d.log", i)))
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, base: "http://" + addr, log: logf}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(s.base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return s, nil
			}
		}
		if time.Now().After(deadline) {
			s.stop()
			b, _ := os.ReadFile(logf.Name())
			return nil, fmt.Errorf("serve did not come up on %s: %v\n%s", addr, err, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func startPerf(pid int, out string) func() {
	cmd := exec.Command("perf", "record", "-g", "-o", out, "-p", strconv.Itoa(pid))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "servebench: perf:", err)
		return func() {}
	}
	return func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}
}

type driveResult struct {
	result
	warm   int64  // decisions during the warm-up
	detail string // -detail's line
	// late counts the calls in flight when the window ended that failed
	// (lateErr: the first one's error): the store may hold their
	// decisions, though none was answered.
	late    int64
	lateErr string
}

// drive runs the closed loops: warm-up, then the measured window.
func drive(c config, servers []*server, token, dir string, sessions int, startProf func(), pgCPU func() time.Duration, pgPID int) (driveResult, error) {
	var (
		res      driveResult
		mu       sync.Mutex
		measure  atomic.Bool
		stop     atomic.Bool
		warm     atomic.Int64
		late     atomic.Int64
		lateErr  atomic.Value // string: the first late call's error
		wg       sync.WaitGroup
		firstErr error
		errOnce  sync.Once
	)
	tr := &http.Transport{MaxIdleConnsPerHost: sessions + 8, MaxConnsPerHost: sessions + 8, DisableCompression: true}
	hc := &http.Client{Timeout: 30 * time.Second, Transport: tr}
	defer tr.CloseIdleConnections()
	input := filepath.Join(dir, "input.go")
	for s := 0; s < sessions; s++ {
		wg.Add(1)
		go func(s int) {
			defer wg.Done()
			srv := servers[s%len(servers)]
			prefix := []byte(`{"session_id":"` + sessionID(s) + `","hook_event_name":"PreToolUse","permission_mode":"default","cwd":"` + dir +
				`","tool_name":"Read","tool_input":{"file_path":"` + input + `"},"tool_use_id":"toolu_` + strconv.Itoa(s) + "_")
			var (
				lat  []time.Duration
				body bytes.Buffer
			)
			for j := 0; !stop.Load(); j++ {
				body.Reset()
				body.Write(prefix)
				body.WriteString(strconv.Itoa(j))
				body.WriteString(`"}`)
				counted := measure.Load()
				t0 := time.Now()
				err := post(hc, srv.base+c.hookPath, token, body.Bytes())
				d := time.Since(t0)
				if err != nil {
					if stop.Load() {
						// In flight when the window ended: not
						// measured, but the store may hold its
						// decision (a deadline's deny is answered
						// before the decision commits). The session's
						// latencies still count.
						if late.Add(1) == 1 {
							lateErr.Store(fmt.Sprintf("session %d call %d: %v", s, j, err))
						}
						break
					}
					errOnce.Do(func() { firstErr = fmt.Errorf("session %d call %d: %w", s, j, err) })
					stop.Store(true)
					return
				}
				if counted && !stop.Load() {
					lat = append(lat, d)
				} else {
					warm.Add(1)
				}
			}
			mu.Lock()
			res.lat = append(res.lat, lat...)
			mu.Unlock()
		}(s)
	}
	time.Sleep(c.warmup)
	if startProf != nil {
		startProf()
	}
	cpu := func() time.Duration { // the servers' own; in process, this whole process's
		if c.inProcess {
			return selfcpu.Time()
		}
		var d time.Duration
		for _, s := range servers {
			d += procCPU(s.cmd.Process.Pid)
		}
		return d
	}
	if pgCPU == nil {
		pgCPU = func() time.Duration { return 0 }
	}
	var d0, d1 detail
	if c.detail {
		d0 = readDetail(servers, pgPID)
	}
	measure.Store(true)
	cpu0, pg0, t0 := cpu(), pgCPU(), time.Now()
	time.Sleep(c.duration)
	stop.Store(true)
	res.elapsed, res.cpu, res.pgCPU = time.Since(t0), cpu()-cpu0, pgCPU()-pg0
	if c.detail {
		d1 = readDetail(servers, pgPID)
	}
	wg.Wait()
	if firstErr != nil {
		return res, firstErr
	}
	res.decisions = int64(len(res.lat))
	res.warm = warm.Load()
	res.late = late.Load()
	if res.late > 0 {
		res.lateErr, _ = lateErr.Load().(string)
	}
	if c.detail && res.decisions > 0 {
		res.detail = detailLine(d0, d1, res.decisions)
	}
	if res.decisions == 0 {
		return res, errors.New("no decision was answered in the measured window")
	}
	return res, nil
}

func post(hc *http.Client, url, token string, body []byte) error {
	req, err := http.NewRequest("POST", url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != 200 {
		return fmt.Errorf("HTTP %d: %s", resp.StatusCode, b)
	}
	if bytes.Contains(b, []byte(`"deny"`)) || bytes.Contains(b, []byte(`"ask"`)) || bytes.Contains(b, []byte(`"block"`)) {
		return fmt.Errorf("an allowed Read was not allowed: %s", b)
	}
	return nil
}

// check asserts what the store holds: exactly one decision event and one
// call record per answered decision (and at most one for each of the late
// calls that failed after the window ended), iterations that count them,
// and every chain verified.
func check(ctx context.Context, st store.Store, answered, late int64, sessions int) error {
	var events int64
	for s := 0; s < sessions; s++ {
		evs, err := st.Events(ctx, store.EventFilter{SessionKey: sessionKey(s), Kinds: []store.EventKind{store.KindDecision}})
		if err != nil {
			return err
		}
		seen := map[string]bool{}
		for _, e := range evs {
			if seen[e.ToolUseID] {
				return fmt.Errorf("session %d: tool_use_id %s decided twice", s, e.ToolUseID)
			}
			seen[e.ToolUseID] = true
		}
		events += int64(len(evs))
		run, err := st.LiveRun(ctx, sessionKey(s))
		if err != nil {
			return err
		}
		cs, err := st.Calls(ctx, run.ID)
		if err != nil {
			return err
		}
		if int64(len(cs)) != int64(len(evs)) || run.Iterations != int64(len(evs)) {
			return fmt.Errorf("session %d: %d decision events, %d call records, %d iterations", s, len(evs), len(cs), run.Iterations)
		}
	}
	if events < answered || events > answered+late {
		return fmt.Errorf("the store holds %d decisions for %d answered (and %d that failed after the window ended)", events, answered, late)
	}
	if _, err := st.VerifyChain(ctx); err != nil {
		return err
	}
	return nil
}

// rawSQLite measures SQLite small write transactions with the store's
// driver and settings: n goroutines take turns on one connection, each
// running BEGIN IMMEDIATE, one prepared INSERT and COMMIT.
func rawSQLite(path string, n int, d time.Duration) (float64, time.Duration, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(2000)")
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, session INTEGER NOT NULL, v TEXT NOT NULL)"); err != nil {
		return 0, 0, err
	}
	ins, err := db.Prepare("INSERT INTO t (session, v) VALUES (?, ?)")
	if err != nil {
		return 0, 0, err
	}
	defer ins.Close()
	var (
		count    atomic.Int64
		stop     atomic.Bool
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for g := 0; g < n; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for !stop.Load() {
				tx, err := db.Begin()
				if err == nil {
					_, err = tx.Stmt(ins).Exec(g, "decision")
					if err == nil {
						err = tx.Commit()
					} else {
						tx.Rollback()
					}
				}
				if err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					stop.Store(true)
					return
				}
				count.Add(1)
			}
		}(g)
	}
	cpu0, t0 := selfcpu.Time(), time.Now()
	time.Sleep(d)
	stop.Store(true)
	el, cpu := time.Since(t0), selfcpu.Time()-cpu0
	wg.Wait()
	if firstErr != nil {
		return 0, 0, firstErr
	}
	n64 := count.Load()
	return float64(n64) / el.Seconds(), cpu / time.Duration(max(n64, 1)), nil
}

// psqlConn returns loc as psql and pgbench take it (without the store's
// parameters).
func psqlConn(loc string) string {
	u, err := url.Parse(loc)
	if err != nil {
		return loc
	}
	q := u.Query()
	for _, k := range []string{"search_path", "pool_max_conns", "sslmode"} {
		q.Del(k)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// dropSchema drops the schema of the PostgreSQL store loc (search_path)
// with everything in it; a failure is reported, not fatal.
func dropSchema(loc string) {
	u, err := url.Parse(loc)
	if err != nil {
		return
	}
	schema := u.Query().Get("search_path")
	if schema == "" {
		return
	}
	if out, err := exec.Command("psql", psqlConn(loc), "-q", "-v", "ON_ERROR_STOP=1", "-c", "DROP SCHEMA IF EXISTS "+schema+" CASCADE").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "servebench: drop schema %s: %v: %s\n", schema, err, out)
	}
}

// pgbench runs pgbench's plain inserts at n clients against the server of
// loc and returns its tps and, when pgCPU can read it, the server's CPU time
// per transaction.
func pgbench(c config, loc string, n int, dir string, pgCPU func() time.Duration) (float64, time.Duration, error) {
	u, err := url.Parse(loc)
	if err != nil {
		return 0, 0, err
	}
	schema := u.Query().Get("search_path")
	conn := psqlConn(loc)
	setup := "CREATE SCHEMA IF NOT EXISTS " + schema + "; CREATE TABLE IF NOT EXISTS " + schema + ".servebench_ref (id bigserial PRIMARY KEY, v text NOT NULL);"
	if out, err := exec.Command("psql", conn, "-q", "-v", "ON_ERROR_STOP=1", "-c", setup).CombinedOutput(); err != nil {
		return 0, 0, fmt.Errorf("psql: %v: %s", err, out)
	}
	script := filepath.Join(dir, "insert.sql")
	if err := os.WriteFile(script, []byte("INSERT INTO "+schema+".servebench_ref (v) VALUES ('x');\n"), 0o644); err != nil {
		return 0, 0, err
	}
	var cpu0 time.Duration
	if pgCPU != nil {
		cpu0 = pgCPU()
	}
	cmd := exec.Command("pgbench", "-n", "-f", script, "-c", strconv.Itoa(n), "-j", strconv.Itoa(min(c.pgbenchJ, n)),
		"-T", strconv.Itoa(int(c.duration.Seconds())), conn)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, 0, fmt.Errorf("pgbench: %v: %s", err, out)
	}
	var cpu time.Duration
	if pgCPU != nil {
		cpu = pgCPU() - cpu0
	}
	var (
		tps float64
		txs int64
	)
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		switch {
		case strings.HasPrefix(line, "tps = "):
			tps, err = strconv.ParseFloat(f[2], 64)
		case strings.HasPrefix(line, "number of transactions actually processed: "):
			txs, err = strconv.ParseInt(f[len(f)-1], 10, 64)
		}
		if err != nil {
			return 0, 0, fmt.Errorf("pgbench: %q: %v", line, err)
		}
	}
	if tps == 0 {
		return 0, 0, fmt.Errorf("pgbench printed no tps: %s", out)
	}
	if txs == 0 {
		cpu = 0
	}
	return tps, cpu / time.Duration(max(txs, 1)), nil
}
