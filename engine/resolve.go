package engine

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/statewright-go/statewright/workflow"
)

// Resolution is how an event name resolves in a state, before guards.
type Resolution struct {
	// Event is the matched event key ("" for safe_next).
	Event string
	// Transition is the matched transition (nil for safe_next).
	Transition *workflow.Transition
	// Match says which tier matched.
	Match MatchKind
}

// Resolve matches event against the events of state without evaluating
// guards: exact, case-insensitive, target name, unique substring, then
// safe_next. See Step for the rules; errors are *TransitionError values of
// kind ErrStateNotFound, ErrFinalState, ErrAmbiguousEvent or ErrNoTransition.
func Resolve(def *workflow.Definition, state, event string) (Resolution, error) {
	st := def.States[state]
	if st == nil {
		return Resolution{}, &TransitionError{Kind: ErrStateNotFound, State: state, Event: event}
	}
	if st.IsFinal() {
		return Resolution{}, &TransitionError{Kind: ErrFinalState, State: state, Event: event}
	}
	key, tr, kind, err := resolveEvent(st, state, event)
	return Resolution{Event: key, Transition: tr, Match: kind}, err
}

// resolveEvent finds the transition for event in st. tr is nil when the
// result is safe_next.
func resolveEvent(st *workflow.State, state, event string) (key string, tr *workflow.Transition, kind MatchKind, err error) {
	if t, ok := st.On[event]; ok && event != "" {
		return event, t, MatchExact, nil
	}
	in := strings.TrimSpace(event)
	if in == "" {
		return "", nil, "", &TransitionError{Kind: ErrNoTransition, State: state, Event: event, Candidates: sortedEvents(st)}
	}
	if t, ok := st.On[in]; ok {
		return in, t, MatchExact, nil
	}

	// Tier 2: case-insensitive equality with an event key.
	var cands []string
	for k := range st.On {
		if strings.EqualFold(k, in) {
			cands = append(cands, k)
		}
	}
	if k, t, ok, err := pick(st, state, event, cands, MatchCaseInsensitive); ok || err != nil {
		return k, t, MatchCaseInsensitive, err
	}

	// Tier 3: the event names a state one event leads to.
	for k, t := range st.On {
		if leadsTo(t, in) {
			cands = append(cands, k)
		}
	}
	if k, t, ok, err := pick(st, state, event, cands, MatchTargetName); ok || err != nil {
		return k, t, MatchTargetName, err
	}

	// Tier 4: the event is a substring of exactly one event key.
	if utf8.RuneCountInString(in) >= MinSubstringLen {
		low := strings.ToLower(in)
		for k := range st.On {
			if containsFold(k, low) {
				cands = append(cands, k)
			}
		}
		if k, t, ok, err := pick(st, state, event, cands, MatchSubstring); ok || err != nil {
			return k, t, MatchSubstring, err
		}
	}

	// Tier 5: nothing matched at all.
	if st.SafeNext != "" {
		return "", nil, MatchSafeNext, nil
	}
	return "", nil, "", &TransitionError{Kind: ErrNoTransition, State: state, Event: event, Candidates: sortedEvents(st)}
}

// pick decides a tier: one candidate matches, several are ambiguous, none
// falls through.
func pick(st *workflow.State, state, event string, cands []string, tier MatchKind) (string, *workflow.Transition, bool, error) {
	switch len(cands) {
	case 0:
		return "", nil, false, nil
	case 1:
		return cands[0], st.On[cands[0]], true, nil
	}
	slices.Sort(cands)
	return "", nil, false, &TransitionError{Kind: ErrAmbiguousEvent, State: state, Event: event, Match: tier, Candidates: cands}
}

// leadsTo reports whether transition t may lead to the state named name
// (ASCII/Unicode case-insensitive): the target of a Simple or Full
// transition, any branch of a Guarded one, the on_complete of an invoke or
// fork.
func leadsTo(t *workflow.Transition, name string) bool {
	switch t.Kind {
	case workflow.TransitionGuarded:
		for _, b := range t.Branches {
			if strings.EqualFold(b.Target, name) {
				return true
			}
		}
		return false
	case workflow.TransitionFork:
		return t.Fork != nil && strings.EqualFold(t.Fork.OnComplete, name)
	case workflow.TransitionInvoke:
		return t.Invoke != nil && strings.EqualFold(t.Invoke.OnComplete, name)
	default:
		return strings.EqualFold(t.Target, name)
	}
}

func sortedEvents(st *workflow.State) []string {
	out := make([]string, 0, len(st.On))
	for k := range st.On {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// EventInfo describes one event of a state, for deny messages and get_state.
type EventInfo struct {
	// Event is the event key.
	Event string `json:"event"`
	// Kind is the transition's shape.
	Kind workflow.TransitionKind `json:"kind"`
	// Target is the primary target (first branch, on_complete for invoke
	// and fork; may be $return).
	Target string `json:"target"`
	// Targets lists every state the event may lead to.
	Targets []string `json:"targets,omitempty"`
	// Guards lists the guard names involved, without repeats (every
	// branch's for Guarded).
	Guards []string `json:"guards,omitempty"`
	// Guarded reports whether the event is subject to guards.
	Guarded bool `json:"guarded"`
	// RequiresApproval reports whether a human must approve it.
	RequiresApproval bool `json:"requires_approval"`
	// Deferred reports an invoke or fork (the run waits for child work).
	Deferred bool `json:"deferred"`
}

// String renders the event for people and agents:
// "EVENT → target (guarded, needs a person's approval)".
func (e EventInfo) String() string {
	s := e.Event + " → " + e.Target
	switch {
	case e.Guarded && e.RequiresApproval:
		s += " (guarded, needs a person's approval)"
	case e.Guarded:
		s += " (guarded)"
	case e.RequiresApproval:
		s += " (needs a person's approval)"
	}
	return s
}

// NextEvents lists the events of a state sorted by name; nil for an unknown
// or final state.
func NextEvents(def *workflow.Definition, state string) []EventInfo {
	st := def.States[state]
	if st == nil || st.IsFinal() || len(st.On) == 0 {
		return nil
	}
	out := make([]EventInfo, 0, len(st.On))
	for _, k := range sortedEvents(st) {
		t := st.On[k]
		info := EventInfo{Event: k, Kind: t.Kind}
		switch t.Kind {
		case workflow.TransitionGuarded:
			for _, b := range t.Branches {
				for _, g := range b.GuardNames() {
					if !slices.Contains(info.Guards, g) {
						info.Guards = append(info.Guards, g)
					}
				}
			}
			info.Guarded = true // an empty array never passes
		case workflow.TransitionFull:
			info.Guards = t.GuardNames()
			info.Guarded = len(info.Guards) > 0
			info.RequiresApproval = t.RequiresApproval
		case workflow.TransitionFork, workflow.TransitionInvoke:
			info.Deferred = true
		}
		if t.Kind == workflow.TransitionFork && t.Fork == nil || t.Kind == workflow.TransitionInvoke && t.Invoke == nil {
			out = append(out, info)
			continue
		}
		info.Target = t.PrimaryTarget()
		info.Targets = t.Targets()
		out = append(out, info)
	}
	return out
}

// containsFold reports whether lower(s) contains sub, which is already
// lower case. ASCII keys are compared without allocating.
func containsFold(s, sub string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return strings.Contains(strings.ToLower(s), sub)
		}
	}
	n := len(sub)
	for i := 0; i+n <= len(s); i++ {
		j := 0
		for ; j < n; j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != sub[j] {
				break
			}
		}
		if j == n {
			return true
		}
	}
	return false
}
