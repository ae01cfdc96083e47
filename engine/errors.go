package engine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/statewright-go/statewright/workflow"
)

// Sentinel errors. Every error returned by this package is either one of
// these or a *TransitionError whose Kind is one of these, so callers test
// with errors.Is(err, engine.ErrGuardFailed) and friends.
var (
	// ErrStateNotFound: the current state, or a transition's resolved
	// target, is not a state of the definition.
	ErrStateNotFound = errors.New("state not found")
	// ErrNoTransition: no event of the state matched and the state has no
	// safe_next. The error lists the valid events.
	ErrNoTransition = errors.New("no transition")
	// ErrAmbiguousEvent: a fuzzy matching tier found several candidate
	// events. The error lists them; safe_next is never used in this case.
	ErrAmbiguousEvent = errors.New("ambiguous event")
	// ErrGuardFailed: a guard evaluated false (or no branch of a guarded
	// transition passed). The error names the guard and says why.
	ErrGuardFailed = errors.New("guard failed")
	// ErrUnknownGuard: a transition or a guard combinator names a guard the
	// definition does not define. statewright let such transitions pass;
	// the engine refuses them.
	ErrUnknownGuard = errors.New("unknown guard")
	// ErrInvalidGuard: a guard cannot be evaluated: unknown operator, a
	// "matches" value that is not a valid RE2 expression, an empty guard, or
	// a reference cycle.
	ErrInvalidGuard = errors.New("invalid guard")
	// ErrNoReturnAddress: a $return target was taken with an empty history
	// stack.
	ErrNoReturnAddress = errors.New("no return address")
	// ErrFinalState: the run is in a final state; nothing leaves it.
	ErrFinalState = errors.New("final state")
	// ErrUnknownInterrupt: INTERRUPT:<name> names no interrupt.
	ErrUnknownInterrupt = errors.New("unknown interrupt")
	// ErrInterruptActive: the interrupt already has a frame on the history
	// stack (or the run is already in its target state); it does not re-fire.
	ErrInterruptActive = errors.New("interrupt already active")
)

// TransitionError is the error Step and Interrupt return. Kind is one of the
// sentinel errors above; errors.Is(err, Kind) reports true.
type TransitionError struct {
	// Kind is the sentinel this error is an instance of.
	Kind error
	// State is the state the run was in.
	State string
	// Event is the event as the caller sent it.
	Event string
	// Target is the state involved, when there is one (a missing target, a
	// final state, an interrupt's target).
	Target string
	// Match is the tier at which an ambiguous event was found.
	Match MatchKind
	// Candidates lists the matching events (ErrAmbiguousEvent) or the valid
	// events of the state (ErrNoTransition), sorted.
	Candidates []string
	// Guard names the guard that failed or is unknown; for a guarded
	// transition in which no branch passed it is "no matching branch".
	Guard string
	// Verdicts explains a guard failure: the failing comparison of a Full
	// transition, or one per branch of a guarded transition.
	Verdicts []Verdict
	// Interrupt names the interrupt involved (interrupt errors).
	Interrupt string
	// Detail is extra human text.
	Detail string
	// Err is an underlying error (for example a guard evaluation error).
	Err error
}

// Is reports whether target is e's Kind, so errors.Is works with the sentinels.
func (e *TransitionError) Is(target error) bool { return target == e.Kind }

// Unwrap returns the underlying error, if any.
func (e *TransitionError) Unwrap() error { return e.Err }

// Error renders a message written for the agent: what happened and what to
// do instead.
func (e *TransitionError) Error() string {
	var b strings.Builder
	switch e.Kind {
	case ErrStateNotFound:
		if e.Target != "" {
			fmt.Fprintf(&b, "state '%s' not found in definition (target of event '%s' in state '%s')", e.Target, e.Event, e.State)
		} else {
			fmt.Fprintf(&b, "state '%s' not found in definition", e.State)
		}
	case ErrNoTransition:
		if e.Event == "" {
			fmt.Fprintf(&b, "no event given in state '%s'", e.State)
		} else {
			fmt.Fprintf(&b, "no transition for event '%s' in state '%s'", e.Event, e.State)
		}
		if len(e.Candidates) == 0 {
			b.WriteString("; the state has no events")
		} else {
			if s := workflow.Suggest(e.Event, e.Candidates); s != "" && e.Event != "" {
				fmt.Fprintf(&b, " (did you mean '%s'?)", s)
			}
			fmt.Fprintf(&b, "; valid events: %s", strings.Join(e.Candidates, ", "))
		}
	case ErrAmbiguousEvent:
		fmt.Fprintf(&b, "event '%s' is ambiguous in state '%s' (%s match): candidates %s; send one of them exactly",
			e.Event, e.State, e.Match, strings.Join(e.Candidates, ", "))
	case ErrGuardFailed:
		fmt.Fprintf(&b, "event '%s' in state '%s' is blocked: guard '%s' failed", e.Event, e.State, e.Guard)
		for i, v := range e.Verdicts {
			if i == 0 {
				b.WriteString(": ")
			} else {
				b.WriteString("; ")
			}
			b.WriteString(v.Reason)
		}
	case ErrUnknownGuard:
		if e.Err != nil { // the named guard exists but refers to an undefined one
			fmt.Fprintf(&b, "event '%s' in state '%s': guard '%s' cannot be evaluated", e.Event, e.State, e.Guard)
		} else {
			fmt.Fprintf(&b, "event '%s' in state '%s' names undefined guard '%s'", e.Event, e.State, e.Guard)
		}
	case ErrInvalidGuard:
		fmt.Fprintf(&b, "event '%s' in state '%s': guard '%s' cannot be evaluated", e.Event, e.State, e.Guard)
	case ErrNoReturnAddress:
		fmt.Fprintf(&b, "event '%s' in state '%s' leads to %s but no interrupt is active (empty history)", e.Event, e.State, workflow.ReturnTarget)
	case ErrFinalState:
		fmt.Fprintf(&b, "state '%s' is final: no transitions leave it", e.State)
	case ErrUnknownInterrupt:
		fmt.Fprintf(&b, "unknown interrupt '%s'", e.Interrupt)
	case ErrInterruptActive:
		fmt.Fprintf(&b, "interrupt '%s' is already active (state '%s')", e.Interrupt, e.State)
	default:
		fmt.Fprintf(&b, "%v in state '%s'", e.Kind, e.State)
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}
