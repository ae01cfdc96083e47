package wire

import (
	"fmt"
	"strings"

	"github.com/statewright-go/statewright/harness"
)

// Event is one hook event: its command-line spelling ("pre-tool-use"), the
// harness's own name for it ("PreToolUse"), and, for the hook-output
// contract of Claude Code and Codex, how it fails closed (the zero kind, a
// tool gate, denies).
type Event struct {
	Arg, Name string
	Fail      FailureKind
}

// Events is a harness's list of events, in the order init registers them.
type Events []Event

// Args returns the command-line spellings.
func (es Events) Args() []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Arg
	}
	return out
}

// Arg returns the command-line spelling of the event named name ("" when
// there is none).
func (es Events) Arg(name string) string {
	for _, e := range es {
		if e.Name == name {
			return e.Arg
		}
	}
	return ""
}

// Parse accepts an event's command-line spelling or the harness's name
// and returns the harness's name. The error says which harness
// (prefix, "claude-code: ") and which events there are.
func (es Events) Parse(prefix, s string) (string, error) {
	for _, e := range es {
		if s == e.Arg || s == e.Name {
			return e.Name, nil
		}
	}
	return "", fmt.Errorf("%sunknown hook event %q (want one of %s)", prefix, s, strings.Join(es.Args(), ", "))
}

// Failure is the answer of the hook-output contract when the hook cannot
// do its job for the event named name (an unknown event denies, as a gate).
func (es Events) Failure(name, msg string) harness.Answer {
	kind := FailGate
	for _, e := range es {
		if e.Name == name {
			kind = e.Fail
		}
	}
	return Failure(kind, name, msg)
}

// Only returns the events named names, in es's order.
func (es Events) Only(names ...string) Events {
	var out Events
	for _, e := range es {
		for _, n := range names {
			if e.Name == n {
				out = append(out, e)
			}
		}
	}
	return out
}

// Decoded parses event and decodes input with an adapter's parse and
// decode. When either fails it returns the answer to give instead: the
// adapter's fail for the event (for an unknown event, the zero event,
// which adapters answer as their tool gate: a deny).
func Decoded[E ~string, I any](event string, input []byte, parse func(string) (E, error),
	decode func(E, []byte) (*I, error), fail func(E, string) harness.Answer) (E, *I, *harness.Answer) {
	ev, err := parse(event)
	if err != nil {
		a := fail("", err.Error())
		return ev, nil, &a
	}
	in, err := decode(ev, input)
	if err != nil {
		a := fail(ev, err.Error())
		return ev, nil, &a
	}
	return ev, in, nil
}
