package runtime

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/workflow"
)

// HarnessAgent names statewright's own agent runner (`statewright agent`)
// among the harnesses FieldEffects knows.
const HarnessAgent = "agent"

// Harnesses lists the harnesses FieldEffects knows, in documentation order.
var Harnesses = []string{string(policy.ClaudeCode), string(policy.Codex), string(policy.Cursor), string(policy.OpenCode), string(policy.Pi), HarnessAgent}

// CodeNoEffect is the diagnostic code of a workflow field that has no
// effect (or less than its name suggests) under a harness.
const CodeNoEffect = "no-effect"

// fieldEffect says which harnesses honour a workflow field that is not law
// and what the field does under the others.
type fieldEffect struct {
	field string
	meta  bool // a meta key, else a state key
	set   func(def *workflow.Definition, st *workflow.State) bool
	// by lists the harnesses that honour the field; elsewhere says what it
	// does under the others.
	by        []string
	elsewhere string
}

// fieldEffects is the one table of what each harness does with the
// fields that are not law. docs/workflow-format.md ("Fields that are not
// law") says the same.
var fieldEffects = []fieldEffect{
	{field: "model", set: func(_ *workflow.Definition, st *workflow.State) bool { return st.Model != "" },
		by:        []string{string(policy.OpenCode), string(policy.Pi), HarnessAgent},
		elsewhere: "named in the phase context and statewright_get_state only: the harness cannot switch models from a hook"},
	{field: "thinking_level", set: func(_ *workflow.Definition, st *workflow.State) bool { return st.ThinkingLevel != "" },
		by:        []string{string(policy.Pi), HarnessAgent},
		elsewhere: "named in the phase context and statewright_get_state only"},
	{field: "model_ladder", set: func(_ *workflow.Definition, st *workflow.State) bool { return len(st.ModelLadder) > 0 },
		by:        []string{HarnessAgent},
		elsewhere: "no effect: only statewright agent escalates models"},
	{field: "context_budget_bytes", set: func(_ *workflow.Definition, st *workflow.State) bool { return st.ContextBudgetBytes != nil },
		by:        []string{string(policy.ClaudeCode), string(policy.Codex), string(policy.OpenCode), string(policy.Pi), HarnessAgent},
		elsewhere: "not counted: the harness reports no tool output"},
	{field: "env_overrides", set: func(_ *workflow.Definition, st *workflow.State) bool { return len(st.EnvOverrides) > 0 },
		elsewhere: "shown to the agent (the phase context, statewright_get_state), never set in its commands"},
	{field: "direct_execution", set: func(_ *workflow.Definition, st *workflow.State) bool { return st.DirectExecution },
		elsewhere: "no effect: statewright has no orchestrator that hands a phase to the agent runner"},
	{field: "capture_output", meta: true, set: func(def *workflow.Definition, _ *workflow.State) bool {
		return def.Meta != nil && def.Meta.CaptureOutput
	},
		by:        []string{string(policy.ClaudeCode), string(policy.Codex), string(policy.OpenCode), string(policy.Pi), HarnessAgent},
		elsewhere: "no effect: the harness reports no tool output to record"},
}

// FieldEffects reports, as warnings, the fields of def that have no effect
// (or only an advisory one) under harness: one of Harnesses, or "" for the
// fields no harness honours. An unknown harness is an error diagnostic.
func FieldEffects(def *workflow.Definition, harness string) workflow.Diagnostics {
	if harness != "" && !slices.Contains(Harnesses, harness) {
		return workflow.Diagnostics{{Severity: workflow.SeverityError, Code: CodeNoEffect, Source: def.Source,
			Message: fmt.Sprintf("unknown harness %q (harnesses: %s)", harness, strings.Join(Harnesses, ", "))}}
	}
	var out workflow.Diagnostics
	for _, fe := range fieldEffects {
		if harness == "" && len(fe.by) > 0 || slices.Contains(fe.by, harness) {
			continue
		}
		d := workflow.Diagnostic{Severity: workflow.SeverityWarning, Code: CodeNoEffect, Source: def.Source}
		under := "under " + harness
		if harness == "" {
			under = "under every harness"
		}
		by := ""
		if len(fe.by) > 0 {
			by = " (honoured by " + strings.Join(fe.by, ", ") + ")"
		}
		if fe.meta {
			if !fe.set(def, nil) {
				continue
			}
			if def.Meta != nil {
				d.Pos = def.Meta.Pos
			}
			d.Message = fmt.Sprintf("meta %q %s: %s%s", fe.field, under, fe.elsewhere, by)
			out = append(out, d)
			continue
		}
		var states []string
		for _, name := range slices.Sorted(maps.Keys(def.States)) {
			if st := def.States[name]; st != nil && fe.set(def, st) {
				if len(states) == 0 {
					d.Pos = st.Pos
				}
				states = append(states, name)
			}
		}
		if len(states) == 0 {
			continue
		}
		d.Message = fmt.Sprintf("%q (state %s) %s: %s%s", fe.field, strings.Join(states, ", "), under, fe.elsewhere, by)
		out = append(out, d)
	}
	return out
}
