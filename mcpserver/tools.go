package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/statewright-go/statewright/engine"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
)

// Tool names. The harness shows them to the model as
// mcp__<server name>__<tool>, e.g. mcp__statewright__statewright_get_state.
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

// ToolNames lists every tool the server offers, in tools/list order.
var ToolNames = []string{ToolListWorkflows, ToolStart, ToolLoadWorkflow, ToolGetState, ToolTransition,
	ToolGetStatus, ToolPause, ToolDeactivate, ToolForceState}

// Inputs. Every struct carries the stamp explicitly, because the SDK's
// inferred schemas forbid additional properties.

// NoArgs is the input of the tools that take no arguments.
type NoArgs struct {
	Session string `json:"statewright_session,omitempty" jsonschema:"Set by the statewright PreToolUse hook to the calling session's id; leave it out (the hook replaces any value)."`
}

// StartArgs is the input of statewright_start and statewright_load_workflow.
type StartArgs struct {
	Name    string `json:"name" jsonschema:"The workflow to start: a name from statewright_list_workflows (a bundled template such as bugfix, or a project workflow)."`
	Session string `json:"statewright_session,omitempty" jsonschema:"Set by the statewright PreToolUse hook to the calling session's id; leave it out (the hook replaces any value)."`
}

// TransitionArgs is the input of statewright_transition.
type TransitionArgs struct {
	Event   string         `json:"event" jsonschema:"The event to send, one of the current state's transitions (see statewright_get_state)."`
	Data    map[string]any `json:"data,omitempty" jsonschema:"Optional facts about the work, recorded with the transition under data.*; they satisfy only guards that name data.* explicitly."`
	Session string         `json:"statewright_session,omitempty" jsonschema:"Set by the statewright PreToolUse hook to the calling session's id; leave it out (the hook replaces any value)."`
}

// RequestArgs is the input of statewright_pause and statewright_deactivate.
type RequestArgs struct {
	Reason  string `json:"reason,omitempty" jsonschema:"Why you ask; shown to the human who decides."`
	Session string `json:"statewright_session,omitempty" jsonschema:"Set by the statewright PreToolUse hook to the calling session's id; leave it out (the hook replaces any value)."`
}

// ForceStateArgs is the input of statewright_force_state.
type ForceStateArgs struct {
	State   string `json:"state" jsonschema:"The state you ask a human to put the run in."`
	Reason  string `json:"reason,omitempty" jsonschema:"Why you ask; shown to the human who decides."`
	Session string `json:"statewright_session,omitempty" jsonschema:"Set by the statewright PreToolUse hook to the calling session's id; leave it out (the hook replaces any value)."`
}

func boolp(b bool) *bool { return &b }

// readOnly and mutating are the tools' annotations.
var (
	readOnly = &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: boolp(false), OpenWorldHint: boolp(false)}
	mutating = &mcp.ToolAnnotations{DestructiveHint: boolp(false), OpenWorldHint: boolp(false)}
)

func (s *Server) addTools() {
	mcp.AddTool(s.srv, &mcp.Tool{Name: ToolListWorkflows, Annotations: readOnly,
		Description: "List the workflows you can start with statewright_start (bundled templates and the project's workflows) and the session's active one."},
		s.listWorkflows)
	startDesc := "Start a workflow run for this session, in the workflow's initial state. Allowed only when the session has no live run (or its last run ended) and only for a workflow the project lets agents start. Returns the run's state: allowed tools, instructions and transitions."
	mcp.AddTool(s.srv, &mcp.Tool{Name: ToolStart, Annotations: mutating, Description: startDesc}, s.start)
	mcp.AddTool(s.srv, &mcp.Tool{Name: ToolLoadWorkflow, Annotations: mutating,
		Description: "Alias of statewright_start (statewright's name). " + startDesc}, s.start)
	mcp.AddTool(s.srv, &mcp.Tool{Name: ToolGetState, Annotations: readOnly,
		Description: "Show the current state of this session's run: the tools it allows (null = any), its instructions, the events that lead on (and which need a human's approval), iterations, and any pending approval."},
		s.getState)
	mcp.AddTool(s.srv, &mcp.Tool{Name: ToolTransition, Annotations: mutating,
		Description: "Move the run on by sending an event of the current state (see statewright_get_state). Guards are checked against recorded evidence; a transition that needs approval waits for a human, and you keep the current state's tools until then."},
		s.transition)
	mcp.AddTool(s.srv, &mcp.Tool{Name: ToolGetStatus, Annotations: readOnly,
		Description: "Summarise this session: active workflow, state, iteration, pending approval, and the workflows available."},
		s.getStatus)
	mcp.AddTool(s.srv, &mcp.Tool{Name: ToolPause, Annotations: mutating,
		Description: "Ask a human to pause this session's run. It does NOT pause anything: the request is recorded and a human decides with `statewright pause`."},
		s.pause)
	mcp.AddTool(s.srv, &mcp.Tool{Name: ToolDeactivate, Annotations: mutating,
		Description: "Ask a human to end this session's run. It does NOT deactivate anything: the request is recorded and a human decides with `statewright deactivate`."},
		s.deactivate)
	mcp.AddTool(s.srv, &mcp.Tool{Name: ToolForceState, Annotations: mutating,
		Description: "Ask a human to put the run in another state, bypassing transitions. It does NOT change the state: the request is recorded and a human decides."},
		s.forceState)
}

