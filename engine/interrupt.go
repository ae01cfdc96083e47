package engine

import (
	"cmp"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/statewright-go/statewright/workflow"
)

// Match is one interrupt whose trigger matches a path.
type Match struct {
	// Name is the interrupt's key in Definition.Interrupts.
	Name string
	// Interrupt is its definition.
	Interrupt *workflow.Interrupt
}

// GlobMatch reports whether path matches pattern in the doublestar dialect
// (path.Match plus "**"): "*" and "?" never cross "/", "**" spans whole
// path segments only ("**/test_*.py" matches "test_a.py" and
// "tests/test_a.py" but not "xtest_a.py"), "dir/**" matches "dir" itself,
// and classes, braces and backslash escapes are supported. Matching is
// case-sensitive and anchored at both ends. A malformed pattern matches
// nothing.
func GlobMatch(pattern, path string) bool {
	ok, err := doublestar.Match(pattern, path)
	return ok && err == nil
}

// MatchInterrupts returns every interrupt whose file pattern matches path,
// ordered by Priority (lower first) and then by name.
func MatchInterrupts(def *workflow.Definition, path string) []Match {
	var out []Match
	for name, in := range def.Interrupts {
		if in != nil && GlobMatch(in.Trigger.FilePattern, path) {
			out = append(out, Match{Name: name, Interrupt: in})
		}
	}
	slices.SortFunc(out, func(a, b Match) int {
		if c := cmp.Compare(a.Interrupt.Priority, b.Interrupt.Priority); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// Interrupt fires the interrupt called name: it pushes a frame (the current
// state and the interrupt's name) onto the history stack and moves to the
// interrupt's target. The snapshot's context is kept unchanged.
//
// It fails with ErrUnknownInterrupt for an unknown name, ErrFinalState in a
// final state (interrupts never fire there), ErrInterruptActive when the
// interrupt's own frame is already on the stack or the run is already in its
// target state (an interrupt does not re-fire; a different one nests), and
// ErrStateNotFound when the current state or the target does not exist.
func Interrupt(def *workflow.Definition, snap Snapshot, name string) (Outcome, error) {
	out, err := fire(def, snap, name)
	if err != nil {
		return Outcome{}, err
	}
	out.Context = snap.Context
	return out, nil
}

// InterruptOnEdit fires the first interrupt (in MatchInterrupts order) whose
// pattern matches the edited path and that may fire now: not already active
// and not targeting the current state. fired is false when none applies,
// also in a final state. An error means the definition or snapshot is
// broken (unknown current state, missing target).
func InterruptOnEdit(def *workflow.Definition, snap Snapshot, path string) (out Outcome, fired bool, err error) {
	st := def.States[snap.State]
	if st == nil {
		return Outcome{}, false, &TransitionError{Kind: ErrStateNotFound, State: snap.State}
	}
	if st.IsFinal() {
		return Outcome{}, false, nil
	}
	for _, m := range MatchInterrupts(def, path) {
		if active(snap, m.Name, m.Interrupt) {
			continue
		}
		out, err := Interrupt(def, snap, m.Name)
		if err != nil {
			return Outcome{}, false, err
		}
		return out, true, nil
	}
	return Outcome{}, false, nil
}

// Active reports whether interrupt name has a frame on the history stack.
func Active(history []Frame, name string) bool {
	for _, f := range history {
		if f.Interrupt == name {
			return true
		}
	}
	return false
}

func active(snap Snapshot, name string, in *workflow.Interrupt) bool {
	return Active(snap.History, name) || in.Target == snap.State
}

// fire implements Interrupt without touching the context.
func fire(def *workflow.Definition, snap Snapshot, name string) (Outcome, error) {
	event := InterruptEventPrefix + name
	st := def.States[snap.State]
	if st == nil {
		return Outcome{}, &TransitionError{Kind: ErrStateNotFound, State: snap.State, Event: event}
	}
	if st.IsFinal() {
		return Outcome{}, &TransitionError{Kind: ErrFinalState, State: snap.State, Event: event, Interrupt: name}
	}
	in := def.Interrupts[name]
	if in == nil {
		return Outcome{}, &TransitionError{Kind: ErrUnknownInterrupt, State: snap.State, Event: event, Interrupt: name}
	}
	if active(snap, name, in) {
		return Outcome{}, &TransitionError{Kind: ErrInterruptActive, State: snap.State, Event: event, Interrupt: name, Target: in.Target}
	}
	target := def.States[in.Target]
	if target == nil {
		return Outcome{}, &TransitionError{Kind: ErrStateNotFound, State: snap.State, Event: event, Target: in.Target}
	}
	out := Outcome{From: snap.State, To: in.Target, Event: event, Match: MatchInterrupt, Interrupt: name, Final: target.IsFinal()}
	if !out.Final {
		h := make([]Frame, len(snap.History), len(snap.History)+1)
		copy(h, snap.History)
		out.History = append(h, Frame{Return: snap.State, Interrupt: name})
	}
	return out, nil
}
