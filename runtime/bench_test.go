package runtime

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	stdruntime "runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/statewright-go/statewright/internal/cputime"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/store/sqlite"
	"github.com/statewright-go/statewright/workflow"
)

// benchFixture starts a tdd run in a fresh store file.
func benchFixture(b *testing.B) (path, session string) {
	b.Helper()
	dir := b.TempDir()
	path = filepath.Join(dir, "state.db")
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	session = "claude-code:bench"
	if _, err := New(st, Options{ProjectDir: dir}).Start(ctx, session, "tdd", human); err != nil {
		b.Fatal(err)
	}
	return path, session
}

// BenchmarkDecideHook is what one PreToolUse hook process does: open the
// store, build a Service (compiling the run's snapshot), decide one
// allowed call with a fresh tool_use_id, close.
func BenchmarkDecideHook(b *testing.B) {
	path, session := benchFixture(b)
	ctx := context.Background()
	input := []byte(`{"file_path":"a.go"}`)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		st, err := sqlite.Open(ctx, path, sqlite.Options{MustExist: true})
		if err != nil {
			b.Fatal(err)
		}
		svc := New(st, Options{ProjectDir: "/"})
		r, err := svc.Decide(ctx, ToolCall{Session: session, Call: policy.ToolCall{Tool: "Read", Input: input, ToolUseID: fmt.Sprint("h", i)}})
		if err != nil || r.Verdict != policy.Allow && r.Rule != policy.RuleMaxIterations {
			b.Fatalf("%+v %v", r, err)
		}
		st.Close()
		i++
	}
}

// BenchmarkDecideHookPhases splits the hook path: open (store open and
// Service), decide (first decision: compiles the snapshot) and close
// (which checkpoints the WAL after a write), reported as open-ns/op,
// decide-ns/op and close-ns/op.
func BenchmarkDecideHookPhases(b *testing.B) {
	path, session := benchFixture(b)
	ctx := context.Background()
	input := []byte(`{"file_path":"a.go"}`)
	var open, decide, closing time.Duration
	i := 0
	for b.Loop() {
		t0 := time.Now()
		st, err := sqlite.Open(ctx, path, sqlite.Options{MustExist: true})
		if err != nil {
			b.Fatal(err)
		}
		svc := New(st, Options{ProjectDir: "/"})
		t1 := time.Now()
		if _, err := svc.Decide(ctx, ToolCall{Session: session, Call: policy.ToolCall{Tool: "Read", Input: input, ToolUseID: fmt.Sprint("p", i)}}); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		st.Close()
		t3 := time.Now()
		open += t1.Sub(t0)
		decide += t2.Sub(t1)
		closing += t3.Sub(t2)
		i++
	}
	n := float64(i)
	b.ReportMetric(float64(open.Nanoseconds())/n, "open-ns/op")
	b.ReportMetric(float64(decide.Nanoseconds())/n, "decide-ns/op")
	b.ReportMetric(float64(closing.Nanoseconds())/n, "close-ns/op")
}

// BenchmarkDecideHookRelease is BenchmarkDecideHook for a hook process
// that ends with store.Release and exits instead of Close (no WAL
// checkpoint): the timed part is open + New + Decide; the store is closed
// outside the timer so the benchmark does not leak connections.
func BenchmarkDecideHookRelease(b *testing.B) {
	path, session := benchFixture(b)
	ctx := context.Background()
	input := []byte(`{"file_path":"a.go"}`)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		st, err := sqlite.Open(ctx, path, sqlite.Options{MustExist: true})
		if err != nil {
			b.Fatal(err)
		}
		svc := New(st, Options{ProjectDir: "/"})
		if _, err := svc.Decide(ctx, ToolCall{Session: session, Call: policy.ToolCall{Tool: "Read", Input: input, ToolUseID: fmt.Sprint("r", i)}}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		st.Close()
		b.StartTimer()
		i++
	}
}

// BenchmarkDecideWarm decides on an open store with a warm law cache (the
// MCP server, serve, the gateway), one session at a time. p50-us is the
// median decision (a busy machine skews it less than ns/op), cpu-us/op
// this process's CPU time per decision.
func BenchmarkDecideWarm(b *testing.B) {
	path, session := benchFixture(b)
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path, sqlite.Options{MustExist: true})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	svc := New(st, Options{ProjectDir: "/"})
	input := []byte(`{"file_path":"a.go"}`)
	b.ReportAllocs()
	i := 0
	var lat []time.Duration
	cpu0 := cputime.Process()
	for b.Loop() {
		t0 := time.Now()
		if _, err := svc.Decide(ctx, ToolCall{Session: session, Call: policy.ToolCall{Tool: "Read", Input: input, ToolUseID: fmt.Sprint("w", i)}}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
		i++
	}
	if cpu := cputime.Process() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/float64(i), "cpu-us/op")
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-us")
}

// BenchmarkDecideSettle is BenchmarkDecideWarm as the MCP gateway
// decided before its calls were one-shot: each decision carries the
// previous call's result (ToolCall.Settle), one transaction for both,
// with call records. BenchmarkDecideSettleOneShot is the same as the
// gateway decides now (ToolCall.OneShot: no call records).
// The phase allows the call every time (no max_iterations), so that
// every result is settled into the run.
func BenchmarkDecideSettle(b *testing.B) { benchDecideSettle(b, false) }

