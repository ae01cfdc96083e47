package engine

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/workflow"
)

// corpusCase is one entry of testdata/cases/*.json. Op selects what runs:
// "step" (default), "interrupt", "edit", "guard", "glob", "match", "next",
// "resolve" or "limit".
type corpusCase struct {
	Name    string          `json:"name"`
	Op      string          `json:"op"`
	Machine string          `json:"machine"`
	State   string          `json:"state"`
	Context json.RawMessage `json:"context"`
	History []Frame         `json:"history"`
	Event   string          `json:"event"`
	Data    json.RawMessage `json:"data"`
	// guard / glob / match / limit inputs
	Guard      json.RawMessage `json:"guard"`
	Pattern    string          `json:"pattern"`
	Path       string          `json:"path"`
	Iterations int             `json:"iterations"`

	Want        *corpusWant `json:"want"`
	Err         string      `json:"err"`
	ErrContains []string    `json:"err_contains"`
	// WantOK is the expected boolean for guard, glob, limit and edit (fired).
	WantOK *bool `json:"want_ok"`
	// WantNames lists the expected interrupt names (match) or events (next).
	WantNames []string `json:"want_names"`
	// WantReason are substrings of a failed guard's verdict reason.
	WantReason []string `json:"want_reason"`
}

type corpusWant struct {
	To               *string         `json:"to"`
	Match            *string         `json:"match"`
	Event            *string         `json:"event"`
	RequiresApproval *bool           `json:"requires_approval"`
	ApprovalMessage  *string         `json:"approval_message"`
	Invoke           *string         `json:"invoke"`
	InvokeOnFail     *string         `json:"invoke_on_fail"`
	InvokeInput      json.RawMessage `json:"invoke_input"`
	Fork             *string         `json:"fork"`
	ForkBranches     []string        `json:"fork_branches"`
	Deferred         *bool           `json:"deferred"`
	Final            *bool           `json:"final"`
	History          *[]Frame        `json:"history"`
	Context          json.RawMessage `json:"context"`
	Interrupt        *string         `json:"interrupt"`
}

var sentinels = map[string]error{
	"ErrStateNotFound":    ErrStateNotFound,
	"ErrNoTransition":     ErrNoTransition,
	"ErrAmbiguousEvent":   ErrAmbiguousEvent,
	"ErrGuardFailed":      ErrGuardFailed,
	"ErrUnknownGuard":     ErrUnknownGuard,
	"ErrInvalidGuard":     ErrInvalidGuard,
	"ErrNoReturnAddress":  ErrNoReturnAddress,
	"ErrFinalState":       ErrFinalState,
	"ErrUnknownInterrupt": ErrUnknownInterrupt,
	"ErrInterruptActive":  ErrInterruptActive,
}

func loadCorpusMachines(t *testing.T) map[string]*workflow.Definition {
	t.Helper()
	files, err := filepath.Glob("testdata/machines/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no machines: %v", err)
	}
	out := map[string]*workflow.Definition{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		def, diags, err := workflow.Parse(data, workflow.ParseOptions{Source: f, Strict: true})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(diags) > 0 {
			t.Fatalf("%s: unexpected diagnostics %v", f, diags)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".json")] = def
	}
	return out
}

func rawValue(t *testing.T, raw json.RawMessage) any {
	t.Helper()
	if len(raw) == 0 {
		return nil
	}
	v, err := decodeJSON(raw)
	if err != nil {
		t.Fatalf("bad JSON %s: %v", raw, err)
	}
	return v
}

func rawMap(t *testing.T, raw json.RawMessage) map[string]any {
	m, _ := rawValue(t, raw).(map[string]any)
	return m
}

func TestCorpus(t *testing.T) {
	machines := loadCorpusMachines(t)
	files, _ := filepath.Glob("testdata/cases/*.json")
	total := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cases []corpusCase
		dec := json.NewDecoder(strings.NewReader(string(data)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cases); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		base := strings.TrimSuffix(filepath.Base(f), ".json")
		for _, c := range cases {
			total++
			t.Run(base+"/"+c.Name, func(t *testing.T) { runCase(t, machines, c) })
		}
	}
	if total < 80 {
		t.Errorf("corpus has %d cases, want at least 80", total)
	}
	t.Logf("%d corpus cases", total)
}

