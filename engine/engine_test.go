package engine

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/statewright-go/statewright/workflow"
)

// u32 returns a pointer to n.
func u32(n uint32) *uint32 { return &n }

// literalDef is a machine built as a Go literal, independent of the parser.
func literalDef() *workflow.Definition {
	return &workflow.Definition{
		ID:      "lit",
		Initial: "a",
		States: map[string]*workflow.State{
			"a": {Name: "a", On: map[string]*workflow.Transition{
				"GO":     {Kind: workflow.TransitionSimple, Target: "b"},
				"CHECK":  {Kind: workflow.TransitionFull, Target: "b", Guard: "ok", RequiresApproval: true, ApprovalMessage: "sure?"},
				"BACK":   {Kind: workflow.TransitionSimple, Target: workflow.ReturnTarget},
				"BROKEN": {Kind: workflow.TransitionFork},
			}, MaxIterations: u32(2)},
			"b":    {Name: "b", On: map[string]*workflow.Transition{"END": {Kind: workflow.TransitionSimple, Target: "done"}}},
			"h":    {Name: "h", On: map[string]*workflow.Transition{"RET": {Kind: workflow.TransitionSimple, Target: workflow.ReturnTarget}}},
			"done": {Name: "done", Type: workflow.StateFinal},
		},
		Guards: map[string]*workflow.Guard{
			"ok":  {Field: "ok", Op: workflow.OpEq, Value: true},
			"bad": {Field: "x", Op: "nope"},
		},
		Interrupts: map[string]*workflow.Interrupt{
			"i": {Trigger: workflow.InterruptTrigger{FilePattern: "**/*.go"}, Target: "h"},
		},
	}
}

func TestErrorsIsAndAs(t *testing.T) {
	def := literalDef()
	tests := []struct {
		name  string
		snap  Snapshot
		event string
		want  error
		msg   []string
	}{
		{"state not found", Snapshot{State: "zz"}, "GO", ErrStateNotFound, []string{"state 'zz' not found"}},
		{"no transition", Snapshot{State: "a"}, "FLY", ErrNoTransition, []string{"valid events: BACK, BROKEN, CHECK, GO"}},
		{"guard failed", Snapshot{State: "a", Context: map[string]any{"ok": false}}, "CHECK", ErrGuardFailed, []string{"guard 'ok' failed", "ok is false, want eq true"}},
		{"no return address", Snapshot{State: "a"}, "BACK", ErrNoReturnAddress, []string{"$return"}},
		{"final", Snapshot{State: "done"}, "END", ErrFinalState, []string{"final"}},
		{"malformed fork", Snapshot{State: "a"}, "BROKEN", ErrNoTransition, []string{"fork"}},
		{"unknown interrupt", Snapshot{State: "a"}, "INTERRUPT:x", ErrUnknownInterrupt, []string{"'x'"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Step(def, tt.snap, tt.event, nil)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			var te *TransitionError
			if !errors.As(err, &te) {
				t.Fatalf("err %T is not a *TransitionError", err)
			}
			if te.Kind != tt.want || te.Event != tt.event {
				t.Errorf("Kind = %v, Event = %q", te.Kind, te.Event)
			}
			for _, other := range []error{ErrStateNotFound, ErrNoTransition, ErrGuardFailed, ErrNoReturnAddress, ErrFinalState, ErrUnknownInterrupt} {
				if other != tt.want && errors.Is(err, other) {
					t.Errorf("err also matches %v", other)
				}
			}
			for _, s := range tt.msg {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("message %q lacks %q", err.Error(), s)
				}
			}
		})
	}
}

func TestGuardFailureCarriesVerdict(t *testing.T) {
	def := literalDef()
	_, err := Step(def, Snapshot{State: "a", Context: map[string]any{"ok": "yes"}}, "CHECK", nil)
	var te *TransitionError
	if !errors.As(err, &te) || te.Guard != "ok" || len(te.Verdicts) != 1 {
		t.Fatalf("err = %#v", err)
	}
	v := te.Verdicts[0]
	want := Verdict{Guard: "ok", Field: "ok", Op: workflow.OpEq, Value: true, Actual: "yes", Present: true, Reason: `ok is "yes", want eq true`}
	if !reflect.DeepEqual(v, want) {
		t.Errorf("verdict = %+v\nwant      %+v", v, want)
	}
}

