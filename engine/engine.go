// Package engine gives workflow definitions their meaning: it resolves an
// event in a state (exact, case-insensitive, target name, unique substring,
// safe_next), evaluates guards, fires interrupts onto a history stack and
// pops it with $return, and describes approvals, invokes and forks as
// values. It is pure: no I/O, no clock, no global mutable state beyond a
// concurrency-safe cache of compiled regular expressions.
//
// See docs/engine.md for the semantics and every deviation from statewright.
package engine

import (
	"errors"
	"slices"
	"strings"

	"github.com/statewright-go/statewright/workflow"
)

// Frame is one entry of the interrupt history stack: the state to go back to
// on $return and the interrupt that pushed it.
type Frame struct {
	// Return is the state the run was in when the interrupt fired.
	Return string `json:"return"`
	// Interrupt is the name of the interrupt that fired.
	Interrupt string `json:"interrupt"`
}

// Snapshot is the part of a run the engine reads: where it is and what it knows.
type Snapshot struct {
	// State is the current state name.
	State string `json:"state"`
	// Context is the guard context (definition context ⊕ accepted event data ⊕ runtime evidence).
	Context map[string]any `json:"context,omitempty"`
	// History is the interrupt return stack, innermost last.
	History []Frame `json:"history,omitempty"`
}

// MatchKind says how an event name was matched to a transition.
type MatchKind string

// Match kinds, in the order they are tried.
const (
	MatchExact           MatchKind = "exact"
	MatchCaseInsensitive MatchKind = "case_insensitive"
	MatchTargetName      MatchKind = "target_name"
	MatchSubstring       MatchKind = "substring"
	MatchSafeNext        MatchKind = "safe_next"
	// MatchInterrupt marks an outcome produced by firing an interrupt.
	MatchInterrupt MatchKind = "interrupt"
)

// InterruptEventPrefix, followed by an interrupt's name, is the event that
// fires that interrupt through Step.
const InterruptEventPrefix = "INTERRUPT:"

// InterruptName reports whether event fires an interrupt, and which: the
// prefix InterruptEventPrefix is matched case-insensitively, like event
// names themselves, so "interrupt:x" is the same event as "INTERRUPT:x".
// Every place that treats interrupt events specially (Step, the runtime's
// refusal of agents, the CLI's confirmation) asks this function.
func InterruptName(event string) (string, bool) {
	n := len(InterruptEventPrefix)
	if len(event) < n || !strings.EqualFold(event[:n], InterruptEventPrefix) {
		return "", false
	}
	return event[n:], true
}

// MinSubstringLen is the shortest event (in runes) the substring tier
// considers; shorter events match only exactly, case-insensitively or by
// target name.
const MinSubstringLen = 3

// Outcome is the result of stepping a run with an event.
type Outcome struct {
	// From is the state the run was in.
	From string `json:"from"`
	// To is the state the run moves to. For an invoke or fork it is the
	// on_complete state: see Deferred.
	To string `json:"to"`
	// Event is the event key that matched ("" for safe_next; INTERRUPT:<name>
	// for an interrupt).
	Event string `json:"event"`
	// Match says how the event was matched.
	Match MatchKind `json:"match"`
	// Context is the context after the step. It may share nested values with
	// the snapshot's context; treat both as read-only.
	Context map[string]any `json:"context,omitempty"`
	// History is the interrupt stack once the run is in To (for a deferred
	// invoke or fork: once it moves to on_complete). It never aliases spare
	// capacity of the snapshot's history, so appending to it is safe.
	History []Frame `json:"history,omitempty"`
	// RequiresApproval means the caller must park the run in From until a
	// human approves; then it moves to To.
	RequiresApproval bool `json:"requires_approval,omitempty"`
	// ApprovalMessage is shown to the approver (Full transitions only).
	ApprovalMessage string `json:"approval_message,omitempty"`
	// Invoke and Fork describe sub-machine and parallel work to be run by the caller.
	Invoke *workflow.Invoke `json:"invoke,omitempty"`
	Fork   *workflow.Fork   `json:"fork,omitempty"`
	// Deferred is set for invokes and forks: the caller must keep the run in
	// From until the child machine or the branches finish, then move to To
	// (on_complete) or to the descriptor's on_fail.
	Deferred bool `json:"deferred,omitempty"`
	// Interrupt names the interrupt that fired (Match == MatchInterrupt).
	Interrupt string `json:"interrupt,omitempty"`
	// Final reports whether To is a final state.
	Final bool `json:"final"`
}

