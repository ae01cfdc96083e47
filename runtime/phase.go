package runtime

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/workflow"
)

// The phase fields that are not law: a phase's model and thinking level,
// its environment values, its read budget, and the workflow's output
// capture. Each is honoured where a harness can honour it (see
// FieldEffects and docs/runtime.md, "Phase fields"); the runtime resolves
// them into the RunView, counts the read budget and captures output.

// contextBytesKey is the store.Run.Counters key of the bytes of tool
// output the agent received in the current state.
const contextBytesKey = "context_bytes"

// maxCapturedOutput bounds the output recorded with a result when the
// workflow sets meta.capture_output.
const maxCapturedOutput = 16 << 10

// phaseFields fills v's phase fields from the state and the workflow.
func phaseFields(v *RunView, def *workflow.Definition, st *workflow.State) {
	v.Model, v.ThinkingLevel = st.Model, st.ThinkingLevel
	if v.Model == "" && def.Meta != nil {
		v.Model = def.Meta.DefaultModel
	}
	v.EnvOverrides = st.EnvOverrides
	v.ContextBudget = st.ContextBudgetBytes
	if def.Meta != nil {
		v.CaptureOutput = def.Meta.CaptureOutput
	}
	if v.Run != nil {
		v.ContextBytes = v.Run.Counters[contextBytesKey]
	}
}

// OverBudget reports whether the phase has read more tool output than
// its context_budget_bytes.
func (v *RunView) OverBudget() bool {
	return v != nil && v.ContextBudget != nil && uint64(max(v.ContextBytes, 0)) > *v.ContextBudget
}

// PhaseNotes are what the agent must know about its phase beyond its
// tools, instructions and events, one sentence each: the sub-workflow or
// fork branch it is in, the phase's model and thinking level, the
// environment values it expects, and its read budget. Harness adapters
// add them to the phase context (SessionStart, every prompt, after a
// control call).
func (v *RunView) PhaseNotes() []string {
	if v == nil || v.Run == nil {
		return nil
	}
	var out []string
	if len(v.Warnings) > 0 {
		out = append(out, "The workflow was started with warnings (tell the user): "+strings.Join(v.Warnings, "; ")+".")
	}
	if n := v.SubflowNote(); n != "" {
		out = append(out, n)
	}
	if v.Model != "" || v.ThinkingLevel != "" {
		n := "This phase's model: " + v.Model
		if v.Model == "" {
			n = "This phase's model: the session's"
		}
		if v.ThinkingLevel != "" {
			n += " (thinking level " + v.ThinkingLevel + ")"
		}
		out = append(out, n+".")
	}
	if len(v.EnvOverrides) > 0 {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(v.EnvOverrides)) {
			kv = append(kv, k+"="+v.EnvOverrides[k])
		}
		out = append(out, "This phase's commands expect these environment values: "+strings.Join(kv, " ")+".")
	}
	if v.ContextBudget != nil {
		n := fmt.Sprintf("Tool output read in this phase: %d of its %d-byte budget.", v.ContextBytes, *v.ContextBudget)
		if v.OverBudget() {
			n = fmt.Sprintf("This phase has read %d bytes of tool output, over its %d-byte budget: stop reading, finish the phase's work and move on.", v.ContextBytes, *v.ContextBudget)
		}
		out = append(out, n)
	}
	return out
}

// outputText is a tool result's text: a JSON string decoded, anything
// else as its JSON.
func outputText(out json.RawMessage) string {
	if len(out) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(out, &s) == nil {
		return s
	}
	return string(out)
}

// countOutput adds a result's output to the state's read counter and
// returns whether it changed the run. bytes is what the harness says the
// whole output measured (it may send a truncated copy), else the copy's
// length.
func countOutput(run *store.Run, text string, bytes int64) bool {
	n := max(int64(len(text)), bytes)
	if n <= 0 {
		return false
	}
	if run.Counters == nil {
		run.Counters = map[string]int64{}
	}
	run.Counters[contextBytesKey] += n
	return true
}

// captured is the output recorded with a result under meta.capture_output:
// at most maxCapturedOutput bytes, cut at a rune boundary.
func captured(text string) string {
	if len(text) <= maxCapturedOutput {
		return text
	}
	cut := maxCapturedOutput
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut] + "…"
}
