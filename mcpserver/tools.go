package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/statewright-go/statewright/control"
	"github.com/statewright-go/statewright/runtime"
)

// Tool names. The harness shows them to the model as
// mcp__<server name>__<tool>, e.g. mcp__statewright__statewright_get_state.
const (
	ToolListWorkflows = control.ToolListWorkflows
	ToolStart         = control.ToolStart
	ToolLoadWorkflow  = control.ToolLoadWorkflow // alias of ToolStart (statewright's name)
	ToolGetState      = control.ToolGetState
	ToolTransition    = control.ToolTransition
	ToolGetStatus     = control.ToolGetStatus
	ToolPause         = control.ToolPause
	ToolDeactivate    = control.ToolDeactivate
	ToolForceState    = control.ToolForceState
)

// ToolNames lists every tool the server offers, in tools/list order.
var ToolNames = control.ToolNames

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
		Description: "Summarise this session: active workflow, state, iteration, pending approval, the workflows available and, through a gateway, each upstream server's state."},
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
func jsonResult(v any, err error) (*mcp.CallToolResult, any, error) {
	if err != nil {
		return nil, nil, err
	}
	text, err := control.Render(v)
	if err != nil {
		return nil, nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: v}, nil, nil
}

// Each handler admits the call (store check, session) and runs the
// operation in package control.

func (s *Server) listWorkflows(ctx context.Context, _ *mcp.CallToolRequest, in NoArgs) (*mcp.CallToolResult, any, error) {
	key, err := s.begin(ctx, in.Session)
	if err != nil {
		return nil, nil, err
	}
	return jsonResult(s.ctl.ListWorkflows(ctx, key))
}

func (s *Server) getState(ctx context.Context, _ *mcp.CallToolRequest, in NoArgs) (*mcp.CallToolResult, any, error) {
	key, err := s.begin(ctx, in.Session)
	if err != nil {
		return nil, nil, err
	}
	return jsonResult(s.ctl.State(ctx, key))
}

func (s *Server) getStatus(ctx context.Context, _ *mcp.CallToolRequest, in NoArgs) (*mcp.CallToolResult, any, error) {
	key, err := s.begin(ctx, in.Session)
	if err != nil {
		return nil, nil, err
	}
	v, err := s.ctl.Status(ctx, key)
	if err == nil && s.opts.Upstreams != nil {
		v.Upstreams = s.opts.Upstreams()
	}
	return jsonResult(v, err)
}

func (s *Server) start(ctx context.Context, _ *mcp.CallToolRequest, in StartArgs) (*mcp.CallToolResult, any, error) {
	key, err := s.begin(ctx, in.Session)
	if err != nil {
		return nil, nil, err
	}
	return jsonResult(s.ctl.Start(ctx, key, in.Name, s.actor()))
}

func (s *Server) transition(ctx context.Context, req *mcp.CallToolRequest, in TransitionArgs) (*mcp.CallToolResult, any, error) {
	key, err := s.begin(ctx, in.Session)
	if err != nil {
		return nil, nil, err
	}
	// The call's tool_use_id makes a retried call (a replica died before
	// answering) replay the first result instead of moving the run twice.
	return jsonResult(s.ctl.Transition(runtime.WithRequestID(ctx, toolUseID(req)), key, in.Event, in.Data, s.actor()))
}

func (s *Server) pause(ctx context.Context, req *mcp.CallToolRequest, in RequestArgs) (*mcp.CallToolResult, any, error) {
	return s.request(ctx, req, in.Session, control.Request{Action: control.ActionPause, Reason: in.Reason})
}

func (s *Server) deactivate(ctx context.Context, req *mcp.CallToolRequest, in RequestArgs) (*mcp.CallToolResult, any, error) {
	return s.request(ctx, req, in.Session, control.Request{Action: control.ActionDeactivate, Reason: in.Reason})
}

func (s *Server) forceState(ctx context.Context, req *mcp.CallToolRequest, in ForceStateArgs) (*mcp.CallToolResult, any, error) {
	return s.request(ctx, req, in.Session, control.Request{Action: control.ActionForceState, Target: in.State, Reason: in.Reason})
}

// request files an agent's request for a human-only operation (see
// control.FileRequest), tied to the harness's tool_use_id of the call.
func (s *Server) request(ctx context.Context, req *mcp.CallToolRequest, stamp string, r control.Request) (*mcp.CallToolResult, any, error) {
	key, err := s.begin(ctx, stamp)
	if err != nil {
		return nil, nil, err
	}
	r.ToolUseID = toolUseID(req)
	return jsonResult(s.ctl.FileRequest(ctx, key, r, s.actor()))
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
