package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/statewright-go/statewright/engine"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
)

// ListWorkflows lists the workflows the session may start and names its
// live run's workflow.
func (c *Control) ListWorkflows(ctx context.Context, session string) (*ListView, error) {
	ws, err := c.Workflows()
	if err != nil {
		return nil, fmt.Errorf("statewright: %w", err)
	}
	out := &ListView{Workflows: []string{}, Details: ws}
	for _, w := range ws {
		out.Workflows = append(out.Workflows, w.Name)
	}
	v, err := c.rt.Status(ctx, session)
	switch {
	case err == nil && v != nil && v.Run != nil:
		out.Active = &v.Run.WorkflowID
	case err != nil && !errors.Is(err, runtime.ErrNoRun):
		return nil, storeError(err)
	}
	return out, nil
}

// State returns the session's live run as the agent sees it (ErrNoRun,
// explained, when there is none).
func (c *Control) State(ctx context.Context, session string) (*StateView, error) {
	v, err := c.rt.Status(ctx, session)
	if err != nil {
		return nil, c.explain(ctx, session, err)
	}
	return c.stateView(session, v), nil
}

// Status summarises the session: its live run (or its last ended one) and
// the workflows available.
func (c *Control) Status(ctx context.Context, session string) (*StatusView, error) {
	out := &StatusView{Session: session, AvailableWorkflows: []string{}}
	ws, err := c.Workflows()
	if err != nil {
		return nil, fmt.Errorf("statewright: %w", err)
	}
	for _, w := range ws {
		out.AvailableWorkflows = append(out.AvailableWorkflows, w.Name)
	}
	v, err := c.rt.Status(ctx, session)
	if err != nil {
		if errors.Is(err, runtime.ErrNoRun) {
			out.LastRun = c.lastRun(ctx, session)
			return out, nil
		}
		return nil, storeError(err)
	}
	sv := c.stateView(session, v)
	out.ActiveWorkflow, out.RunID, out.Status, out.CurrentState = &sv.Workflow, &sv.RunID, &sv.Status, &sv.State
	out.Iteration, out.IsFinal, out.PendingApproval = &sv.Iteration, &sv.IsFinal, sv.PendingApproval
	return out, nil
}

// Start starts the named workflow (a template, or a project workflow by
// its bare name) for the session, as by.
func (c *Control) Start(ctx context.Context, session, name string, by runtime.Actor) (*StartView, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return nil, fmt.Errorf("name a workflow to start; workflows you may start: %s", c.startable())
	}
	v, err := c.rt.Start(ctx, session, c.ResolveWorkflow(name), by)
	if err != nil {
		return nil, c.startError(ctx, session, name, err)
	}
	sv := c.stateView(session, v)
	msg := fmt.Sprintf("Started workflow %s for this session; the run is in state '%s'.", sv.Workflow, sv.State)
	if sv.Instructions != "" {
		msg += " Instructions: " + sv.Instructions
	}
	if len(v.Warnings) > 0 {
		msg += " The workflow has warnings (tell the user): " + strings.Join(v.Warnings, "; ")
	}
	return &StartView{Loaded: true, Workflow: sv.Workflow, RunID: sv.RunID, InitialState: sv.State,
		Message: msg, StateSnapshot: sv, Warnings: v.Warnings}, nil
}

// Transition sends event (with optional data, which lands under data.*)
// to the session's run, as by. With a request id in ctx
// (runtime.WithRequestID) a retried request answers the first result
// instead of moving the run twice. Asking again for the very transition
// that awaits approval is not an error: it answers as when it parked.
func (c *Control) Transition(ctx context.Context, session, event string, data map[string]any, by runtime.Actor) (*TransitionView, error) {
	event = strings.TrimSpace(event)
	if event == "" {
		return nil, c.withEvents(ctx, session, "name an event to send")
	}
	res, err := c.rt.Transition(ctx, session, event, data, by)
	if errors.Is(err, runtime.ErrApprovalPending) {
		if out := c.stillPending(ctx, session, event); out != nil {
			return out, nil
		}
	}
	if err != nil {
		return nil, c.explain(ctx, session, err)
	}
	out := &TransitionView{Transitioned: !res.Parked, From: res.From, To: res.To, RequiresApproval: res.Parked,
		ApprovalID: res.ApprovalID, IsFinal: res.Final}
	if v, err := c.rt.Status(ctx, session); err == nil {
		out.StateSnapshot = c.stateView(session, v)
	}
	switch {
	case res.Parked:
		out.IsFinal = false
		out.Message = fmt.Sprintf("Transition %s → %s needs a human's approval (approval id %s). A human must run `%s`. "+
			"Until then the run stays in '%s' with its tools; call statewright_get_state to see whether it was granted.",
			res.From, res.To, res.ApprovalID, approveCommand(session, res.ApprovalID), res.From)
	case res.Final:
		out.Message = fmt.Sprintf("Moved from '%s' to '%s', a final state: the workflow is complete.", res.From, res.To)
	default:
		out.Message = fmt.Sprintf("Moved from '%s' to '%s'.", res.From, res.To)
		if out.StateSnapshot != nil && out.StateSnapshot.Instructions != "" {
			out.Message += " Instructions: " + out.StateSnapshot.Instructions
		}
	}
	for _, sf := range res.Subflows {
		out.Message += " " + sf.String()
	}
	if res.Message != "" {
		out.Message += " Note from the workflow: " + res.Message
	}
	return out, nil
}