// jsonResult returns v as pretty JSON text content, and as structured content.
func jsonResult(v any) (*mcp.CallToolResult, any, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, nil, fmt.Errorf("statewright: render result: %w", err)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: v}, nil, nil
}

// --- read-only tools ---

func (s *Server) listWorkflows(ctx context.Context, _ *mcp.CallToolRequest, in NoArgs) (*mcp.CallToolResult, any, error) {
	key, err := s.begin(ctx, in.Session)
	if err != nil {
		return nil, nil, err
	}
	ws, err := s.workflows()
	if err != nil {
		return nil, nil, fmt.Errorf("statewright: %w", err)
	}
	out := ListView{Workflows: []string{}, Details: ws}
	for _, w := range ws {
		out.Workflows = append(out.Workflows, w.Name)
	}
	v, err := s.rt.Status(ctx, key)
	switch {
	case err == nil && v != nil && v.Run != nil:
		out.Active = &v.Run.WorkflowID
	case err != nil && !errors.Is(err, runtime.ErrNoRun):
		return nil, nil, s.storeError(err)
	}
	return jsonResult(out)
}

func (s *Server) getState(ctx context.Context, _ *mcp.CallToolRequest, in NoArgs) (*mcp.CallToolResult, any, error) {
	key, err := s.begin(ctx, in.Session)
	if err != nil {
		return nil, nil, err
	}
	v, err := s.rt.Status(ctx, key)
	if err != nil {
		return nil, nil, s.explain(ctx, key, err)
	}
	return jsonResult(stateView(key, v))
}

func (s *Server) getStatus(ctx context.Context, _ *mcp.CallToolRequest, in NoArgs) (*mcp.CallToolResult, any, error) {
	key, err := s.begin(ctx, in.Session)
	if err != nil {
		return nil, nil, err
	}
	out := StatusView{Session: key, AvailableWorkflows: []string{}}
	ws, err := s.workflows()
	if err != nil {
		return nil, nil, fmt.Errorf("statewright: %w", err)
	}
	for _, w := range ws {
		out.AvailableWorkflows = append(out.AvailableWorkflows, w.Name)
	}
	v, err := s.rt.Status(ctx, key)
	if err != nil {
		if errors.Is(err, runtime.ErrNoRun) {
			out.LastRun = s.lastRun(ctx, key)
			return jsonResult(out)
		}
		return nil, nil, s.storeError(err)
	}
	sv := stateView(key, v)
	out.ActiveWorkflow, out.RunID, out.Status, out.CurrentState = &sv.Workflow, &sv.RunID, &sv.Status, &sv.State
	out.Iteration, out.IsFinal, out.PendingApproval = &sv.Iteration, &sv.IsFinal, sv.PendingApproval
	return jsonResult(out)
}

// --- tools that move the run ---

func (s *Server) start(ctx context.Context, _ *mcp.CallToolRequest, in StartArgs) (*mcp.CallToolResult, any, error) {
	key, err := s.begin(ctx, in.Session)
	if err != nil {
		return nil, nil, err
	}
	name := strings.TrimSpace(in.Name)
	if name == "" {
		return nil, nil, fmt.Errorf("name a workflow to start; workflows you may start: %s", s.startable())
	}
	v, err := s.rt.Start(ctx, key, s.resolveWorkflow(name), s.actor())
	if err != nil {
		return nil, nil, s.startError(ctx, key, name, err)
	}
	sv := stateView(key, v)
	msg := fmt.Sprintf("Started workflow %s for this session; the run is in state '%s'.", sv.Workflow, sv.State)
	if sv.Instructions != "" {
		msg += " Instructions: " + sv.Instructions
	}
	return jsonResult(StartView{Loaded: true, Workflow: sv.Workflow, RunID: sv.RunID, InitialState: sv.State,
		Message: msg, StateSnapshot: sv})
}