func runCase(t *testing.T, machines map[string]*workflow.Definition, c corpusCase) {
	var def *workflow.Definition
	if c.Machine != "" {
		def = machines[c.Machine]
		if def == nil {
			t.Fatalf("unknown machine %q", c.Machine)
		}
	}
	ctx := rawMap(t, c.Context)
	snap := Snapshot{State: c.State, Context: ctx, History: c.History}
	var (
		out Outcome
		err error
	)
	switch c.Op {
	case "", "step":
		out, err = Step(def, snap, c.Event, rawMap(t, c.Data))
	case "interrupt":
		out, err = Interrupt(def, snap, c.Event)
	case "edit":
		var fired bool
		out, fired, err = InterruptOnEdit(def, snap, c.Path)
		if c.WantOK != nil && fired != *c.WantOK {
			t.Fatalf("fired = %v, want %v", fired, *c.WantOK)
		}
	case "resolve":
		var r Resolution
		r, err = Resolve(def, c.State, c.Event)
		out = Outcome{Event: r.Event, Match: r.Match}
	case "guard":
		g, gerr := loadGuard(rawValue(t, c.Guard))
		if gerr != nil {
			t.Fatal(gerr)
		}
		var v Verdict
		v, err = EvalGuard(def, g, ctx)
		if err == nil {
			if c.WantOK == nil {
				t.Fatal("guard case without want_ok")
			}
			if v.OK != *c.WantOK {
				t.Fatalf("EvalGuard = %v (%s), want %v", v.OK, v.Reason, *c.WantOK)
			}
			for _, s := range c.WantReason {
				if !strings.Contains(v.Reason, s) {
					t.Errorf("reason %q lacks %q", v.Reason, s)
				}
			}
		}
	case "glob":
		if got := GlobMatch(c.Pattern, c.Path); got != *c.WantOK {
			t.Fatalf("GlobMatch(%q, %q) = %v, want %v", c.Pattern, c.Path, got, *c.WantOK)
		}
		return
	case "match":
		var names []string
		for _, m := range MatchInterrupts(def, c.Path) {
			names = append(names, m.Name)
		}
		if !reflect.DeepEqual(names, c.WantNames) {
			t.Fatalf("MatchInterrupts(%q) = %v, want %v", c.Path, names, c.WantNames)
		}
		return
	case "next":
		var names []string
		for _, e := range NextEvents(def, c.State) {
			names = append(names, e.Event)
		}
		if !reflect.DeepEqual(names, c.WantNames) {
			t.Fatalf("NextEvents = %v, want %v", names, c.WantNames)
		}
		return
	case "limit":
		if got := LimitReached(def.States[c.State], c.Iterations); got != *c.WantOK {
			t.Fatalf("LimitReached(%s, %d) = %v, want %v", c.State, c.Iterations, got, *c.WantOK)
		}
		return
	default:
		t.Fatalf("unknown op %q", c.Op)
	}

	if c.Err != "" {
		kind, ok := sentinels[c.Err]
		if !ok {
			t.Fatalf("unknown error kind %q", c.Err)
		}
		if !errors.Is(err, kind) {
			t.Fatalf("err = %v, want %s", err, c.Err)
		}
		for _, s := range c.ErrContains {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("error %q lacks %q", err.Error(), s)
			}
		}
		return
	}
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if c.Want == nil {
		return
	}
	checkWant(t, c.Want, out)
}

func checkWant(t *testing.T, w *corpusWant, out Outcome) {
	t.Helper()
	eqs := func(name string, want *string, got string) {
		if want != nil && *want != got {
			t.Errorf("%s = %q, want %q", name, got, *want)
		}
	}
	eqb := func(name string, want *bool, got bool) {
		if want != nil && *want != got {
			t.Errorf("%s = %v, want %v", name, got, *want)
		}
	}
	eqs("To", w.To, out.To)
	eqs("Match", w.Match, string(out.Match))
	eqs("Event", w.Event, out.Event)
	eqb("RequiresApproval", w.RequiresApproval, out.RequiresApproval)
	eqs("ApprovalMessage", w.ApprovalMessage, out.ApprovalMessage)
	eqb("Deferred", w.Deferred, out.Deferred)
	eqb("Final", w.Final, out.Final)
	eqs("Interrupt", w.Interrupt, out.Interrupt)
	if w.Invoke != nil {
		if out.Invoke == nil {
			t.Errorf("Invoke = nil, want machine %q", *w.Invoke)
		} else {
			eqs("Invoke.Machine", w.Invoke, out.Invoke.Machine)
			eqs("Invoke.OnFail", w.InvokeOnFail, out.Invoke.OnFail)
			if len(w.InvokeInput) > 0 && !reflect.DeepEqual(rawValue(t, w.InvokeInput), out.Invoke.Input) {
				t.Errorf("Invoke.Input = %v, want %s", out.Invoke.Input, w.InvokeInput)
			}
		}
	} else if out.Invoke != nil {
		t.Errorf("unexpected Invoke %+v", out.Invoke)
	}
	if w.Fork != nil {
		if out.Fork == nil {
			t.Errorf("Fork = nil, want on_complete %q", *w.Fork)
		} else {
			eqs("Fork.OnComplete", w.Fork, out.Fork.OnComplete)
			var names []string
			for n := range out.Fork.Branches {
				names = append(names, n)
			}
			if w.ForkBranches != nil && !sameSet(names, w.ForkBranches) {
				t.Errorf("Fork branches = %v, want %v", names, w.ForkBranches)
			}
		}
	} else if out.Fork != nil {
		t.Errorf("unexpected Fork %+v", out.Fork)
	}
	if w.History != nil && !(len(*w.History) == 0 && len(out.History) == 0) && !reflect.DeepEqual(*w.History, out.History) {
		t.Errorf("History = %+v, want %+v", out.History, *w.History)
	}
	if len(w.Context) > 0 {
		want := rawMap(t, w.Context)
		if !(len(want) == 0 && len(out.Context) == 0) && !reflect.DeepEqual(want, out.Context) {
			t.Errorf("Context = %v, want %v", out.Context, want)
		}
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]int{}
	for _, s := range a {
		m[s]++
	}
	for _, s := range b {
		m[s]--
		if m[s] < 0 {
			return false
		}
	}
	return true
}
