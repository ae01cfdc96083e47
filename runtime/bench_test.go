package runtime

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

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
// MCP server, serve).
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
	for b.Loop() {
		if _, err := svc.Decide(ctx, ToolCall{Session: session, Call: policy.ToolCall{Tool: "Read", Input: input, ToolUseID: fmt.Sprint("w", i)}}); err != nil {
			b.Fatal(err)
		}
		i++
	}
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