func (s *Server) transition(ctx context.Context, req *mcp.CallToolRequest, in TransitionArgs) (*mcp.CallToolResult, any, error) {
	key, err := s.begin(ctx, in.Session)
	if err != nil {
		return nil, nil, err
	}
	event := strings.TrimSpace(in.Event)
	if event == "" {
		return nil, nil, s.withEvents(ctx, key, "name an event to send")
	}
	if len(event) >= len(engine.InterruptEventPrefix) && strings.EqualFold(event[:len(engine.InterruptEventPrefix)], engine.InterruptEventPrefix) {
		// Interrupts fire when the runtime sees a matching edit; an agent
		// that could fire them would jump into handler states at will.
		return nil, nil, s.withEvents(ctx, key, "transition refused: "+engine.InterruptEventPrefix+"<name> events are not the agent's to send; "+
			"an interrupt fires by itself when you edit a file it watches")
	}
	// The call's tool_use_id makes a retried call (a replica died before
	// answering) replay the first result instead of moving the run twice.
	res, err := s.rt.Transition(runtime.WithRequestID(ctx, toolUseID(req)), key, event, in.Data, s.actor())
	if errors.Is(err, runtime.ErrApprovalPending) {
		if out := s.stillPending(ctx, key, event); out != nil {
			return jsonResult(out)
		}
	}
	if err != nil {
		return nil, nil, s.explain(ctx, key, err)
	}
	out := TransitionView{Transitioned: !res.Parked, From: res.From, To: res.To, RequiresApproval: res.Parked,
		ApprovalID: res.ApprovalID, IsFinal: res.Final}
	if v, err := s.rt.Status(ctx, key); err == nil {
		out.StateSnapshot = stateView(key, v)
	}
	switch {
	case res.Parked:
		out.IsFinal = false
		out.Message = fmt.Sprintf("Transition %s → %s needs a human's approval (approval id %s). A human must run `%s`. "+
			"Until then the run stays in '%s' with its tools; call statewright_get_state to see whether it was granted.",
			res.From, res.To, res.ApprovalID, approveCommand(key, res.ApprovalID), res.From)
	case res.Final:
		out.Message = fmt.Sprintf("Moved from '%s' to '%s', a final state: the workflow is complete.", res.From, res.To)
	default:
		out.Message = fmt.Sprintf("Moved from '%s' to '%s'.", res.From, res.To)
		if out.StateSnapshot != nil && out.StateSnapshot.Instructions != "" {
			out.Message += " Instructions: " + out.StateSnapshot.Instructions
		}
	}
	if res.Message != "" {
		out.Message += " Note from the workflow: " + res.Message
	}
	return jsonResult(out)
}

// stillPending answers a request for the very transition that already
// awaits approval: not an error, the same answer as when it parked. (A
// harness that asked its user about this call grants the approval when the
// call completes: see runtime's Ask.) Another event, or no pending approval
// to read, returns nil.
func (s *Server) stillPending(ctx context.Context, key, event string) *TransitionView {
	v, err := s.rt.Status(ctx, key)
	if err != nil || v == nil || v.Run == nil || v.Run.PendingApproval == nil || !strings.EqualFold(v.Run.PendingApproval.Event, event) {
		return nil
	}
	a := v.Run.PendingApproval
	return &TransitionView{From: a.From, To: a.To, RequiresApproval: true, ApprovalID: a.ID, StateSnapshot: stateView(key, v),
		Message: fmt.Sprintf("Transition %s → %s (event %s) already awaits a human's approval (approval id %s). If a person approved it "+
			"in your harness's permission prompt just now, the run moves on as this call completes: call statewright_get_state to see. "+
			"Otherwise a human must run `%s`; until then keep working with the tools of '%s'.",
			a.From, a.To, a.Event, a.ID, approveCommand(key, a.ID), a.From)}
}

// --- requests a human grants ---

func (s *Server) pause(ctx context.Context, req *mcp.CallToolRequest, in RequestArgs) (*mcp.CallToolResult, any, error) {
	return s.request(ctx, req, in.Session, ToolPause, "pause", "", in.Reason)
}

