package engine

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/statewright-go/statewright/workflow"
)

// maxGuardDepth bounds combinator nesting and named-guard references, which
// also stops reference cycles (a → b → a).
const maxGuardDepth = 32

// Verdict explains the evaluation of a guard. For a failed guard it
// describes the comparison that decided the failure.
type Verdict struct {
	// OK is the guard's value.
	OK bool `json:"ok"`
	// Guard is the named guard the deciding comparison belongs to, when known.
	Guard string `json:"guard,omitempty"`
	// Field, Op and Value are the deciding comparison.
	Field string           `json:"field,omitempty"`
	Op    workflow.GuardOp `json:"op,omitempty"`
	Value any              `json:"value,omitempty"`
	// Actual is the field's value in the context (nil when missing).
	Actual any `json:"actual,omitempty"`
	// Present reports whether the field exists in the context.
	Present bool `json:"present"`
	// Reason is a one-line human explanation (only set when OK is false).
	Reason string `json:"reason,omitempty"`
}

// EvalGuard evaluates g against ctx. Named references inside combinators are
// looked up in def.Guards (def may be nil when g has none).
//
// The error is non-nil (and the verdict false) when the guard cannot be
// evaluated: ErrUnknownGuard for an undefined reference, ErrInvalidGuard for
// an unknown operator, a bad regular expression, an empty guard or a
// reference cycle. A guard that evaluates false returns a Verdict whose
// Reason says which comparison failed and why.
func EvalGuard(def *workflow.Definition, g *workflow.Guard, ctx map[string]any) (Verdict, error) {
	ok, err := evalGuard(def, g, ctx, 0)
	if err != nil {
		return Verdict{}, err
	}
	if ok {
		return Verdict{OK: true}, nil
	}
	return explain(def, g, ctx, 0, ""), nil
}

// evalNamed evaluates the guard called name.
func evalNamed(def *workflow.Definition, name string, ctx map[string]any, depth int) (bool, error) {
	var g *workflow.Guard
	if def != nil {
		g = def.Guards[name]
	}
	if g == nil {
		return false, fmt.Errorf("%w '%s'", ErrUnknownGuard, name)
	}
	return evalGuard(def, g, ctx, depth+1)
}

