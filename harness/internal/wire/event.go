package wire

import (
	"fmt"
	"strings"
)

// Event is one hook event: its command-line spelling ("pre-tool-use") and
// the harness's own name for it ("PreToolUse").
type Event struct{ Arg, Name string }

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