func TestInvalidGuardWrapsCause(t *testing.T) {
	def := literalDef()
	def.States["a"].On["BAD"] = &workflow.Transition{Kind: workflow.TransitionFull, Target: "b", Guard: "bad"}
	_, err := Step(def, Snapshot{State: "a"}, "BAD", nil)
	if !errors.Is(err, ErrInvalidGuard) || !strings.Contains(err.Error(), `unknown operator "nope"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestStepDoesNotMutateArguments(t *testing.T) {
	def := literalDef()
	ctx := map[string]any{"ok": true, "data": map[string]any{"old": 1}, "nested": map[string]any{"k": "v"}}
	hist := make([]Frame, 1, 8) // spare capacity must not be written
	hist[0] = Frame{Return: "b", Interrupt: "i"}
	data := map[string]any{"new": 2}
	snapCtx, _ := json.Marshal(ctx)
	snapData, _ := json.Marshal(data)

	out, err := Step(def, Snapshot{State: "a", Context: ctx, History: hist}, "CHECK", data)
	if err != nil {
		t.Fatal(err)
	}
	if !out.RequiresApproval || out.ApprovalMessage != "sure?" || out.To != "b" {
		t.Errorf("outcome = %+v", out)
	}
	// Reaching b unwinds the frame whose return state is b.
	if len(out.History) != 0 {
		t.Errorf("History = %v, want empty", out.History)
	}
	afterCtx, _ := json.Marshal(ctx)
	afterData, _ := json.Marshal(data)
	if string(afterCtx) != string(snapCtx) || string(afterData) != string(snapData) {
		t.Errorf("arguments mutated: ctx %s → %s, data %s → %s", snapCtx, afterCtx, snapData, afterData)
	}
	if got := out.Context["data"].(map[string]any); got["old"] != 1 || got["new"] != 2 {
		t.Errorf("merged data = %v", got)
	}

	// Interrupt pushes onto a copy; $return pops without sharing capacity.
	base := make([]Frame, 0, 8)
	in, err := Interrupt(def, Snapshot{State: "a", History: base}, "i")
	if err != nil {
		t.Fatal(err)
	}
	if len(base[:1]) == 1 && base[:1][0] != (Frame{}) {
		t.Errorf("Interrupt wrote into the caller's spare capacity")
	}
	ret, err := Step(def, Snapshot{State: in.To, History: in.History}, "RET", nil)
	if err != nil {
		t.Fatal(err)
	}
	if ret.To != "a" || len(ret.History) != 0 {
		t.Fatalf("ret = %+v", ret)
	}
	two := []Frame{{Return: "x", Interrupt: "p"}, {Return: "a", Interrupt: "i"}}
	ret, err = Step(def, Snapshot{State: "h", History: two}, "RET", nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = append(ret.History, Frame{Return: "clobber"})
	if two[1].Return != "a" {
		t.Errorf("appending to Outcome.History clobbered the snapshot: %v", two)
	}
}

func TestOutcomeJSON(t *testing.T) {
	def := literalDef()
	out, err := Step(def, Snapshot{State: "a"}, "go", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(out)
	want := `{"from":"a","to":"b","event":"GO","match":"case_insensitive","final":false}`
	if string(b) != want {
		t.Errorf("json = %s\nwant   %s", b, want)
	}
}

func TestNextEvents(t *testing.T) {
	def := literalDef()
	def.States["b"].On["SPLIT"] = &workflow.Transition{Kind: workflow.TransitionGuarded, Branches: []*workflow.Branch{
		{Target: "a", Guard: "ok"}, {Target: "done", Guards: []string{"ok", "bad"}}}}
	def.States["b"].On["CALL"] = &workflow.Transition{Kind: workflow.TransitionInvoke, Invoke: &workflow.Invoke{Machine: "m", OnComplete: "a", OnFail: "done"}}
	got := NextEvents(def, "b")
	want := []EventInfo{
		{Event: "CALL", Kind: workflow.TransitionInvoke, Target: "a", Targets: []string{"a", "done"}, Deferred: true},
		{Event: "END", Kind: workflow.TransitionSimple, Target: "done", Targets: []string{"done"}},
		{Event: "SPLIT", Kind: workflow.TransitionGuarded, Target: "a", Targets: []string{"a", "done"}, Guards: []string{"ok", "bad"}, Guarded: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("NextEvents(b) =\n%+v\nwant\n%+v", got, want)
	}
	a := NextEvents(def, "a")
	if len(a) != 4 || a[2].Event != "CHECK" || !a[2].RequiresApproval || !a[2].Guarded || !reflect.DeepEqual(a[2].Guards, []string{"ok"}) {
		t.Errorf("NextEvents(a) = %+v", a)
	}
	if NextEvents(def, "done") != nil || NextEvents(def, "nope") != nil {
		t.Error("NextEvents of final/unknown state should be nil")
	}
}

func TestLimit(t *testing.T) {
	tests := []struct {
		st    *workflow.State
		iters int
		want  bool
	}{
		{nil, 100, false},
		{&workflow.State{}, 100, false},
		{&workflow.State{MaxIterations: u32(0)}, 0, true},
		{&workflow.State{MaxIterations: u32(2)}, 1, false},
		{&workflow.State{MaxIterations: u32(2)}, 2, true},
		{&workflow.State{MaxIterations: u32(math.MaxUint32)}, math.MaxInt32, false},
	}
	for _, tt := range tests {
		if got := LimitReached(tt.st, tt.iters); got != tt.want {
			t.Errorf("LimitReached(%v, %d) = %v, want %v", tt.st, tt.iters, got, tt.want)
		}
	}
	if n, ok := Limit(&workflow.State{MaxIterations: u32(7)}); n != 7 || !ok {
		t.Errorf("Limit = %d, %v", n, ok)
	}
}

func TestCompareNumbers(t *testing.T) {
	tests := []struct {
		a, b any
		want int
		ok   bool
	}{
		{int64(1), float64(1), 0, true},
		{float64(1), int64(1), 0, true},
		{int64(2), float64(1.5), 1, true},
		{int64(1), float64(1.5), -1, true},
		{int64(-2), float64(-1.5), -1, true},
		{int64(-1), float64(-1.5), 1, true},
		{int64(math.MaxInt64), float64(math.MaxInt64), -1, true}, // 2^63 as a float is above MaxInt64
		{int64(math.MinInt64), float64(math.MinInt64), 0, true},
		{int64(1 << 53), float64(1<<53) + 0, 0, true},
		{int64(1<<53 + 1), float64(1 << 53), 1, true},
		{uint64(math.MaxUint64), int64(math.MaxInt64), 1, true},
		{json.Number("3"), int(3), 0, true},
		{json.Number("2.5"), float32(2.5), 0, true},
		{uint8(7), int64(7), 0, true},
		{math.NaN(), float64(1), 0, false},
		{int64(1), math.NaN(), 0, false},
		{math.Inf(1), int64(math.MaxInt64), 1, true},
		{math.Inf(-1), int64(math.MinInt64), -1, true},
	}
	for _, tt := range tests {
		na, ok1 := toNum(tt.a)
		nb, ok2 := toNum(tt.b)
		if !ok1 || !ok2 {
			t.Fatalf("toNum(%v/%v) failed", tt.a, tt.b)
		}
		c, ok := cmpNum(na, nb)
		if ok != tt.ok || (ok && c != tt.want) {
			t.Errorf("cmp(%v, %v) = %d, %v; want %d, %v", tt.a, tt.b, c, ok, tt.want, tt.ok)
		}
	}
}

func TestEqualGoTypes(t *testing.T) {
	tests := []struct {
		a, b any
		want bool
	}{
		{[]string{"a", "b"}, []any{"a", "b"}, true},
		{[]any{"a", "b"}, []string{"a", "b"}, true},
		{[]string{"a"}, []string{"a", "b"}, false},
		{map[string]string{"k": "v"}, map[string]any{"k": "v"}, true},
		{map[string]any{"k": "v"}, map[string]string{"k": "v"}, true},
		{map[string]any{"k": "v", "x": "y"}, map[string]string{"k": "v"}, false},
		{map[string]any{"k": int64(1)}, map[string]any{"k": 1.0}, true},
		{nil, nil, true},
		{nil, false, false},
		{"1", int64(1), false},
		{int64(1), "1", false},
		{true, true, true},
		{struct{ A int }{1}, struct{ A int }{1}, true},
		{struct{ A int }{1}, int64(1), false},
	}
	for _, tt := range tests {
		if got := equal(tt.a, tt.b); got != tt.want {
			t.Errorf("equal(%#v, %#v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestLookupGoTypes(t *testing.T) {
	ctx := map[string]any{"runtime": map[string]any{"files_edited": []string{"a.go", "b.go"}}}
	g := &workflow.Guard{Field: "runtime.files_edited", Op: workflow.OpContains, Value: "b.go"}
	v, err := EvalGuard(nil, g, ctx)
	if err != nil || !v.OK {
		t.Fatalf("contains on []string = %+v, %v", v, err)
	}
	g = &workflow.Guard{Field: "runtime.files_edited.1", Op: workflow.OpEq, Value: "b.go"}
	if v, err := EvalGuard(nil, g, ctx); err != nil || !v.OK {
		t.Fatalf("index into []string = %+v, %v", v, err)
	}
	g = &workflow.Guard{Field: "runtime.files_edited", Op: workflow.OpIn, Value: []string{"x"}}
	if v, err := EvalGuard(nil, g, ctx); err != nil || v.OK {
		t.Fatalf("in with []string value = %+v, %v", v, err)
	}
}

func TestEvalGuardErrors(t *testing.T) {
	def := literalDef()
	tests := []struct {
		name string
		g    *workflow.Guard
		want error
	}{
		{"nil", nil, ErrInvalidGuard},
		{"empty", &workflow.Guard{}, ErrInvalidGuard},
		{"mixed forms", &workflow.Guard{Field: "a", Op: workflow.OpExists, All: []*workflow.Guard{}}, ErrInvalidGuard},
		{"unknown ref without definition", &workflow.Guard{Any: []*workflow.Guard{{Ref: "ok"}}}, ErrUnknownGuard},
		{"self reference", &workflow.Guard{Ref: "self"}, ErrInvalidGuard},
	}
	def.Guards["self"] = &workflow.Guard{Not: &workflow.Guard{Ref: "self"}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := def
			if strings.HasPrefix(tt.name, "unknown ref") {
				d = nil
			}
			v, err := EvalGuard(d, tt.g, nil)
			if !errors.Is(err, tt.want) || v.OK {
				t.Fatalf("EvalGuard = %+v, %v; want %v", v, err, tt.want)
			}
		})
	}
}

func TestRegexpCacheConcurrent(t *testing.T) {
	g := &workflow.Guard{Field: "s", Op: workflow.OpMatches, Value: `^a+b$`}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				v, err := EvalGuard(nil, g, map[string]any{"s": "aab"})
				if err != nil || !v.OK {
					t.Errorf("EvalGuard = %+v, %v", v, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestMergeData(t *testing.T) {
	ctx := map[string]any{"a": 1}
	if got := MergeData(false, ctx, nil); !reflect.DeepEqual(got, ctx) {
		t.Errorf("no data: %v", got)
	}
	got := MergeData(false, ctx, map[string]any{"runtime": 1})
	if !reflect.DeepEqual(got, map[string]any{"a": 1, "data": map[string]any{"runtime": 1}}) {
		t.Errorf("data: %v", got)
	}
	got = MergeData(true, ctx, map[string]any{"runtime": 1, "_x": 2, "b": 3})
	if !reflect.DeepEqual(got, map[string]any{"a": 1, "b": 3}) {
		t.Errorf("trust: %v", got)
	}
	if len(ctx) != 1 {
		t.Errorf("ctx mutated: %v", ctx)
	}
}

func TestInterruptOnEditOrderAndNesting(t *testing.T) {
	def := literalDef()
	def.Interrupts["j"] = &workflow.Interrupt{Trigger: workflow.InterruptTrigger{FilePattern: "src/**"}, Target: "b", Priority: -1}
	out, fired, err := InterruptOnEdit(def, Snapshot{State: "a"}, "src/x.go")
	if err != nil || !fired || out.Interrupt != "j" || out.To != "b" {
		t.Fatalf("first = %+v, %v, %v", out, fired, err)
	}
	out, fired, err = InterruptOnEdit(def, Snapshot{State: out.To, History: out.History}, "src/x.go")
	if err != nil || !fired || out.Interrupt != "i" || out.To != "h" || len(out.History) != 2 {
		t.Fatalf("nested = %+v, %v, %v", out, fired, err)
	}
	if !Active(out.History, "i") || !Active(out.History, "j") || Active(out.History, "k") {
		t.Errorf("Active wrong for %v", out.History)
	}
	_, fired, err = InterruptOnEdit(def, Snapshot{State: out.To, History: out.History}, "src/x.go")
	if err != nil || fired {
		t.Fatalf("third edit fired = %v, %v", fired, err)
	}
}

func TestContainsFold(t *testing.T) {
	tests := []struct {
		s, sub string
		want   bool
	}{
		{"TESTS_PASS", "pass", true},
		{"TESTS_PASS", "tests_pass", true},
		{"TESTS_PASS", "passx", false},
		{"AB", "abc", false},
		{"ÉTAPE_FINIE", "étape", true},
		{"ÉTAPE_FINIE", "fin", true},
		{"Straße", "straße", true},
		{"x", "", true},
	}
	for _, tt := range tests {
		if got := containsFold(tt.s, tt.sub); got != tt.want {
			t.Errorf("containsFold(%q, %q) = %v, want %v", tt.s, tt.sub, got, tt.want)
		}
	}
}

func TestUnknownGuardInsideNamedGuard(t *testing.T) {
	def := literalDef()
	def.Guards["outer"] = &workflow.Guard{All: []*workflow.Guard{{Ref: "ghost"}}}
	def.States["a"].On["OUTER"] = &workflow.Transition{Kind: workflow.TransitionFull, Target: "b", Guard: "outer"}
	_, err := Step(def, Snapshot{State: "a"}, "OUTER", nil)
	var te *TransitionError
	if !errors.As(err, &te) || te.Kind != ErrUnknownGuard || te.Guard != "outer" {
		t.Fatalf("err = %#v", err)
	}
	for _, s := range []string{"guard 'outer' cannot be evaluated", "unknown guard 'ghost'"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("message %q lacks %q", err.Error(), s)
		}
	}
}

func TestEventInfoString(t *testing.T) {
	tests := []struct {
		in   EventInfo
		want string
	}{
		{EventInfo{Event: "GO", Target: "build"}, "GO → build"},
		{EventInfo{Event: "TESTS_PASS", Target: "done", Guarded: true}, "TESTS_PASS → done (guarded)"},
		{EventInfo{Event: "SHIP", Target: "committing", RequiresApproval: true}, "SHIP → committing (needs a person's approval)"},
		{EventInfo{Event: "SHIP", Target: "committing", Guarded: true, RequiresApproval: true}, "SHIP → committing (guarded, needs a person's approval)"},
	}
	for _, tt := range tests {
		if got := tt.in.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestInterruptName(t *testing.T) {
	tests := []struct {
		event, name string
		ok          bool
	}{
		{"INTERRUPT:env", "env", true},
		{"interrupt:env", "env", true},
		{"Interrupt:", "", true},
		{"INTERRUPT", "", false},
		{"XINTERRUPT:env", "", false},
		{"DONE", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		name, ok := InterruptName(tt.event)
		if name != tt.name || ok != tt.ok {
			t.Errorf("InterruptName(%q) = %q, %v; want %q, %v", tt.event, name, ok, tt.name, tt.ok)
		}
	}
}
