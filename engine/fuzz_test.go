package engine

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/workflow"
)

var fuzzMachineNames = []string{"order", "verification", "features", "interrupts", "trust", "plain"}

func fuzzMachines(f *testing.F) []*workflow.Definition {
	f.Helper()
	var defs []*workflow.Definition
	for _, n := range fuzzMachineNames {
		data, err := os.ReadFile("testdata/machines/" + n + ".json")
		if err != nil {
			f.Fatal(err)
		}
		def, _, err := workflow.Parse(data, workflow.ParseOptions{Source: n})
		if err != nil {
			f.Fatal(err)
		}
		defs = append(defs, def)
	}
	return defs
}

// parseHistory decodes "ret:name;ret:name" into frames.
func parseHistory(s string) []Frame {
	var out []Frame
	for _, part := range strings.Split(s, ";") {
		if part == "" {
			continue
		}
		ret, name, _ := strings.Cut(part, ":")
		out = append(out, Frame{Return: ret, Interrupt: name})
	}
	return out
}

func jsonObject(b string) map[string]any {
	v, err := decodeJSON([]byte(b))
	if err != nil {
		return nil
	}
	m, _ := v.(map[string]any)
	return m
}

func isSentinel(err error) bool {
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// FuzzStep checks that event resolution never panics, is deterministic,
// does not mutate its inputs, only returns typed errors, and only ever
// moves to an existing state (never the literal $return).
func FuzzStep(f *testing.F) {
	defs := fuzzMachines(f)
	seeds := []struct {
		m                           uint8
		state, event, ctx, data, hs string
	}{
		{0, "draft", "SUBMIT", `{"item_count":2,"payment_method":"card"}`, `{}`, ""},
		{0, "draft", "submit", `{}`, `{"item_count":5}`, ""},
		{1, "testing", "PASS", `{}`, ``, ""},
		{1, "review", "completed", `{}`, ``, ""},
		{1, "working", "", `{}`, ``, ""},
		{1, "single", "d", `{}`, ``, ""},
		{2, "executing", "POSTED", `{"post_count":5}`, `{}`, ""},
		{2, "executing", "REVIEWED", `{"runtime":{"last_command":{"exit_code":0}}}`, `{"reviewer":"bob"}`, ""},
		{2, "executing", "LOOP_GUARD", `{}`, ``, ""},
		{3, "pb_validating", "VALIDATED", `{}`, ``, "implementing:pb_check"},
		{3, "implementing", "whatever", `{}`, ``, "pb_validating:env_audit;ghost_state:x"},
		{3, "testing", "INTERRUPT:pb_check", `{}`, ``, ""},
		{3, "env_auditing", "failed", `{"nope":1}`, ``, "testing:env_audit"},
		{4, "working", "NOTE", `{"a":1}`, `{"runtime":1,"_fork":2,"b":3}`, ""},
		{5, "working", "GATED", `{"data":"x"}`, `{"approved":true}`, ""},
	}
	for _, s := range seeds {
		f.Add(s.m, s.state, s.event, s.ctx, s.data, s.hs)
	}
	f.Fuzz(func(t *testing.T, m uint8, state, event, ctxJSON, dataJSON, hs string) {
		def := defs[int(m)%len(defs)]
		ctx, data := jsonObject(ctxJSON), jsonObject(dataJSON)
		hist := parseHistory(hs)
		before, _ := json.Marshal([]any{ctx, data, hist})

		out, err := Step(def, Snapshot{State: state, Context: ctx, History: hist}, event, data)
		out2, err2 := Step(def, Snapshot{State: state, Context: ctx, History: hist}, event, data)

		after, _ := json.Marshal([]any{ctx, data, hist})
		if string(before) != string(after) {
			t.Fatalf("Step mutated its inputs: %s → %s", before, after)
		}
		if (err == nil) != (err2 == nil) || !reflect.DeepEqual(out, out2) || (err != nil && err.Error() != err2.Error()) {
			t.Fatalf("nondeterministic: %+v %v / %+v %v", out, err, out2, err2)
		}
		if err != nil {
			var te *TransitionError
			if !errors.As(err, &te) || !isSentinel(err) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			if te.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		st := def.States[out.To]
		if st == nil || out.To == workflow.ReturnTarget {
			t.Fatalf("moved to missing state %q", out.To)
		}
		if out.From != state || out.Match == "" {
			t.Fatalf("bad outcome %+v", out)
		}
		if out.Final != st.IsFinal() || (out.Final && len(out.History) != 0) {
			t.Fatalf("final bookkeeping wrong: %+v", out)
		}
		if (out.Invoke != nil || out.Fork != nil) != out.Deferred {
			t.Fatalf("Deferred inconsistent: %+v", out)
		}
		if out.Match == MatchSafeNext && out.Event != "" {
			t.Fatalf("safe_next with event %q", out.Event)
		}
		if strings.TrimSpace(event) == "" {
			t.Fatalf("empty event %q matched: %+v", event, out)
		}
	})
}

// FuzzEvalGuard checks that any operator, field, value and context
// evaluates without panicking, returns only typed errors, and that not and
// neq are exact negations.
func FuzzEvalGuard(f *testing.F) {
	seeds := []struct{ op, field, value, ctx string }{
		{"eq", "status", `"draft"`, `{"status":"draft"}`},
		{"neq", "status", `"x"`, `{}`},
		{"gt", "n", `1.5`, `{"n":2}`},
		{"lte", "a.b.c", `3`, `{"a":{"b":{"c":3.0}}}`},
		{"in", "r", `["a",1,null]`, `{"r":1.0}`},
		{"contains", "files", `"a.go"`, `{"files":["a.go"]}`},
		{"matches", "s", `"^a(b|c)*$"`, `{"s":"abcb"}`},
		{"matches", "s", `"(("`, `{"s":"x"}`},
		{"exists", "x.0", `null`, `{"x":[1]}`},
		{"not_exists", "", `null`, `null`},
		{"bogus", "x", `1`, `{"x":1}`},
		{"eq", "o", `{"a":[1,{"b":2}]}`, `{"o":{"a":[1.0,{"b":2}]}}`},
	}
	for _, s := range seeds {
		f.Add(s.op, s.field, s.value, s.ctx)
	}
	def := &workflow.Definition{Guards: map[string]*workflow.Guard{}}
	f.Fuzz(func(t *testing.T, op, field, valueJSON, ctxJSON string) {
		value, _ := decodeJSON([]byte(valueJSON))
		ctx := jsonObject(ctxJSON)
		g := &workflow.Guard{Field: field, Op: workflow.GuardOp(op), Value: value}
		def.Guards["g"] = g

		v, err := EvalGuard(def, g, ctx)
		if err != nil {
			if !errors.Is(err, ErrInvalidGuard) && !errors.Is(err, ErrUnknownGuard) {
				t.Fatalf("untyped error: %v", err)
			}
			if v.OK {
				t.Fatal("error with OK verdict")
			}
		} else if !v.OK && v.Reason == "" {
			t.Fatal("failed verdict without a reason")
		}
		n, nerr := EvalGuard(def, &workflow.Guard{Not: &workflow.Guard{Ref: "g"}}, ctx)
		if (err == nil) != (nerr == nil) || (err == nil && n.OK == v.OK) {
			t.Fatalf("not(g) = %v/%v, g = %v/%v", n.OK, nerr, v.OK, err)
		}
		for _, c := range []*workflow.Guard{{All: []*workflow.Guard{g, g}}, {Any: []*workflow.Guard{g}}} {
			cv, cerr := EvalGuard(def, c, ctx)
			if (err == nil) != (cerr == nil) || cv.OK != v.OK {
				t.Fatalf("combinator of one guard disagrees: %v/%v vs %v/%v", cv.OK, cerr, v.OK, err)
			}
		}
		if op == "eq" {
			ne, _ := EvalGuard(def, &workflow.Guard{Field: field, Op: workflow.OpNeq, Value: value}, ctx)
			if ne.OK == v.OK {
				t.Fatalf("neq = eq = %v", v.OK)
			}
		}
	})
}