func (s *Server) deactivate(ctx context.Context, req *mcp.CallToolRequest, in RequestArgs) (*mcp.CallToolResult, any, error) {
	return s.request(ctx, req, in.Session, ToolDeactivate, "deactivate", "", in.Reason)
}

func (s *Server) forceState(ctx context.Context, req *mcp.CallToolRequest, in ForceStateArgs) (*mcp.CallToolResult, any, error) {
	target := strings.TrimSpace(in.State)
	if target == "" {
		return nil, nil, errors.New("name the state you ask a human to force")
	}
	return s.request(ctx, req, in.Session, ToolForceState, "force-state", target, in.Reason)
}

// ToolUseIDMetaKey is the tools/call _meta key in which Claude Code passes
// the call's tool_use_id (the id its PreToolUse hook saw).
const ToolUseIDMetaKey = "claudecode/toolUseId"

// toolUseID returns the harness's tool_use_id of a call, when it sent one.
func toolUseID(req *mcp.CallToolRequest) string {
	if req == nil || req.Params == nil {
		return ""
	}
	id, _ := req.Params.Meta[ToolUseIDMetaKey].(string)
	return truncate(id, 200)
}

// humanCommand is the command a human runs to grant a request. statewright
// has no command that forces a state: an operator ends the run instead.
func humanCommand(action, session string) string {
	if action == "force-state" {
		return "statewright deactivate " + session
	}
	return "statewright " + action + " " + session
}