// stillPending answers a request for the very transition that already
// awaits approval: not an error, the same answer as when it parked. (A
// harness that asked its user about this call grants the approval when the
// call completes: see runtime's Ask.) Another event, or no pending approval
// to read, returns nil.
func (c *Control) stillPending(ctx context.Context, session, event string) *TransitionView {
	v, err := c.rt.Status(ctx, session)
	if err != nil || v == nil || v.Run == nil || v.Run.PendingApproval == nil || !strings.EqualFold(v.Run.PendingApproval.Event, event) {
		return nil
	}
	a := v.Run.PendingApproval
	return &TransitionView{From: a.From, To: a.To, RequiresApproval: true, ApprovalID: a.ID, StateSnapshot: c.stateView(session, v),
		Message: fmt.Sprintf("Transition %s → %s (event %s) already awaits a human's approval (approval id %s). If a person approved it "+
			"in your harness's permission prompt just now, the run moves on as this call completes: call statewright_get_state to see. "+
			"Otherwise a human must run `%s`; until then keep working with the tools of '%s'.",
			a.From, a.To, a.Event, a.ID, approveCommand(session, a.ID), a.From)}
}

// Request actions: operations only a person may perform, which an agent
// can only ask for.
const (
	ActionPause      = "pause"
	ActionDeactivate = "deactivate"
	ActionForceState = "force-state"
)

// Request is an agent's request for a human-only operation.
type Request struct {
	// Action is ActionPause, ActionDeactivate or ActionForceState.
	Action string
	// Target is the state asked for (ActionForceState only).
	Target string
	// Reason is why the agent asks; shown to the person who decides.
	Reason string
	// ToolUseID is the harness's id of the call that asked, tying the
	// request to the hook's decision on the same call ("" when unknown).
	ToolUseID string
}

// requestTools are the operation names of the request actions.
var requestTools = map[string]string{ActionPause: ToolPause, ActionDeactivate: ToolDeactivate, ActionForceState: ToolForceState}

// humanCommand is the command a human runs to grant a request. statewright
// has no command that forces a state: an operator ends the run instead.
func humanCommand(action, session string) string {
	if action == ActionForceState {
		return "statewright deactivate " + session
	}
	return "statewright " + action + " " + session
}