// Step resolves event in snap.State and returns the outcome. data is event
// data supplied by the agent: it lands under "data" in the context and can
// only satisfy guards that name data.* explicitly (unless the definition sets
// TrustEventData). Step does not mutate its arguments.
//
// Resolution order: INTERRUPT:<name> fires that interrupt; otherwise the
// event is matched exactly, then case-insensitively, then as the name of a
// target state, then as a substring (at least MinSubstringLen runes) of one
// event key; each tier must be unambiguous (ErrAmbiguousEvent). Only when no
// tier matched does safe_next apply; otherwise ErrNoTransition lists the
// valid events. An empty event never matches.
func Step(def *workflow.Definition, snap Snapshot, event string, data map[string]any) (Outcome, error) {
	st := def.States[snap.State]
	if st == nil {
		return Outcome{}, &TransitionError{Kind: ErrStateNotFound, State: snap.State, Event: event}
	}
	if st.IsFinal() {
		return Outcome{}, &TransitionError{Kind: ErrFinalState, State: snap.State, Event: event}
	}
	if name, ok := InterruptName(event); ok {
		out, err := fire(def, snap, name)
		if err != nil {
			return Outcome{}, err
		}
		if !def.TrustEventData {
			out.Context = withEventData(snap.Context, data)
		} else {
			out.Context = trustMerge(snap.Context, data)
		}
		return out, nil
	}

	key, tr, kind, err := resolveEvent(st, snap.State, event)
	if err != nil {
		return Outcome{}, err
	}

	// The context guards see, and the context after the step.
	guardCtx, newCtx := snap.Context, snap.Context
	if def.TrustEventData {
		newCtx = trustMerge(snap.Context, data)
	} else {
		guardCtx = withEventData(snap.Context, data)
		newCtx = guardCtx
	}

	out := Outcome{From: snap.State, Event: key, Match: kind, Context: newCtx}
	var raw string
	if tr == nil { // safe_next
		raw = st.SafeNext
	} else {
		raw, err = evalTransition(def, snap.State, event, tr, guardCtx, &out)
		if err != nil {
			return Outcome{}, err
		}
		// The agent named a state: a guarded event whose passing branch
		// leads elsewhere must not silently take the run there.
		if kind == MatchTargetName && tr.Kind == workflow.TransitionGuarded && !strings.EqualFold(raw, strings.TrimSpace(event)) {
			return Outcome{}, &TransitionError{Kind: ErrGuardFailed, State: snap.State, Event: event, Guard: "no matching branch",
				Detail: "event '" + key + "' reaches '" + strings.TrimSpace(event) + "' only through a branch whose guards do not pass now (the first passing branch leads to '" + raw + "')"}
		}
	}
	to, hist, err := resolveTarget(raw, snap.History)
	if err != nil {
		err.(*TransitionError).State, err.(*TransitionError).Event = snap.State, event
		return Outcome{}, err
	}
	target := def.States[to]
	if target == nil {
		return Outcome{}, &TransitionError{Kind: ErrStateNotFound, State: snap.State, Event: event, Target: to}
	}
	out.To = to
	out.Final = target.IsFinal()
	out.History = unwind(hist, to, out.Final)
	return out, nil
}

