package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/statewright-go/statewright/agent/model"
	"github.com/statewright-go/statewright/engine"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/workflow"
)

// Markers the prompts use; the reactive fake model (internal/fakemodel)
// and tests read them, so they are part of the runner's contract.
const (
	// PhaseMarker starts the message that announces a phase.
	PhaseMarker = "[statewright] Phase: "
	// TaskMarker starts the task message.
	TaskMarker = "Task: "
)

func systemPrompt(root string) string {
	return "You are a coding agent working in the repository at " + root + ".\n" +
		"A workflow (a state machine of phases) governs you. In each phase you may use only that phase's tools; " +
		"you move to the next phase by calling statewright_transition with one of the phase's events once its work is done. " +
		"A call the phase does not allow is denied with the reason, the tools that are allowed and the event that leads on: follow it.\n" +
		"Work with tool calls, not prose. Paths are relative to the repository. Keep changes small: use edit_file for targeted edits, " +
		"and run the tests to prove a fix."
}

func taskPrompt(task, testCmd string) string {
	var b strings.Builder
	b.WriteString(TaskMarker + task + "\n")
	if testCmd != "" {
		b.WriteString("Test command: " + testCmd + "\n")
	}
	return b.String()
}

func nextEvents(def *workflow.Definition, state string) []engine.EventInfo {
	return engine.NextEvents(def, state)
}

// phasePrompt tells the model its phase: instructions, tools, events.
func (r *runner) phasePrompt(st *workflow.State) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s%s (workflow %s)\n", PhaseMarker, r.state, r.def.ID)
	if r.depth > 0 {
		fmt.Fprintf(&b, "This phase belongs to an invoked sub-workflow or a fork branch (depth %d): when that ends, the run returns to the workflow that started it.\n", r.depth)
	}
	if s := strings.TrimSpace(st.Instructions); s != "" {
		b.WriteString("Instructions: " + s + "\n")
	}
	if st.IsFinal() {
		b.WriteString("This phase is final.\n")
		return b.String()
	}
	offered := r.offered(st)
	b.WriteString("Tools: " + strings.Join(offered, ", ") + "\n")
	if evs := nextEvents(r.def, r.state); len(evs) > 0 {
		parts := make([]string, 0, len(evs))
		for _, e := range evs {
			parts = append(parts, e.String())
		}
		b.WriteString("Events: " + strings.Join(parts, "; ") + "\n")
		b.WriteString("Call statewright_transition with an event when this phase's work is done.\n")
	}
	if st.MaxIterations != nil {
		fmt.Fprintf(&b, "At most %d tool calls in this phase.\n", *st.MaxIterations)
	}
	return b.String()
}

// resumeNote summarises, from the store's log, what happened in the run
// before it was interrupted, for the fresh conversation of a resumed run.
func (r *runner) resumeNote(ctx context.Context) (string, error) {
	evs, err := r.cfg.Store.Events(ctx, store.EventFilter{RunID: r.runID, Kinds: []store.EventKind{store.KindDecision, store.KindTransition, store.KindResult}, Limit: 30, Newest: true})
	if err != nil {
		return "", fmt.Errorf("agent: resume %s: %w", r.runID, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[statewright] This run was interrupted and resumes now, in phase %s. The files in the workspace are as the earlier attempt left them. Its last recorded actions:\n", r.state)
	for _, e := range evs {
		switch e.Kind {
		case store.KindDecision:
			if e.Decision == "allow" {
				fmt.Fprintf(&b, "- [%s] %s allowed\n", e.State, e.Tool)
			} else {
				fmt.Fprintf(&b, "- [%s] %s %s: %s\n", e.State, e.Tool, e.Decision, clip(firstLine(e.Reason), 160))
			}
		case store.KindTransition:
			var d struct {
				From, To, Event string
				Refused         bool
			}
			_ = json.Unmarshal(e.Data, &d)
			if d.Refused {
				fmt.Fprintf(&b, "- [%s] event %s refused\n", e.State, d.Event)
			} else if d.To != "" {
				fmt.Fprintf(&b, "- moved %s → %s (%s)\n", d.From, d.To, d.Event)
			}
		}
	}
	b.WriteString("Continue the task from here.")
	return b.String(), nil
}

// contextBytes is the text size of the messages.
func contextBytes(msgs []model.Message) int {
	n := 0
	for _, m := range msgs {
		n += len(m.Content)
		for _, c := range m.ToolCalls {
			n += len(c.Arguments) + len(c.Name)
		}
	}
	return n
}

// keepRecent tool outputs are never cut.
const keepRecent = 4

// truncateContext cuts the oldest tool outputs (beyond the most recent
// keepRecent) to a short head until the messages fit budget bytes. It
// changes msgs in place and returns how many outputs it cut.
func truncateContext(msgs []model.Message, budget int) int {
	over := contextBytes(msgs) - budget
	if over <= 0 {
		return 0
	}
	var toolIdx []int
	for i, m := range msgs {
		if m.Role == "tool" {
			toolIdx = append(toolIdx, i)
		}
	}
	if len(toolIdx) <= keepRecent {
		return 0
	}
	cut := 0
	for _, i := range toolIdx[:len(toolIdx)-keepRecent] {
		if over <= 0 {
			break
		}
		c := msgs[i].Content
		if len(c) <= 240 || strings.HasSuffix(c, truncMark) {
			continue
		}
		short := c[:160] + "\n" + truncMark
		over -= len(c) - len(short)
		msgs[i].Content = short
		cut++
	}
	return cut
}

const truncMark = "[older output cut to fit the context budget]"
