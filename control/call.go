package control

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/statewright-go/statewright/runtime"
)

// StampKey is the argument through which a harness hook or plugin names
// the calling session in a control call's input (see "Identity and shared state" in
// docs/architecture.md). Call ignores it: the caller resolved the session already.
const StampKey = "statewright_session"

// Arguments of the operations, as the MCP tools and the plugins' tools
// take them.
type (
	// StartArgs is the input of statewright_start and statewright_load_workflow.
	StartArgs struct {
		Name string `json:"name"`
	}
	// TransitionArgs is the input of statewright_transition.
	TransitionArgs struct {
		Event string         `json:"event"`
		Data  map[string]any `json:"data,omitempty"`
	}
	// RequestArgs is the input of statewright_pause and statewright_deactivate.
	RequestArgs struct {
		Reason string `json:"reason,omitempty"`
	}
	// ForceStateArgs is the input of statewright_force_state.
	ForceStateArgs struct {
		State  string `json:"state"`
		Reason string `json:"reason,omitempty"`
	}
)

// Call runs the operation a control tool names (ToolNames; "statewright_"
// may be left off) with its JSON arguments, for the session, as by. It is
// how a channel without its own binding per operation (the opencode and Pi
// plugins) serves the control tools: the result is what the MCP tool
// returns as JSON. Unknown arguments are refused, as the MCP tools' input
// schemas refuse them; StampKey is ignored. toolUseID ties a request to the
// hook's decision on the same call; a transition is idempotent on it.
func (c *Control) Call(ctx context.Context, session, tool string, args json.RawMessage, toolUseID string, by runtime.Actor) (any, error) {
	if !strings.HasPrefix(tool, "statewright_") {
		tool = "statewright_" + tool
	}
	decode := func(v any) error { return decodeArgs(tool, args, v) }
	switch tool {
	case ToolListWorkflows:
		if err := decode(&struct{}{}); err != nil {
			return nil, err
		}
		return c.ListWorkflows(ctx, session)
	case ToolGetState:
		if err := decode(&struct{}{}); err != nil {
			return nil, err
		}
		return c.State(ctx, session)
	case ToolGetStatus:
		if err := decode(&struct{}{}); err != nil {
			return nil, err
		}
		return c.Status(ctx, session)
	case ToolStart, ToolLoadWorkflow:
		var a StartArgs
		if err := decode(&a); err != nil {
			return nil, err
		}
		return c.Start(ctx, session, a.Name, by)
	case ToolTransition:
		var a TransitionArgs
		if err := decode(&a); err != nil {
			return nil, err
		}
		return c.Transition(runtime.WithRequestID(ctx, toolUseID), session, a.Event, a.Data, by)
	case ToolPause, ToolDeactivate:
		var a RequestArgs
		if err := decode(&a); err != nil {
			return nil, err
		}
		action := ActionPause
		if tool == ToolDeactivate {
			action = ActionDeactivate
		}
		return c.FileRequest(ctx, session, Request{Action: action, Reason: a.Reason, ToolUseID: toolUseID}, by)
	case ToolForceState:
		var a ForceStateArgs
		if err := decode(&a); err != nil {
			return nil, err
		}
		return c.FileRequest(ctx, session, Request{Action: ActionForceState, Target: a.State, Reason: a.Reason, ToolUseID: toolUseID}, by)
	}
	return nil, fmt.Errorf("%s is not a statewright control tool (tools: %s)", tool, strings.Join(ToolNames, ", "))
}

// decodeArgs decodes a tool's arguments strictly into v, without the
// session stamp. Absent or null arguments are an empty object.
func decodeArgs(tool string, args json.RawMessage, v any) error {
	var m map[string]json.RawMessage
	if len(bytes.TrimSpace(args)) > 0 {
		if err := json.Unmarshal(args, &m); err != nil {
			return fmt.Errorf("%s: the arguments are not a JSON object: %w", tool, err)
		}
	}
	delete(m, StampKey)
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("%s: %w", tool, err)
	}
	if m == nil {
		b = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: invalid arguments: %w", tool, err)
	}
	return nil
}

// Render is a result of Call as the text a tool returns: indented JSON.
func Render(v any) (string, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return "", fmt.Errorf("statewright: render result: %w", err)
	}
	return string(b), nil
}
