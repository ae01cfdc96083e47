package wire

import (
	"fmt"
	"strings"

	"github.com/statewright-go/statewright/engine"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
)

// PhaseContext renders what the agent must know about its run at session
// start and on every prompt: workflow, phase, iterations, allowed tools,
// instructions and the events that lead on, and how to move on (the
// harness's name of the transition tool). The allowed tools carry h's own
// names (policy.LessonTools). Nil (no run) renders "".
func PhaseContext(v *runtime.RunView, h policy.Harness, transitionTool string) string {
	if v == nil || v.Run == nil {
		return ""
	}
	r := v.Run
	var b strings.Builder
	fmt.Fprintf(&b, "[statewright] Workflow %q is active; phase: %s", r.WorkflowID, r.State)
	if v.MaxIterations != nil {
		fmt.Fprintf(&b, " (tool call %d of %d)", r.Iterations, *v.MaxIterations)
	}
	b.WriteString(".\n")
	for _, n := range v.PhaseNotes() {
		b.WriteString(n + "\n")
	}
	switch {
	case v.IsFinal:
		b.WriteString("The run is in a final phase: no tools are available.\n")
		return b.String()
	case r.Status == store.StatusAwaitingApproval && r.PendingApproval != nil:
		fmt.Fprintf(&b, "Waiting for a person to approve %s (to %s); keep working with this phase's tools.\n",
			r.PendingApproval.ID, r.PendingApproval.To)
	case r.Status == store.StatusPaused:
		b.WriteString("The run is paused by a person.\n")
	}
	b.WriteString("Allowed tools: " + toolList(policy.LessonTools(h, v.AllowedTools)) + ".\n")
	if s := strings.TrimSpace(v.Instructions); s != "" {
		b.WriteString("Instructions: " + s + "\n")
	}
	if ev := EventList(v.NextEvents); ev != "" {
		b.WriteString("Next events: " + ev + ".\n")
		b.WriteString("To move on, call " + transitionTool + " with the event once its work is done.\n")
	}
	return b.String()
}

// StopReason returns why the agent may not stop yet, or "" when it may: a
// live, enforced run in a non-final phase. A run awaiting a person's
// approval or paused by one lets the agent stop: it has nothing to do
// until the person acts. moveOn says how the run moves on, given the next
// events ("move on with TOOL (next events: …)").
func StopReason(v *runtime.RunView, moveOn func(events string) string) string {
	if v == nil || v.Run == nil || v.IsFinal || v.Run.AuditOnly || v.Run.Status != store.StatusActive {
		return ""
	}
	reason := fmt.Sprintf("statewright: the workflow %q is in phase %s, which is not final. Finish this phase's work", v.Run.WorkflowID, v.Run.State)
	if ev := EventList(v.NextEvents); ev != "" {
		reason += moveOn(ev)
	}
	return reason + "; or tell the user why you cannot."
}

// MoveOnWith is StopReason's moveOn for a harness whose agent moves the run
// on with the control tool named tool.
func MoveOnWith(tool string) func(events string) string {
	return func(events string) string { return " and move on with " + tool + " (next events: " + events + ")" }
}

func toolList(tools []string) string {
	switch {
	case tools == nil:
		return "any tool"
	case len(tools) == 0:
		return "none"
	case len(tools) == 1 && tools[0] == "*":
		return "any tool"
	}
	return strings.Join(tools, ", ")
}

// EventList renders events for a message: "A → x; B → y".
func EventList(evs []engine.EventInfo) string {
	parts := make([]string, 0, len(evs))
	for _, e := range evs {
		parts = append(parts, e.String())
	}
	return strings.Join(parts, "; ")
}

// Outcome is how an adapter carries out a decision.
type Outcome int

// Outcomes.
const (
	// Allowed: let the call run (an allow, or any decision not enforced
	// because the run only audits).
	Allowed Outcome = iota
	// Asked: the law asks a person.
	Asked
	// Denied: block the call.
	Denied
)

// Verdict returns how to carry out a decision, and the deny reason with
// "statewright: " before it (a deny without a reason names its rule).
func Verdict(res runtime.DecideResult) (Outcome, string) {
	reason := res.Reason
	switch {
	case !res.Enforced || res.Verdict == policy.Allow:
		return Allowed, Prefixed(reason)
	case res.Verdict == policy.Ask:
		return Asked, Prefixed(reason)
	}
	if reason == "" {
		reason = "denied (rule " + string(res.Rule) + ")"
	}
	return Denied, Prefixed(reason)
}