func evalGuard(def *workflow.Definition, g *workflow.Guard, ctx map[string]any, depth int) (bool, error) {
	if depth > maxGuardDepth {
		return false, fmt.Errorf("%w: nested deeper than %d (reference cycle?)", ErrInvalidGuard, maxGuardDepth)
	}
	if g == nil {
		return false, fmt.Errorf("%w: nil guard", ErrInvalidGuard)
	}
	switch guardForm(g) {
	case formRef:
		return evalNamed(def, g.Ref, ctx, depth)
	case formAll:
		for _, c := range g.All {
			ok, err := evalGuard(def, c, ctx, depth+1)
			if err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	case formAny:
		for _, c := range g.Any {
			ok, err := evalGuard(def, c, ctx, depth+1)
			if err != nil {
				return false, err
			}
			if ok {
				return true, nil
			}
		}
		return false, nil
	case formNot:
		ok, err := evalGuard(def, g.Not, ctx, depth+1)
		return !ok && err == nil, err
	case formLeaf:
		actual, present := lookup(ctx, g.Field)
		return compare(g.Op, g.Value, actual, present)
	case formMany:
		return false, fmt.Errorf("%w: a guard must set exactly one of field/op, all, any, not or a reference", ErrInvalidGuard)
	default:
		return false, fmt.Errorf("%w: empty guard", ErrInvalidGuard)
	}
}

type form int

const (
	formNone form = iota
	formLeaf
	formAll
	formAny
	formNot
	formRef
	formMany
)

func guardForm(g *workflow.Guard) form {
	f, n := formNone, 0
	if g.Op != "" || g.Field != "" {
		f, n = formLeaf, n+1
	}
	if g.All != nil {
		f, n = formAll, n+1
	}
	if g.Any != nil {
		f, n = formAny, n+1
	}
	if g.Not != nil {
		f, n = formNot, n+1
	}
	if g.Ref != "" {
		f, n = formRef, n+1
	}
	if n > 1 {
		return formMany
	}
	return f
}

// explain re-walks a guard known to evaluate false (without error) and
// describes why. It is only called on the failure path.
func explain(def *workflow.Definition, g *workflow.Guard, ctx map[string]any, depth int, name string) Verdict {
	switch guardForm(g) {
	case formRef:
		return explain(def, def.Guards[g.Ref], ctx, depth+1, g.Ref)
	case formAll:
		for _, c := range g.All {
			if ok, _ := evalGuard(def, c, ctx, depth+1); !ok {
				return explain(def, c, ctx, depth+1, name)
			}
		}
	case formAny:
		if len(g.Any) == 0 {
			return Verdict{Guard: name, Reason: "any: no alternatives"}
		}
		v := explain(def, g.Any[0], ctx, depth+1, name)
		parts := []string{v.Reason}
		for _, c := range g.Any[1:] {
			parts = append(parts, explain(def, c, ctx, depth+1, name).Reason)
		}
		v.Reason = "none of the alternatives holds: " + strings.Join(parts, " | ")
		return v
	case formNot:
		v := describeHolds(def, g.Not, ctx, depth+1, name)
		v.OK = false
		v.Reason = "not: " + v.Reason
		return v
	case formLeaf:
		actual, present := lookup(ctx, g.Field)
		return Verdict{Guard: name, Field: g.Field, Op: g.Op, Value: g.Value, Actual: actual, Present: present,
			Reason: leafReason(g, actual, present, false)}
	}
	return Verdict{Guard: name, Reason: "guard is false"}
}

// describeHolds explains why a guard evaluated true (used under "not").
func describeHolds(def *workflow.Definition, g *workflow.Guard, ctx map[string]any, depth int, name string) Verdict {
	switch guardForm(g) {
	case formRef:
		return describeHolds(def, def.Guards[g.Ref], ctx, depth+1, g.Ref)
	case formLeaf:
		actual, present := lookup(ctx, g.Field)
		return Verdict{Guard: name, Field: g.Field, Op: g.Op, Value: g.Value, Actual: actual, Present: present,
			Reason: leafReason(g, actual, present, true)}
	case formAny:
		for _, c := range g.Any {
			if ok, _ := evalGuard(def, c, ctx, depth+1); ok {
				return describeHolds(def, c, ctx, depth+1, name)
			}
		}
	case formAll:
		if len(g.All) > 0 {
			v := describeHolds(def, g.All[0], ctx, depth+1, name)
			v.Reason = "all hold, e.g. " + v.Reason
			return v
		}
	case formNot:
		v := explain(def, g.Not, ctx, depth+1, name)
		v.Reason = "not: " + v.Reason
		return v
	}
	return Verdict{Guard: name, Reason: "guard holds"}
}

func leafReason(g *workflow.Guard, actual any, present, holds bool) string {
	var have string
	if present {
		have = fmt.Sprintf("%s is %s", g.Field, render(actual))
	} else {
		have = g.Field + " is missing"
	}
	var want string
	switch g.Op {
	case workflow.OpExists, workflow.OpNotExists:
		want = string(g.Op)
	default:
		want = fmt.Sprintf("%s %s", g.Op, render(g.Value))
	}
	if holds {
		return fmt.Sprintf("%s, which satisfies %s", have, want)
	}
	return fmt.Sprintf("%s, want %s", have, want)
}

func render(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	const max = 80
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}

// lookup resolves a field in ctx. A field that exists verbatim as a
// top-level key wins (statewright compatibility: keys were never split);
// otherwise the field is a dotted path through nested objects, where a
// segment that is a non-negative integer also indexes an array.
func lookup(ctx map[string]any, field string) (any, bool) {
	if ctx == nil || field == "" {
		return nil, false
	}
	if v, ok := ctx[field]; ok {
		return v, true
	}
	var cur any = ctx
	rest := field
	for {
		seg := rest
		i := strings.IndexByte(rest, '.')
		if i >= 0 {
			seg, rest = rest[:i], rest[i+1:]
		}
		if seg == "" {
			return nil, false
		}
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[seg]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			n, err := strconv.Atoi(seg)
			if err != nil || n < 0 || n >= len(c) {
				return nil, false
			}
			cur = c[n]
		case []string:
			n, err := strconv.Atoi(seg)
			if err != nil || n < 0 || n >= len(c) {
				return nil, false
			}
			cur = c[n]
		default:
			return nil, false
		}
		if i < 0 {
			return cur, true
		}
	}
}

