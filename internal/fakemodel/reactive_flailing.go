package fakemodel

import (
	"regexp"
	"strings"
)

// Oracle is what the simulated flailing model "knows" about one task of
// an eval suite: where the bug is, the targeted fix, and the sloppy
// whole-file rewrite it reaches for first (the fix plus a regression, as a
// model rewriting a file from memory produces).
type Oracle struct {
	// Task is the task text (or a unique part of it): the policy picks the
	// oracle whose Task the first user message contains.
	Task string `json:"task"`
	// File is the file with the bug, relative to the workspace.
	File string `json:"file"`
	// Old and New are the targeted fix (an exact edit).
	Old string `json:"old"`
	New string `json:"new"`
	// Rewrite is the whole file as the model rewrites it.
	Rewrite string `json:"rewrite"`
	// TestCommand is what it runs when it runs the tests ("" for the harness's default).
	TestCommand string `json:"test_command,omitempty"`
}

// The flailing model's tool vocabulary is statewright agent's.
const (
	flRead       = "read_file"
	flEdit       = "edit_file"
	flWrite      = "write_file"
	flTest       = "run_test"
	flTransition = "statewright_transition"
)

// flailingReads is how many times the model reads the buggy file (the same
// window) unless told to stop.
const flailingReads = 4

// Flailing returns a reactive policy (for [Script.Respond]) imitating a
// small model with bad habits, for the statewright agent runner's tools:
//
//   - read loops: it reads the buggy file, the same window, again and again,
//     and stops only when told (a nudge saying the next read is refused, or
//     a refusal);
//   - edits first: once it has read, it edits, whatever the phase;
//   - rewrites whole files: its edit is a write_file of the whole file
//     (Oracle.Rewrite: the fix plus a regression);
//   - skips tests: after editing it declares the work done by sending the
//     phase's forward event, without running the tests.
//
// It reacts to what it is told: a deny that names the phase's events leads
// it to take the forward one; a whole-file write denied where edit_file is
// offered makes it fall back to the targeted edit (Oracle.Old → New); a
// refused transition (a guard wanting a passing test run) makes it run
// the tests; a passing test run makes it move on. The same behaviour thus
// fails unguarded and succeeds under a workflow that enforces the
// discipline, without two scripts.
func Flailing(oracles []Oracle) func(*Request) Turn {
	return func(r *Request) Turn {
		c, err := r.Conversation()
		if err != nil {
			return Say("I cannot read the conversation.")
		}
		first := c.FirstUser()
		for _, o := range oracles {
			if o.Task != "" && strings.Contains(first, o.Task) {
				return flailingTurn(c, o)
			}
		}
		return Say("I do not know this task.")
	}
}

// phaseEvents parses "E → target (…); E2 → t2" lists.
var eventItem = regexp.MustCompile(`([A-Za-z0-9_:\-]+) → ([A-Za-z0-9_\-$]+)`)

// forwardEvent picks the event that moves the work on: the first whose
// name and target do not say failure.
func forwardEvent(list string) string {
	for _, m := range eventItem.FindAllStringSubmatch(list, -1) {
		ev, to := strings.ToLower(m[1]), strings.ToLower(m[2])
		if strings.Contains(ev, "fail") || strings.Contains(to, "fail") || strings.Contains(ev, "reject") || strings.Contains(ev, "abort") {
			continue
		}
		return m[1]
	}
	return ""
}

// lineAfter returns the rest of the first line of text that starts with prefix.
func lineAfter(text, prefix string) string {
	i := strings.Index(text, prefix)
	if i < 0 {
		return ""
	}
	rest := text[i+len(prefix):]
	if j := strings.IndexByte(rest, '\n'); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

func denied(result string) bool {
	return strings.HasPrefix(result, "statewright denied") || strings.HasPrefix(result, "Refused:") || strings.Contains(result, " was refused in phase ")
}

func flailingTurn(c *Conversation, o Oracle) Turn {
	steps := c.Steps()
	// The current phase: the last phase announcement, and its events.
	phaseAt, phaseEvents := -1, ""
	for i, m := range c.Messages {
		if m.Role == "user" && strings.Contains(m.Text, "[statewright] Phase: ") {
			phaseAt, phaseEvents = i, lineAfter(m.Text, "Events: ")
		}
	}
	fix := Call(Tool(flEdit, map[string]any{"path": o.File, "old_string": o.Old, "new_string": o.New}))
	runTests := Call(Tool(flTest, map[string]any{"command": o.TestCommand}))
	move := func(list string) Turn {
		ev := forwardEvent(list)
		if ev == "" {
			ev = forwardEvent(phaseEvents)
		}
		if ev == "" {
			return Say("I am done.")
		}
		return Call(Tool(flTransition, map[string]any{"event": ev}))
	}

	// What happened so far.
	reads, readStop, edited, editAt := 0, false, false, -1
	for i, s := range steps {
		switch s.Name {
		case flRead:
			if strings.HasPrefix(s.Result, "Refused:") {
				readStop = true
			} else if s.Result != "" {
				reads++
				if strings.Contains(s.Result, "will be refused") {
					readStop = true
				}
			}
		case flEdit, flWrite:
			if strings.HasPrefix(s.Result, "edited ") || strings.HasPrefix(s.Result, "replaced ") || strings.HasPrefix(s.Result, "created ") {
				edited, editAt = true, i
			}
		}
	}

	// React to the last answer first.
	if n := len(steps); n > 0 {
		last := steps[n-1]
		if denied(last.Result) && !(last.Name == flRead && strings.HasPrefix(last.Result, "Refused:")) {
			switch {
			case last.Name == flWrite && c.HasTool(flEdit):
				return fix // the whole-file rewrite was refused where targeted edits are allowed
			case last.Name == flTransition:
				return runTests // the move was refused: prove it with the tests
			default:
				return move(lineAfter(last.Result, "Events from "))
			}
		}
	}
	if !edited && reads < flailingReads && !readStop {
		return Call(Tool(flRead, map[string]any{"path": o.File}))
	}
	if !edited {
		// Its habit: rewrite the whole file, in whatever phase.
		for i := len(steps) - 1; i >= 0 && steps[i].At > phaseAt; i-- {
			if steps[i].Name == flWrite && denied(steps[i].Result) && c.HasTool(flEdit) {
				return fix
			}
		}
		return Call(Tool(flWrite, map[string]any{"path": o.File, "content": o.Rewrite}))
	}
	// Edited: look at tests run and transitions refused since the edit.
	lastTest, refusedSinceTest := "", 0
	for _, s := range steps[editAt+1:] {
		switch {
		case s.Name == flTest:
			lastTest, refusedSinceTest = s.Result, 0
		case s.Name == flTransition && denied(s.Result):
			refusedSinceTest++
		}
	}
	switch {
	case lastTest == "" && refusedSinceTest > 0:
		return runTests
	case lastTest == "", strings.HasPrefix(lastTest, "exit code 0"):
		return move(phaseEvents) // skips the tests, or they passed
	case refusedSinceTest >= 2:
		for _, m := range eventItem.FindAllStringSubmatch(phaseEvents, -1) {
			if strings.EqualFold(m[1], "FAIL") {
				return Call(Tool(flTransition, map[string]any{"event": m[1]}))
			}
		}
		return Say("The tests fail and I cannot fix them.")
	}
	return move(phaseEvents)
}