// FileRequest records a request for a human-only operation as an admin
// event in the session's log and changes nothing else: an agent cannot
// pause, end or force its own run.
func (c *Control) FileRequest(ctx context.Context, session string, r Request, by runtime.Actor) (*RequestView, error) {
	tool, ok := requestTools[r.Action]
	if !ok {
		return nil, fmt.Errorf("control: unknown request action %q", r.Action)
	}
	r.Target = strings.TrimSpace(r.Target)
	if r.Action == ActionForceState && r.Target == "" {
		return nil, errors.New("name the state you ask a human to force")
	}
	cmd := humanCommand(r.Action, session)
	data, err := json.Marshal(map[string]any{
		"request": r.Action, "status": "requested", "performed": false,
		"target_state": r.Target, "reason": truncate(r.Reason, 2000), "actor": by, "grant_with": cmd,
	})
	if err != nil {
		return nil, fmt.Errorf("statewright: encode request: %w", err)
	}
	out := &RequestView{Requested: true, Action: r.Action, Session: session, Command: cmd}
	err = c.st.Update(ctx, session, func(tx store.Tx) error {
		ev := &store.Event{Kind: store.KindAdmin, Tool: tool, Rule: "mcp.admin_request", ToolUseID: truncate(r.ToolUseID, 200),
			Reason: "agent asked to " + r.Action + " through " + by.Channel + "; not performed: a human must run `" + cmd + "`",
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
		return nil, storeError(err)
	}
	out.Message = fmt.Sprintf("Not done: an agent cannot %s its own run. Your request is recorded (event %d); "+
		"a human must run `%s` to grant it.", r.Action, out.EventSeq, cmd)
	if r.Action == ActionForceState {
		out.Message = fmt.Sprintf("Not done: an agent cannot force its run into another state. Your request for state '%s' "+
			"is recorded (event %d); a human decides (statewright offers no way to force a state: an operator can end the run "+
			"with `%s` and start another).", r.Target, out.EventSeq, cmd)
	}
	if out.State != "" {
		out.Message += fmt.Sprintf(" Meanwhile the run stays in '%s' and its rules still apply.", out.State)
	} else {
		out.Message += " This session has no live run."
	}
	return out, nil
}

// truncate cuts s to at most n runes, marking the cut.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// --- teaching errors ---

// lastRun returns the session's newest run if it has ended (nil otherwise,
// and on a store error: the summary is informational).
func (c *Control) lastRun(ctx context.Context, session string) *EndedRun {
	runs, err := c.st.Runs(ctx, store.RunFilter{SessionKey: session, Limit: 1})
	if err != nil || len(runs) == 0 || runs[0].Status.Live() {
		return nil
	}
	r := runs[0]
	return &EndedRun{RunID: r.ID, Workflow: r.WorkflowID, State: r.State, Status: r.Status}
}

// startError explains why a start was refused.
func (c *Control) startError(ctx context.Context, session, name string, err error) error {
	switch {
	case errors.Is(err, runtime.ErrRunActive):
		msg := "a run is already live for this session"
		if v, e := c.rt.Status(ctx, session); e == nil && v != nil && v.Run != nil {
			msg = fmt.Sprintf("a run of workflow %s is already live for this session (state '%s', %s)", v.Run.WorkflowID, v.Run.State, v.Run.Status)
		}
		return fmt.Errorf("cannot start %s: %s. An agent cannot replace or restart a live run: finish it (reach a final state) "+
			"or ask a human to run `statewright deactivate %s`", name, msg, session)
	case errors.Is(err, runtime.ErrNotAllowed):
		if !c.known(name) {
			return fmt.Errorf("cannot start %s: no workflow has that name. Workflows you may start: %s", name, c.startable())
		}
		return fmt.Errorf("cannot start %s: the project does not let an agent start this workflow (agents may start bundled "+
			"templates and workflows in .statewright/workflows/). Workflows you may start: %s", name, c.startable())
	case errors.Is(err, runtime.ErrWorkflow):
		return fmt.Errorf("cannot start %s: %v. Workflows you may start: %s", name, err, c.startable())
	}
	return storeError(err)
}

// explain turns a runtime error about a live run into a message that says
// what to do instead.
func (c *Control) explain(ctx context.Context, session string, err error) error {
	switch {
	case errors.Is(err, runtime.ErrNoRun):
		ended := ""
		if r := c.lastRun(ctx, session); r != nil {
			if r.Status == store.StatusCompleted {
				// The work the run was for is done: say so, and do not
				// send the agent into another workflow.
				return fmt.Errorf("no active workflow for this session (%s): its run of workflow %s completed in state '%s'. "+
					"The workflow is finished; report the outcome to the user", session, r.Workflow, r.State)
			}
			ended = fmt.Sprintf(" Its last run (workflow %s) ended in state '%s' (%s).", r.Workflow, r.State, r.Status)
		}
		return fmt.Errorf("no active workflow for this session (%s).%s Start one with statewright_start; workflows you may start: %s",
			session, ended, c.startable())
	case errors.Is(err, runtime.ErrApprovalPending):
		if v, e := c.rt.Status(ctx, session); e == nil && v != nil && v.Run != nil && v.Run.PendingApproval != nil {
			a := v.Run.PendingApproval
			return fmt.Errorf("a transition (%s: %s → %s) is awaiting a human's approval (approval id %s); no other transition is "+
				"possible until a human runs `%s` or rejects it. Keep working with the tools of '%s'",
				a.Event, a.From, a.To, a.ID, approveCommand(session, a.ID), a.From)
		}
		return fmt.Errorf("a transition is awaiting a human's approval; no other transition is possible until it is decided: %w", err)
	case errors.Is(err, runtime.ErrPaused):
		return fmt.Errorf("the run is paused by a human; it moves again after `statewright resume %s`: %w", session, err)
	case errors.Is(err, runtime.ErrNotAllowed):
		return c.withEvents(ctx, session, "transition refused: "+err.Error())
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
		return c.withEvents(ctx, session, msg)
	}
	return storeError(err)
}

// withEvents appends the current state's events to msg.
func (c *Control) withEvents(ctx context.Context, session, msg string) error {
	v, err := c.rt.Status(ctx, session)
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
