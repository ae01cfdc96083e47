// Package enginecmd is `statewright engine step`: resolve one event against a
// workflow with the pure engine.
package enginecmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/engine"
	"github.com/statewright-go/statewright/internal/cli/cmdutil"
	"github.com/statewright-go/statewright/workflow"
)

// NewCmdEngine returns `statewright engine`.
func NewCmdEngine(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "engine",
		Short:   "Run the workflow engine by hand",
		Example: "  statewright engine step bugfix --event LOCALIZED",
		Long:    "Low-level access to the pure workflow engine, for debugging workflows and scripting.",
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newEngineStepCmd(f))
	return cmd
}

// engineErrorJSON is what 'engine step' prints when the engine refuses the event.
type engineErrorJSON struct {
	Error engineErrorBody `json:"error"`
}

// engineErrorBody describes an engine error: a stable kind and the message.
type engineErrorBody struct {
	// Kind is the error's class in snake_case: no_transition, guard_failed, ...
	Kind string `json:"kind"`
	// Message is the engine's explanation.
	Message    string           `json:"message"`
	State      string           `json:"state,omitempty"`
	Event      string           `json:"event,omitempty"`
	Target     string           `json:"target,omitempty"`
	Guard      string           `json:"guard,omitempty"`
	Candidates []string         `json:"candidates,omitempty"`
	Verdicts   []engine.Verdict `json:"verdicts,omitempty"`
}

func newEngineStepCmd(f *cmdutil.Factory) *cobra.Command {
	var state, event, dataJSON, contextJSON, historyJSON string
	cmd := &cobra.Command{
		Use:     "step NAME|FILE --event E [--state S] [--data JSON] [--context JSON] [--history JSON]",
		Example: "  statewright engine step bugfix --event LOCALIZED\n  statewright engine step wf.yaml --state testing --event TESTS_PASS --context '{\"runtime\":{\"last_test\":{\"passed\":true}}}'",
		Short:   "Resolve one event in one state and print the outcome as JSON",
		Long: `Resolve an event the way a run would, without a store: print the engine's outcome
(from, to, match, context, history, approval, invoke/fork, final) as one JSON object and exit 0.

--state defaults to the workflow's initial state. --context is a JSON object merged over the
workflow's own context (top-level keys of --context win); runtime evidence goes under "runtime",
e.g. {"runtime":{"last_test":{"passed":true}}}. --data is the event data an agent would send: it
lands under "data" and only satisfies guards that name data.* (unless the workflow sets
trust_event_data). --history is the interrupt stack, a JSON array of {"return":S,"interrupt":NAME}.

When the engine refuses the event (no such event, guard failed, ambiguous, final state, ...) it
prints {"error":{"kind":...,"message":...}} on stdout and exits 1. Bad flags or JSON, or an
unknown workflow or state, exit 2; an invalid workflow prints its diagnostics and exits 1.`,
		Args: cmdutil.ExactArgs(1, "a bundled template name or a workflow file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if event == "" && !cmd.Flags().Changed("event") {
				return cmdutil.Usagef("engine step: --event is required")
			}
			data, err := decodeJSONObject("--data", dataJSON)
			if err != nil {
				return err
			}
			ctxOverride, err := decodeJSONObject("--context", contextJSON)
			if err != nil {
				return err
			}
			var history []engine.Frame
			if historyJSON != "" {
				if err := decodeStrict([]byte(historyJSON), &history); err != nil {
					return cmdutil.Usagef("engine step: --history: want a JSON array of {\"return\":STATE,\"interrupt\":NAME}: %v", err)
				}
			}

			def, err := cmdutil.LoadForCommand(cmd.ErrOrStderr(), args[0], false, false)
			if err != nil {
				return err
			}
			if state == "" {
				state = def.Initial
			}
			if def.States[state] == nil {
				return cmdutil.Usagef("engine step: workflow %s has no state %q (states: %s)", def.ID, state, strings.Join(cmdutil.SortedKeys(def.States), ", "))
			}

			snap := engine.Snapshot{State: state, Context: stepContext(def, ctxOverride), History: history}
			out, err := engine.Step(def, snap, event, data)
			if err != nil {
				if werr := cmdutil.PrintJSON(cmd.OutOrStdout(), engineErrorJSON{describeEngineError(err)}); werr != nil {
					return werr
				}
				return cmdutil.Failure(err.Error())
			}
			return cmdutil.PrintJSON(cmd.OutOrStdout(), out)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&state, "state", "", "the current state (default: the workflow's initial state)")
	fl.StringVar(&event, "event", "", "the event to send (required)")
	fl.StringVar(&dataJSON, "data", "", "event data, a JSON object")
	fl.StringVar(&contextJSON, "context", "", "run context, a JSON object merged over the workflow's context")
	fl.StringVar(&historyJSON, "history", "", "interrupt history stack, a JSON array of frames")
	return cmd
}

// stepContext is the snapshot context: the workflow's context with the
// top-level keys of override on top. Neither map is modified.
func stepContext(def *workflow.Definition, override map[string]any) map[string]any {
	ctx := make(map[string]any, len(def.Context)+len(override))
	maps.Copy(ctx, def.Context)
	maps.Copy(ctx, override)
	return ctx
}

// describeEngineError turns an engine error into its JSON description.
func describeEngineError(err error) engineErrorBody {
	body := engineErrorBody{Kind: "engine_error", Message: err.Error()}
	var te *engine.TransitionError
	if errors.As(err, &te) {
		if te.Kind != nil {
			body.Kind = strings.ReplaceAll(te.Kind.Error(), " ", "_")
		}
		body.State, body.Event, body.Target, body.Guard = te.State, te.Event, te.Target, te.Guard
		body.Candidates, body.Verdicts = te.Candidates, te.Verdicts
	}
	return body
}

// decodeJSONObject decodes flag value s as a JSON object ("" gives nil).
// Integers decode as int64 and other numbers as float64, as in workflow
// files. A malformed value is a usage error naming the flag.
func decodeJSONObject(flag, s string) (map[string]any, error) {
	if s == "" {
		return nil, nil
	}
	var v any
	if err := decodeStrict([]byte(s), &v); err != nil {
		return nil, cmdutil.Usagef("engine step: %s: invalid JSON: %v", flag, err)
	}
	obj, ok := normalizeNumbers(v).(map[string]any)
	if !ok {
		return nil, cmdutil.Usagef("engine step: %s: want a JSON object, got %s", flag, jsonKind(v))
	}
	return obj, nil
}

// decodeStrict decodes exactly one JSON value into v, rejecting unknown
// struct fields and trailing data; numbers decode as json.Number.
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// normalizeNumbers replaces json.Number values with int64 or float64.
func normalizeNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i
		}
		f, err := x.Float64()
		if err != nil {
			return string(x)
		}
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeNumbers(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = normalizeNumbers(e)
		}
		return x
	default:
		return v
	}
}

// jsonKind names the JSON type of a decoded value.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number, int64, float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	default:
		return fmt.Sprintf("%T", v)
	}
}