// compare applies one operator. present=false means the field is missing.
func compare(op workflow.GuardOp, value, actual any, present bool) (bool, error) {
	switch op {
	case workflow.OpExists:
		return present && actual != nil, nil
	case workflow.OpNotExists:
		return !present || actual == nil, nil
	case workflow.OpEq:
		return present && equal(actual, value), nil
	case workflow.OpNeq:
		// Deviation (reference §9.7): neq is the exact negation of eq, so a
		// missing field is "not equal" to anything.
		return !present || !equal(actual, value), nil
	case workflow.OpGt, workflow.OpGte, workflow.OpLt, workflow.OpLte:
		if !present {
			return false, nil
		}
		a, ok1 := toNum(actual)
		b, ok2 := toNum(value)
		if !ok1 || !ok2 {
			return false, nil
		}
		c, ok := cmpNum(a, b)
		if !ok {
			return false, nil
		}
		switch op {
		case workflow.OpGt:
			return c > 0, nil
		case workflow.OpGte:
			return c >= 0, nil
		case workflow.OpLt:
			return c < 0, nil
		default:
			return c <= 0, nil
		}
	case workflow.OpIn:
		if !present {
			return false, nil
		}
		return listContains(value, actual), nil
	case workflow.OpContains:
		if !present {
			return false, nil
		}
		if s, ok := actual.(string); ok {
			sub, ok := value.(string)
			return ok && strings.Contains(s, sub), nil
		}
		// Extension: an array field contains an element equal to value.
		return listContains(actual, value), nil
	case workflow.OpMatches:
		pat, ok := value.(string)
		if !ok {
			return false, fmt.Errorf("%w: matches needs a string pattern, got %s", ErrInvalidGuard, render(value))
		}
		re, err := compileRegexp(pat)
		if err != nil {
			return false, err
		}
		s, ok := actual.(string)
		return present && ok && re.MatchString(s), nil
	default:
		return false, fmt.Errorf("%w: unknown operator %q", ErrInvalidGuard, string(op))
	}
}

// listContains reports whether list (an array) has an element equal to v.
func listContains(list, v any) bool {
	switch l := list.(type) {
	case []any:
		for _, e := range l {
			if equal(e, v) {
				return true
			}
		}
	case []string:
		s, ok := v.(string)
		if !ok {
			return false
		}
		for _, e := range l {
			if e == s {
				return true
			}
		}
	}
	return false
}

// num is a number from a context or a guard value.
type num struct {
	i     int64
	f     float64
	isInt bool
}

func toNum(v any) (num, bool) {
	switch n := v.(type) {
	case int64:
		return num{i: n, isInt: true}, true
	case float64:
		return num{f: n}, true
	case int:
		return num{i: int64(n), isInt: true}, true
	case int32:
		return num{i: int64(n), isInt: true}, true
	case int16:
		return num{i: int64(n), isInt: true}, true
	case int8:
		return num{i: int64(n), isInt: true}, true
	case uint8:
		return num{i: int64(n), isInt: true}, true
	case uint16:
		return num{i: int64(n), isInt: true}, true
	case uint32:
		return num{i: int64(n), isInt: true}, true
	case uint:
		if uint64(n) <= math.MaxInt64 {
			return num{i: int64(n), isInt: true}, true
		}
		return num{f: float64(n)}, true
	case uint64:
		if n <= math.MaxInt64 {
			return num{i: int64(n), isInt: true}, true
		}
		return num{f: float64(n)}, true
	case float32:
		return num{f: float64(n)}, true
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return num{i: i, isInt: true}, true
		}
		if f, err := n.Float64(); err == nil {
			return num{f: f}, true
		}
	}
	return num{}, false
}