// request records an agent's request for a human-only operation as an
// admin event in the session's log (with the harness's tool_use_id, which
// ties it to the hook's decision on the same call) and changes nothing else.
func (s *Server) request(ctx context.Context, req *mcp.CallToolRequest, stamp, tool, action, target, reason string) (*mcp.CallToolResult, any, error) {
	key, err := s.begin(ctx, stamp)
	if err != nil {
		return nil, nil, err
	}
	cmd := humanCommand(action, key)
	data, err := json.Marshal(map[string]any{
		"request": action, "status": "requested", "performed": false,
		"target_state": target, "reason": truncate(reason, 2000), "actor": s.actor(), "grant_with": cmd,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("statewright: encode request: %w", err)
	}
	out := RequestView{Requested: true, Action: action, Session: key, Command: cmd}
	err = s.st.Update(ctx, key, func(tx store.Tx) error {
		ev := &store.Event{Kind: store.KindAdmin, Tool: tool, Rule: "mcp.admin_request", ToolUseID: toolUseID(req),
			Reason: "agent asked to " + action + " through MCP; not performed: a human must run `" + cmd + "`",
			Data:   data}
		if run := tx.Run(); run != nil {
			ev.State = run.State
		}
		if err := tx.Append(ev); err != nil {
			return err
		}
		out.State, out.EventSeq = ev.State, ev.Seq
		return nil
	})
	if err != nil {
		return nil, nil, s.storeError(err)
	}
	out.Message = fmt.Sprintf("Not done: an agent cannot %s its own run. Your request is recorded (event %d); "+
		"a human must run `%s` to grant it.", action, out.EventSeq, cmd)
	if action == "force-state" {
		out.Message = fmt.Sprintf("Not done: an agent cannot force its run into another state. Your request for state '%s' "+
			"is recorded (event %d); a human decides (statewright offers no way to force a state: an operator can end the run "+
			"with `%s` and start another).", target, out.EventSeq, cmd)
	}
	if out.State != "" {
		out.Message += fmt.Sprintf(" Meanwhile the run stays in '%s' and its rules still apply.", out.State)
	} else {
		out.Message += " This session has no live run."
	}
	return jsonResult(out)
}

// --- teaching errors ---

// lastRun returns the session's newest run if it has ended (nil otherwise,
// and on a store error: the summary is informational).
func (s *Server) lastRun(ctx context.Context, key string) *EndedRun {
	runs, err := s.st.Runs(ctx, store.RunFilter{SessionKey: key, Limit: 1})
	if err != nil || len(runs) == 0 || runs[0].Status.Live() {
		return nil
	}
	r := runs[0]
	return &EndedRun{RunID: r.ID, Workflow: r.WorkflowID, State: r.State, Status: r.Status}
}

// known reports whether name is a listed workflow (by name or path) or an
// existing file.
func (s *Server) known(name string) bool {
	ws, _ := s.workflows()
	for _, w := range ws {
		if w.Name == name || (w.Path != "" && w.Path == name) {
			return true
		}
	}
	_, err := os.Stat(name)
	return err == nil
}

// startable renders the workflows an agent may start.
func (s *Server) startable() string {
	ws, _ := s.workflows()
	return workflowNames(ws)
}

// storeError is the fail-closed message for an error the agent cannot fix.
func (s *Server) storeError(err error) error {
	return fmt.Errorf("statewright could not complete the call, so nothing was changed (a human should look at the store): %w", err)
}

// startError explains why a start was refused.
func (s *Server) startError(ctx context.Context, key, name string, err error) error {
	switch {
	case errors.Is(err, runtime.ErrRunActive):
		msg := "a run is already live for this session"
		if v, e := s.rt.Status(ctx, key); e == nil && v != nil && v.Run != nil {
			msg = fmt.Sprintf("a run of workflow %s is already live for this session (state '%s', %s)", v.Run.WorkflowID, v.Run.State, v.Run.Status)
		}
		return fmt.Errorf("cannot start %s: %s. An agent cannot replace or restart a live run: finish it (reach a final state) "+
			"or ask a human to run `statewright deactivate %s`", name, msg, key)
	case errors.Is(err, runtime.ErrNotAllowed):
		if !s.known(name) {
			return fmt.Errorf("cannot start %s: no workflow has that name. Workflows you may start: %s", name, s.startable())
		}
		return fmt.Errorf("cannot start %s: the project does not let an agent start this workflow (agents may start bundled "+
			"templates and workflows in .statewright/workflows/). Workflows you may start: %s", name, s.startable())
	case errors.Is(err, runtime.ErrWorkflow):
		return fmt.Errorf("cannot start %s: %v. Workflows you may start: %s", name, err, s.startable())
	}
	return s.storeError(err)
}

// explain turns a runtime error about a live run into a message that says
// what to do instead.
func (s *Server) explain(ctx context.Context, key string, err error) error {
	switch {
	case errors.Is(err, runtime.ErrNoRun):
		ended := ""
		if r := s.lastRun(ctx, key); r != nil {
			ended = fmt.Sprintf(" Its last run (workflow %s) ended in state '%s' (%s).", r.Workflow, r.State, r.Status)
		}
		return fmt.Errorf("no active workflow for this session (%s).%s Start one with statewright_start; workflows you may start: %s",
			key, ended, s.startable())
	case errors.Is(err, runtime.ErrApprovalPending):
		if v, e := s.rt.Status(ctx, key); e == nil && v != nil && v.Run != nil && v.Run.PendingApproval != nil {
			a := v.Run.PendingApproval
			return fmt.Errorf("a transition (%s: %s → %s) is awaiting a human's approval (approval id %s); no other transition is "+
				"possible until a human runs `%s` or rejects it. Keep working with the tools of '%s'",
				a.Event, a.From, a.To, a.ID, approveCommand(key, a.ID), a.From)
		}
		return fmt.Errorf("a transition is awaiting a human's approval; no other transition is possible until it is decided: %w", err)
	case errors.Is(err, runtime.ErrPaused):
		return fmt.Errorf("the run is paused by a human; it moves again after `statewright resume %s`: %w", key, err)
	}
	var te *engine.TransitionError
	if errors.As(err, &te) || errors.Is(err, runtime.ErrTransition) {
		msg := "transition refused: " + err.Error()
		if te != nil {
			msg = "transition refused: " + te.Error()
			if errors.Is(te, engine.ErrNoTransition) || errors.Is(te, engine.ErrAmbiguousEvent) || errors.Is(te, engine.ErrFinalState) {
				return errors.New(msg) // the engine's message lists the events already
			}
		}
		return s.withEvents(ctx, key, msg)
	}
	if errors.Is(err, runtime.ErrNotAllowed) {
		return fmt.Errorf("not allowed: %w", err)
	}
	return s.storeError(err)
}

// withEvents appends the current state's events to msg.
func (s *Server) withEvents(ctx context.Context, key, msg string) error {
	v, err := s.rt.Status(ctx, key)
	if err != nil || v == nil || v.Run == nil {
		return errors.New(msg)
	}
	if len(v.NextEvents) == 0 {
		return fmt.Errorf("%s. State '%s' has no events", msg, v.Run.State)
	}
	parts := make([]string, 0, len(v.NextEvents))
	for _, e := range v.NextEvents {
		parts = append(parts, e.String())
	}
	return fmt.Errorf("%s. Valid events from '%s': %s", msg, v.Run.State, strings.Join(parts, "; "))
}
