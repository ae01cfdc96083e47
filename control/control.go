// Package control is statewright's control operations in plain Go: list
// the workflows a session may start, start a run, read its state and
// status, request a transition, and file requests for what only a person
// may do (pause, deactivate, force a state). The MCP server, the opencode
// and Pi plugins, the CLI and serve all call it, so one operation means one
// thing on every channel; they only translate their wire formats.
//
// Every operation names the store session it acts on and the Actor who
// asks; control never decides who is a person (the channel proves that).
// Errors are written for the agent that reads them: they say what happened,
// that nothing changed where nothing did, and what to do instead. See
// docs/architecture.md.
package control

import (
	"errors"
	"fmt"

	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
)

// Operation names, as statewright's MCP server names its tools (the
// opencode and Pi plugins register the same names).
const (
	ToolListWorkflows = "statewright_list_workflows"
	ToolStart         = "statewright_start"
	ToolLoadWorkflow  = "statewright_load_workflow" // alias of ToolStart (statewright's name)
	ToolGetState      = "statewright_get_state"
	ToolTransition    = "statewright_transition"
	ToolGetStatus     = "statewright_get_status"
	ToolPause         = "statewright_pause"
	ToolDeactivate    = "statewright_deactivate"
	ToolForceState    = "statewright_force_state"
)

// ToolNames lists every operation, in the MCP server's tools/list order.
var ToolNames = []string{ToolListWorkflows, ToolStart, ToolLoadWorkflow, ToolGetState, ToolTransition,
	ToolGetStatus, ToolPause, ToolDeactivate, ToolForceState}

// Options configure a Control.
type Options struct {
	// ProjectDir is the project root; workflows under
	// ProjectDir/.statewright/workflows/ are listed and may be started by a
	// bare name. Empty: only bundled templates are listed.
	ProjectDir string
	// Workflows is the runtime's workflow source, consulted for which
	// workflows an agent may start (nil: bundled templates and project
	// workflows are reported as startable; the runtime still decides).
	Workflows runtime.WorkflowSource
}

// Control runs control operations over a runtime and its store. It holds
// no run state: every operation re-reads the store.
type Control struct {
	rt   *runtime.Service
	st   store.Store
	opts Options
}

// New returns a Control over rt, which must run on st.
func New(rt *runtime.Service, st store.Store, opts Options) (*Control, error) {
	if rt == nil || st == nil {
		return nil, errors.New("control: a runtime and a store are required")
	}
	return &Control{rt: rt, st: st, opts: opts}, nil
}

// storeError is the fail-closed message for an error the agent cannot fix.
func storeError(err error) error {
	return fmt.Errorf("statewright could not complete the call, so nothing was changed (a human should look at the store): %w", err)
}