// cmpNum compares two numbers by value: -1, 0 or +1. ok is false when
// either is NaN. Integers compare exactly, also against integral floats.
func cmpNum(a, b num) (int, bool) {
	switch {
	case a.isInt && b.isInt:
		return cmpOrdered(a.i, b.i), true
	case !a.isInt && !b.isInt:
		if math.IsNaN(a.f) || math.IsNaN(b.f) {
			return 0, false
		}
		return cmpOrdered(a.f, b.f), true
	case a.isInt:
		c, ok := cmpIntFloat(a.i, b.f)
		return c, ok
	default:
		c, ok := cmpIntFloat(b.i, a.f)
		return -c, ok
	}
}

func cmpIntFloat(i int64, f float64) (int, bool) {
	if math.IsNaN(f) {
		return 0, false
	}
	// 2^63 as a float: integral floats in [-2^63, 2^63) convert exactly.
	const two63 = 9223372036854775808.0
	if f >= two63 {
		return -1, true
	}
	if f < -two63 {
		return 1, true
	}
	if t := math.Trunc(f); t == f {
		return cmpOrdered(i, int64(f)), true
	}
	// f is not integral, so |f| < 2^52 and comparing against its floor is exact.
	fl := int64(math.Floor(f))
	if i <= fl {
		return -1, true
	}
	return 1, true
}

func cmpOrdered[T int64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// equal is deep equality with numbers compared by value (1 == 1.0).
func equal(a, b any) bool {
	if na, ok := toNum(a); ok {
		nb, ok := toNum(b)
		if !ok {
			return false
		}
		c, ok := cmpNum(na, nb)
		return ok && c == 0
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case []any:
		switch y := b.(type) {
		case []any:
			if len(x) != len(y) {
				return false
			}
			for i := range x {
				if !equal(x[i], y[i]) {
					return false
				}
			}
			return true
		case []string:
			return equal(b, a)
		}
		return false
	case []string:
		switch y := b.(type) {
		case []string:
			if len(x) != len(y) {
				return false
			}
			for i := range x {
				if x[i] != y[i] {
					return false
				}
			}
			return true
		case []any:
			if len(x) != len(y) {
				return false
			}
			for i := range x {
				if s, ok := y[i].(string); !ok || s != x[i] {
					return false
				}
			}
			return true
		}
		return false
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			if ys, ok := b.(map[string]string); ok {
				return equal(b, a) && len(ys) == len(x)
			}
			return false
		}
		if len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !equal(xv, yv) {
				return false
			}
		}
		return true
	case map[string]string:
		switch y := b.(type) {
		case map[string]string:
			return reflect.DeepEqual(x, y)
		case map[string]any:
			if len(x) != len(y) {
				return false
			}
			for k, xv := range x {
				s, ok := y[k].(string)
				if !ok || s != xv {
					return false
				}
			}
			return true
		}
		return false
	}
	if _, ok := toNum(b); ok {
		return false
	}
	return reflect.DeepEqual(a, b)
}

// regexpCache holds compiled "matches" patterns. It is safe for concurrent
// use; it stops growing at regexpCacheMax entries (later patterns are
// compiled on every use) so hostile definitions cannot exhaust memory.
var (
	regexpCache     sync.Map // string → regexpEntry
	regexpCacheSize atomic.Int64
)

const regexpCacheMax = 4096

type regexpEntry struct {
	re  *regexp.Regexp
	err error
}

func compileRegexp(pat string) (*regexp.Regexp, error) {
	if e, ok := regexpCache.Load(pat); ok {
		re := e.(regexpEntry)
		return re.re, re.err
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		err = fmt.Errorf("%w: bad matches pattern: %v", ErrInvalidGuard, err)
	}
	if regexpCacheSize.Load() < regexpCacheMax {
		if _, loaded := regexpCache.LoadOrStore(pat, regexpEntry{re, err}); !loaded {
			regexpCacheSize.Add(1)
		}
	}
	return re, err
}