func BenchmarkDecideSettleOneShot(b *testing.B) { benchDecideSettle(b, true) }

func benchDecideSettle(b *testing.B, oneShot bool) {
	dir := b.TempDir()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "state.db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	wf := filepath.Join(dir, "bench.json")
	if err := os.WriteFile(wf, []byte(`{"id":"bench","initial":"work","states":{
		"work":{"allowed_tools":["Read"],"on":{"DONE":"done"}},"done":{"type":"final"}}}`), 0o644); err != nil {
		b.Fatal(err)
	}
	session := "claude-code:bench"
	svc := New(st, Options{ProjectDir: "/"})
	if _, err := svc.Start(ctx, session, wf, human); err != nil {
		b.Fatal(err)
	}
	input := []byte(`{"file_path":"a.go"}`)
	output := []byte(`[{"type":"text","text":"hello"}]`)
	agent := Actor{Kind: ActorAgent, Channel: "bench"}
	b.ReportAllocs()
	i := 0
	var (
		lat     []time.Duration
		prev    *policy.ToolCall
		prevRes DecideResult
	)
	cpu0 := cputime.Process()
	for b.Loop() {
		c := policy.ToolCall{Tool: "Read", Input: input, ToolUseID: fmt.Sprintf("s%09d", i)}
		tc := ToolCall{Session: session, Call: c, Actor: agent, OneShot: oneShot}
		if prev != nil {
			tc.Settle = []ToolResult{{Session: session, Call: *prev, Output: output, Actor: agent}}
			if oneShot {
				d := prevRes
				tc.Settle[0].Decided = &d
			}
		}
		prev = &c
		t0 := time.Now()
		d, err := svc.Decide(ctx, tc)
		if err != nil {
			b.Fatal(err)
		}
		if d.Verdict != policy.Allow {
			b.Fatalf("%v: %s", d.Verdict, d.Reason)
		}
		prevRes = d
		lat = append(lat, time.Since(t0))
		i++
	}
	if cpu := cputime.Process() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/float64(i), "cpu-us/op")
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-us")
}

// BenchmarkCompileSnapshot is the per-process cost of a run's law: parse,
// validate and compile the tdd template's snapshot.
func BenchmarkCompileSnapshot(b *testing.B) {
	src, err := workflow.TemplateSource("tdd")
	if err != nil {
		b.Fatal(err)
	}
	svc := &Service{}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := svc.compile(src, "template:tdd", nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenStore is the store-open share of a hook process.
func BenchmarkOpenStore(b *testing.B) {
	path, _ := benchFixture(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		st, err := sqlite.Open(ctx, path, sqlite.Options{MustExist: true})
		if err != nil {
			b.Fatal(err)
		}
		st.Close()
	}
}

// BenchmarkDecideSessions is serve's decision path without HTTP: 50
// sessions, each with a run of a one-phase workflow that allows Read,
// decide allowed Reads with fresh tool_use_ids at once on one open store
// (group commit). cpu-us/op is this process's CPU time per decision;
// p50-ms, p90-ms and p99-ms are the decisions' latencies (Decide's call to
// its return: the writer's queue, the batch's transaction and commit).
func BenchmarkDecideSessions(b *testing.B) {
	const sessions = 50
	dir := b.TempDir()
	ctx := context.Background()
	wf := filepath.Join(dir, "bench.json")
	if err := os.WriteFile(wf, []byte(`{"id":"bench","initial":"work","states":{
 "work":{"allowed_tools":["Read","Grep"],"on":{"DONE":"done"}},
 "done":{"type":"final"}}}`), 0o644); err != nil {
		b.Fatal(err)
	}
	input := filepath.Join(dir, "input.go")
	if err := os.WriteFile(input, []byte("package x\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(dir, "state.db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	svc := New(st, Options{ProjectDir: dir})
	for i := 0; i < sessions; i++ {
		if _, err := svc.Start(ctx, fmt.Sprint("claude-code:s", i), wf, human); err != nil {
			b.Fatal(err)
		}
	}
	callInput := []byte(`{"file_path":"` + input + `"}`)
	var next, ids atomic.Int64
	var (
		mu  sync.Mutex
		lat []time.Duration
	)
	b.SetParallelism((sessions + stdruntime.GOMAXPROCS(0) - 1) / stdruntime.GOMAXPROCS(0))
	b.ReportAllocs()
	cpu0 := cputime.Process()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		session := fmt.Sprint("claude-code:s", next.Add(1)%sessions)
		var mine []time.Duration
		defer func() {
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
		for pb.Next() {
			t0 := time.Now()
			r, err := svc.Decide(ctx, ToolCall{Session: session, Call: policy.ToolCall{Tool: "Read", Input: callInput,
				ToolUseID: fmt.Sprint("toolu_", ids.Add(1))}})
			mine = append(mine, time.Since(t0))
			if err != nil || r.Verdict != policy.Allow {
				b.Errorf("%+v %v", r, err)
				return
			}
		}
	})
	b.StopTimer()
	if cpu := cputime.Process() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-us/op")
	}
	if len(lat) > 0 {
		slices.Sort(lat)
		for _, q := range []struct {
			p    float64
			unit string
		}{{.50, "p50-ms"}, {.90, "p90-ms"}, {.99, "p99-ms"}} {
			b.ReportMetric(float64(lat[int(q.p*float64(len(lat)-1))])/float64(time.Millisecond), q.unit)
		}
	}
}
