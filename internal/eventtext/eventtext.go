// Package eventtext renders store events for people, one line each: the
// same words in `statewright history`, the TUI and the web dashboard.
package eventtext

import (
	"encoding/json"
	"fmt"

	"github.com/statewright-go/statewright/store"
)

// Describe renders e without its sequence number and time: a decision's
// state, tool, verdict, rule and reason; a transition's from → to, event
// and actor; a result, an approval step, a run's start or end, an
// operator action.
func Describe(e *store.Event) string {
	var d map[string]any
	_ = json.Unmarshal(e.Data, &d)
	str := func(k string) string {
		if v, ok := d[k]; ok && v != nil {
			return fmt.Sprint(v)
		}
		return ""
	}
	actor := ""
	if a, ok := d["actor"].(map[string]any); ok {
		actor = fmt.Sprintf(" by %v via %v", a["kind"], a["channel"])
	}
	var body string
	switch e.Kind {
	case store.KindDecision:
		body = fmt.Sprintf("[%s] %s %s (%s): %s", e.State, e.Tool, e.Decision, e.Rule, e.Reason)
		if d["enforced"] == false {
			body += " [audit-only: not enforced]"
		}
	case store.KindTransition:
		if d["refused"] == true {
			body = fmt.Sprintf("[%s] event %s refused: %s%s", e.State, str("event"), str("error"), actor)
		} else {
			from := str("from")
			if from == "" {
				from = "(new run)"
			}
			body = fmt.Sprintf("%s → %s (event %s)%s", from, str("to"), str("event"), actor)
			if in := str("interrupt"); in != "" {
				body += " interrupt " + in
			}
			body += subflow(str)
		}
	case store.KindResult:
		body = fmt.Sprintf("[%s] %s", e.State, e.Tool)
		if d["failed"] == true {
			body += " failed"
		} else {
			body += " ok"
		}
		if c := str("exit_code"); c != "" {
			body += " exit " + c
		}
		if n := str("note"); n != "" {
			body += " (" + n + ")"
		}
	case store.KindApproval:
		if e.Rule == "prompt-grant" {
			// A person's yes in the harness's permission prompt.
			body = fmt.Sprintf("[%s] %s: %s %s%s", e.State, str("action"), str("op"), str("approval_id"), actor)
			if d["performed"] == true {
				body += ", performed"
			} else {
				body += ", not performed: " + str("error")
			}
			break
		}
		body = fmt.Sprintf("[%s] %s %s: %s → %s%s", e.State, str("action"), str("approval_id"), str("from"), str("to"), actor)
		if r := str("reason"); r != "" {
			body += ": " + r
		}
	case store.KindRun:
		body = fmt.Sprintf("[%s] run %s %s%s", e.State, str("event"), str("workflow"), actor)
	default:
		body = fmt.Sprintf("[%s] %s", e.State, str("action"))
		if d["refused"] == true {
			body += " refused: " + str("error")
		} else if f := str("from"); f != "" {
			body += fmt.Sprintf(" %s → %s", f, str("to"))
		}
		body += actor
	}
	return body
}

// subflow describes what a transition did to the run's stack of invoked
// sub-workflows and fork branches ("" when nothing).
func subflow(str func(string) string) string {
	depth := str("depth")
	switch str("subflow") {
	case "enter":
		if str("kind") == "fork" {
			return fmt.Sprintf(": fork, branch %s starts (depth %s)", str("branch"), depth)
		}
		return fmt.Sprintf(": entered sub-workflow %s (depth %s)", str("workflow"), depth)
	case "branch":
		return fmt.Sprintf(": branch %s %s, branch %s starts (depth %s)", str("ended"), str("outcome"), str("branch"), depth)
	case "return":
		what := "fork"
		if inv := str("invoke"); inv != "" {
			what = "sub-workflow " + inv
		}
		out := fmt.Sprintf(": %s %s, back at depth %s", what, str("outcome"), depth)
		if r := str("reason"); r != "" {
			out += " (" + r + ")"
		}
		return out
	}
	if depth != "" {
		return " [depth " + depth + "]"
	}
	return ""
}
