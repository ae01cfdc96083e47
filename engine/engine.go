// Package engine gives workflow definitions their meaning: it resolves an
// event in a state (exact, case-insensitive, target name, unique substring,
// safe_next), evaluates guards, fires interrupts onto a history stack and
// pops it with $return, and describes approvals, invokes and forks as
// values. It is pure: no I/O, no clock.
package engine

import "github.com/statewright-go/statewright/workflow"

// Snapshot is the part of a run the engine reads: where it is and what it knows.
type Snapshot struct {
	// State is the current state name.
	State string `json:"state"`
	// Context is the guard context (definition context ⊕ accepted event data ⊕ runtime evidence).
	Context map[string]any `json:"context,omitempty"`
	// History is the interrupt return stack, innermost last.
	History []string `json:"history,omitempty"`
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
)

// Outcome is the result of stepping a run with an event.
type Outcome struct {
	From  string    `json:"from"`
	To    string    `json:"to"`
	Event string    `json:"event"` // the event key that matched ("" for safe_next)
	Match MatchKind `json:"match"`
	// Context is the context after the step.
	Context map[string]any `json:"context,omitempty"`
	// History is the interrupt stack after the step.
	History []string `json:"history,omitempty"`
	// RequiresApproval means the caller must park the run until approved.
	RequiresApproval bool   `json:"requires_approval,omitempty"`
	ApprovalMessage  string `json:"approval_message,omitempty"`
	// Invoke and Fork describe sub-machine and parallel work to be run by the caller.
	Invoke *workflow.Invoke `json:"invoke,omitempty"`
	Fork   *workflow.Fork   `json:"fork,omitempty"`
	// Final reports whether To is a final state.
	Final bool `json:"final"`
}

// Step resolves event in snap.State and returns the outcome. data is event
// data supplied by the agent: it lands under "data" in the context and can only
// satisfy guards that name data.* explicitly (unless the definition sets
// TrustEventData). Step does not mutate its arguments.
func Step(def *workflow.Definition, snap Snapshot, event string, data map[string]any) (Outcome, error) {
	panic("engine.Step: not implemented yet")
}
