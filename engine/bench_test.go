package engine

import (
	"os"
	"testing"

	"github.com/statewright-go/statewright/workflow"
)

func benchMachine(b *testing.B, name string) *workflow.Definition {
	b.Helper()
	data, err := os.ReadFile("testdata/machines/" + name + ".json")
	if err != nil {
		b.Fatal(err)
	}
	def, _, err := workflow.Parse(data, workflow.ParseOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return def
}

func benchStep(b *testing.B, def *workflow.Definition, snap Snapshot, event string, data map[string]any, want string) {
	b.Helper()
	out, err := Step(def, snap, event, data)
	if err != nil || out.To != want {
		b.Fatalf("Step = %+v, %v; want %s", out, err, want)
	}
	b.ReportAllocs()
	for b.Loop() {
		out, _ = Step(def, snap, event, data)
	}
	if out.To != want {
		b.Fatal(out.To)
	}
}

func BenchmarkStepExactSimple(b *testing.B) {
	benchStep(b, benchMachine(b, "verification"), Snapshot{State: "testing"}, "TESTS_PASS", nil, "completed")
}

func BenchmarkStepCaseInsensitive(b *testing.B) {
	benchStep(b, benchMachine(b, "verification"), Snapshot{State: "testing"}, "tests_pass", nil, "completed")
}

func BenchmarkStepTargetName(b *testing.B) {
	benchStep(b, benchMachine(b, "verification"), Snapshot{State: "testing"}, "completed", nil, "completed")
}

func BenchmarkStepSubstring(b *testing.B) {
	benchStep(b, benchMachine(b, "verification"), Snapshot{State: "testing"}, "pass", nil, "completed")
}

func BenchmarkStepGuards(b *testing.B) {
	ctx := map[string]any{"item_count": int64(2), "payment_method": "card"}
	benchStep(b, benchMachine(b, "order"), Snapshot{State: "draft", Context: ctx}, "SUBMIT", nil, "pending_payment")
}

func BenchmarkStepWithData(b *testing.B) {
	ctx := map[string]any{"keep": int64(1)}
	data := map[string]any{"approved": true}
	benchStep(b, benchMachine(b, "plain"), Snapshot{State: "working", Context: ctx}, "GATED", data, "done")
}

func BenchmarkStepReturn(b *testing.B) {
	hist := []Frame{{Return: "implementing", Interrupt: "pb_check"}}
	benchStep(b, benchMachine(b, "interrupts"), Snapshot{State: "pb_validating", History: hist}, "VALIDATED", nil, "implementing")
}

func benchGuard(b *testing.B, def *workflow.Definition, g *workflow.Guard, ctx map[string]any) {
	b.Helper()
	if v, err := EvalGuard(def, g, ctx); err != nil || !v.OK {
		b.Fatalf("guard = %+v, %v", v, err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_, _ = EvalGuard(def, g, ctx)
	}
}

func BenchmarkEvalGuardSimple(b *testing.B) {
	benchGuard(b, nil, &workflow.Guard{Field: "item_count", Op: workflow.OpGt, Value: int64(0)}, map[string]any{"item_count": int64(3)})
}

func BenchmarkEvalGuardNested(b *testing.B) {
	def := benchMachine(b, "features")
	ctx := map[string]any{
		"runtime": map[string]any{"last_command": map[string]any{"exit_code": int64(0)}, "files_edited": []any{"a.go", "b.go"}},
		"data":    map[string]any{"reviewer": "bob"},
	}
	benchGuard(b, def, def.Guards["reviewed_combo"], ctx)
}

func BenchmarkEvalGuardMatches(b *testing.B) {
	benchGuard(b, nil, &workflow.Guard{Field: "branch", Op: workflow.OpMatches, Value: `^feature/[a-z-]+$`}, map[string]any{"branch": "feature/new-thing"})
}

func BenchmarkMatchInterrupts(b *testing.B) {
	def := benchMachine(b, "interrupts")
	if got := MatchInterrupts(def, "config/.env.local"); len(got) != 2 {
		b.Fatal(got)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = MatchInterrupts(def, "config/.env.local")
	}
}

func BenchmarkMatchInterruptsNone(b *testing.B) {
	def := benchMachine(b, "interrupts")
	b.ReportAllocs()
	for b.Loop() {
		_ = MatchInterrupts(def, "src/components/deep/App.vue")
	}
}