// evalTransition checks the guards of tr and fills the outcome's approval,
// invoke and fork fields. It returns the raw target (possibly $return).
func evalTransition(def *workflow.Definition, state, event string, tr *workflow.Transition, ctx map[string]any, out *Outcome) (string, error) {
	switch tr.Kind {
	case workflow.TransitionSimple:
		return tr.Target, nil
	case workflow.TransitionFull:
		if tr.Guard != "" {
			if err := checkGuard(def, state, event, tr.Guard, ctx); err != nil {
				return "", err
			}
		}
		for _, g := range tr.Guards {
			if err := checkGuard(def, state, event, g, ctx); err != nil {
				return "", err
			}
		}
		out.RequiresApproval = tr.RequiresApproval
		out.ApprovalMessage = tr.ApprovalMessage
		return tr.Target, nil
	case workflow.TransitionGuarded:
		var verdicts []Verdict
		for _, b := range tr.Branches {
			passed := true
			for _, g := range b.GuardNames() {
				err := checkGuard(def, state, event, g, ctx)
				if err == nil {
					continue
				}
				te := err.(*TransitionError)
				if te.Kind != ErrGuardFailed {
					return "", err
				}
				v := te.Verdicts[0]
				v.Reason = "branch → " + b.Target + ": guard '" + g + "': " + v.Reason
				verdicts = append(verdicts, v)
				passed = false
				break
			}
			if passed {
				return b.Target, nil
			}
		}
		return "", &TransitionError{Kind: ErrGuardFailed, State: state, Event: event, Guard: "no matching branch", Verdicts: verdicts}
	case workflow.TransitionFork:
		if tr.Fork == nil {
			return "", &TransitionError{Kind: ErrNoTransition, State: state, Event: event, Detail: "fork transition without a fork description"}
		}
		out.Fork = tr.Fork
		out.Deferred = true
		return tr.Fork.OnComplete, nil
	case workflow.TransitionInvoke:
		if tr.Invoke == nil {
			return "", &TransitionError{Kind: ErrNoTransition, State: state, Event: event, Detail: "invoke transition without an invoke description"}
		}
		out.Invoke = tr.Invoke
		out.Deferred = true
		return tr.Invoke.OnComplete, nil
	}
	return "", &TransitionError{Kind: ErrNoTransition, State: state, Event: event, Detail: "unknown transition kind"}
}

// checkGuard evaluates the named guard for a transition and converts a
// false result or an evaluation error into a *TransitionError.
func checkGuard(def *workflow.Definition, state, event, name string, ctx map[string]any) error {
	g := def.Guards[name]
	if g == nil {
		return &TransitionError{Kind: ErrUnknownGuard, State: state, Event: event, Guard: name}
	}
	ok, err := evalGuard(def, g, ctx, 0)
	if err != nil {
		kind := ErrInvalidGuard
		if isUnknownGuard(err) {
			kind = ErrUnknownGuard
		}
		return &TransitionError{Kind: kind, State: state, Event: event, Guard: name, Err: err}
	}
	if ok {
		return nil
	}
	v := explain(def, g, ctx, 0, name)
	return &TransitionError{Kind: ErrGuardFailed, State: state, Event: event, Guard: name, Verdicts: []Verdict{v}}
}

func isUnknownGuard(err error) bool { return errors.Is(err, ErrUnknownGuard) }

// resolveTarget turns a raw target into a state name, popping the history
// stack for $return. The returned history never shares spare capacity with
// hist.
func resolveTarget(raw string, hist []Frame) (string, []Frame, error) {
	if raw != workflow.ReturnTarget {
		return raw, hist, nil
	}
	if len(hist) == 0 {
		return "", nil, &TransitionError{Kind: ErrNoReturnAddress}
	}
	top := hist[len(hist)-1]
	return top.Return, slices.Clip(hist[:len(hist)-1]), nil
}

// unwind applies the history rules after a move to state to: a final state
// clears the stack; reaching the return state of a frame (by any
// transition) unwinds that frame and every frame above it.
func unwind(hist []Frame, to string, final bool) []Frame {
	if final {
		return nil
	}
	for i, f := range hist {
		if f.Return == to {
			if i == 0 {
				return nil
			}
			return slices.Clip(hist[:i])
		}
	}
	if len(hist) == 0 {
		return nil
	}
	return hist
}

// LimitReached reports whether a state's max_iterations is reached after
// iterations counted calls: the policy denies further calls (except
// transitions) once it is true. A state without a limit never reaches it; a
// limit of 0 is reached immediately.
func LimitReached(st *workflow.State, iterations int) bool {
	limit, ok := Limit(st)
	return ok && int64(iterations) >= limit
}

// Limit returns a state's max_iterations and whether it has one.
func Limit(st *workflow.State) (int64, bool) {
	if st == nil || st.MaxIterations == nil {
		return 0, false
	}
	return int64(*st.MaxIterations), true
}
