package engine

import (
	"strings"

	"github.com/statewright-go/statewright/workflow"
)

// Finish is the outcome of an invoke or fork transition once its child
// work has ended: the run moves from snap.State to target (the
// transition's on_complete or on_fail; $return pops the interrupt stack as
// a plain transition would). Step reported the transition as Deferred;
// the caller ran the child work and now lands the run. Context is
// snap.Context; Event labels the outcome.
func Finish(def *workflow.Definition, snap Snapshot, event, target string) (Outcome, error) {
	to, hist, err := resolveTarget(target, snap.History)
	if err != nil {
		err.(*TransitionError).State, err.(*TransitionError).Event = snap.State, event
		return Outcome{}, err
	}
	st := def.States[to]
	if st == nil {
		return Outcome{}, &TransitionError{Kind: ErrStateNotFound, State: snap.State, Event: event, Target: to}
	}
	out := Outcome{From: snap.State, To: to, Event: event, Match: MatchExact, Context: snap.Context, Final: st.IsFinal()}
	out.History = unwind(hist, to, out.Final)
	return out, nil
}

// FailureStates are the state names that end a run as failed, besides
// those a workflow lists in meta.failure_states.
var FailureStates = []string{"failed", "failure", "fail", "error", "aborted", "abandoned", "cancelled", "canceled"}

// IsFailureState reports whether reaching state means the workflow failed:
// the state is listed in the definition's meta.failure_states, or its
// name is one of FailureStates, compared case-insensitively. An invoked sub-workflow that ends in a failure state
// sends its parent to on_fail; one that ends in any other final state, to
// on_complete.
func IsFailureState(def *workflow.Definition, state string) bool {
	if def != nil && def.Meta != nil {
		if fs, ok := def.Meta.Extra["failure_states"].([]any); ok {
			for _, f := range fs {
				if s, _ := f.(string); s == state {
					return true
				}
			}
		}
	}
	for _, f := range FailureStates {
		if strings.EqualFold(f, state) {
			return true
		}
	}
	return false
}
