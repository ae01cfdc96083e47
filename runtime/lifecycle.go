package runtime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/statewright-go/statewright/engine"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/workflow"
)

// pendingKey is the reserved context key that keeps, while a transition
// awaits approval, what the run needs to complete it (the interrupt history
// after the step and any invoke/fork descriptor). Event data can never set
// "_"-prefixed keys.
const pendingKey = "_pending_transition"

// pendingTransition is stored under pendingKey.
type pendingTransition struct {
	History []engine.Frame   `json:"history,omitempty"`
	Invoke  *workflow.Invoke `json:"invoke,omitempty"`
	Fork    *workflow.Fork   `json:"fork,omitempty"`
}

// Start starts workflow for session. The workflow is loaded through the
// WorkflowSource, must validate without errors, and is snapshotted into
// the run, which keeps its law even when the file changes. The run starts
// in the initial state with the definition's context, status active
// (audit-only when Options.AuditOnly is set). An agent may start only when
// the session has no live run and only a workflow the source allows
// (ErrNotAllowed); a live run makes Start fail with ErrRunActive for
// everyone.
func (s *Service) Start(ctx context.Context, session, name string, by Actor) (*RunView, error) {
	if session == "" {
		return nil, fmt.Errorf("runtime: start: %w: no session key", store.ErrInvalid)
	}
	// Anyone not proven human is treated as the agent.
	if by.Kind != ActorHuman && !s.opts.Workflows.AgentMayStart(name) {
		return nil, fmt.Errorf("runtime: start %s: %w: the project does not let agents start this workflow (bundled templates and .statewright/workflows/ only)", name, ErrNotAllowed)
	}
	src, source, err := s.opts.Workflows.Load(name)
	if err != nil {
		return nil, fmt.Errorf("runtime: start: %w: %w", ErrWorkflow, err)
	}
	c, err := s.compile(src, source, nil)
	if err != nil {
		return nil, fmt.Errorf("runtime: start: %w", err)
	}
	def := c.Def
	snapshot, err := s.buildBundle(def, src, source, by.Kind != ActorHuman)
	if err != nil {
		return nil, fmt.Errorf("runtime: start %s: %w", name, err)
	}
	if def.States[def.Initial] == nil {
		return nil, fmt.Errorf("runtime: start %s: %w: initial state %q is not defined", source, ErrWorkflow, def.Initial)
	}
	ctxJSON, err := json.Marshal(def.Context)
	if err != nil {
		return nil, fmt.Errorf("runtime: start %s: encode context: %w", source, err)
	}
	if def.Context == nil {
		ctxJSON = nil
	}
	id := def.ID
	if id == "" {
		id = source
	}
	var warnings []string
	for _, d := range c.Lint {
		warnings = append(warnings, d.String())
	}
	started := map[string]any{"event": "started", "workflow": id, "source": source, "audit_only": s.opts.AuditOnly, "actor": by}
	if len(warnings) > 0 {
		started["warnings"] = warnings
	}
	var view *RunView
	err = s.st.Update(ctx, session, func(tx store.Tx) error {
		view = nil // fn may run more than once
		if tx.Run() != nil {
			return ErrRunActive
		}
		run := &store.Run{SessionKey: session, WorkflowID: id, WorkflowSource: source, Snapshot: snapshot,
			State: def.Initial, Context: ctxJSON, Status: store.StatusActive, AuditOnly: s.opts.AuditOnly}
		final := def.States[def.Initial].IsFinal()
		if final {
			run.Status = store.StatusCompleted
		}
		if err := tx.Put(run); err != nil {
			return fmt.Errorf("write run: %w", err)
		}
		if err := tx.Append(
			event(store.KindRun, run.State, started),
			event(store.KindTransition, run.State, map[string]any{"from": "", "to": run.State, "event": "start", "actor": by}),
		); err != nil {
			return fmt.Errorf("append events: %w", err)
		}
		view = s.view(run, c)
		view.Warnings = warnings
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("runtime: start %s for %s: %w", name, session, err)
	}
	return view, nil
}

// StartDefault starts Options.DefaultWorkflow for session when one is
// configured and the session has no live run (SessionStart). It reports
// whether it started a run; a live run is not an error. The default
// workflow comes from the operator's hook configuration, so by should
// carry that authority (the adapter decides which Actor to claim).
func (s *Service) StartDefault(ctx context.Context, session string, by Actor) (*RunView, bool, error) {
	if s.opts.DefaultWorkflow == "" {
		return nil, false, nil
	}
	v, err := s.Start(ctx, session, s.opts.DefaultWorkflow, by)
	if errors.Is(err, ErrRunActive) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return v, true, nil
}

// event builds an event whose Data is data encoded (data is always encodable).
func event(kind store.EventKind, state string, data map[string]any) *store.Event {
	b, err := json.Marshal(data)
	if err != nil {
		b = nil
	}
	return &store.Event{Kind: kind, State: state, Data: b}
}

// Transition resolves an event through the engine with the run's context
// merged with the runtime evidence (guards read runtime.*; agent data lands
// under data.*). A transition that requires approval parks the run
// (status awaiting_approval) with a store.Approval valid for ApprovalTTL;
// a transition while one is parked fails with ErrApprovalPending, and one
// on a paused run with ErrPaused. An invoke starts the invoked
// sub-workflow and a fork its first branch, in the same run (see
// subflow.go): their phases are the law until they end, and then the run
// returns to on_complete or on_fail. Every state change resets iterations,
// files edited and evidence; a final state of the root workflow completes
// the run. A refused event is recorded and returned
// as an error wrapping ErrTransition and the engine's error.
//
// Only a person may send INTERRUPT:<name>: interrupts fire on the edits
// that trigger them, and letting the agent name one would let it jump into
// any handler state the workflow's transitions do not lead to.
//
// With a request id in ctx (WithRequestID) the transition is applied at
// most once: a retry answers the first result.
func (s *Service) Transition(ctx context.Context, session, ev string, data map[string]any, by Actor) (TransitionResult, error) {
	if _, ok := engine.InterruptName(ev); ok && by.Kind != ActorHuman {
		return TransitionResult{}, fmt.Errorf("runtime: transition %s %q: %w: %s<name> events are not the agent's to send; an interrupt fires by itself when you edit a file it watches (only a person may fire one by name)", session, ev, ErrNotAllowed, engine.InterruptEventPrefix)
	}
	var (
		res     TransitionResult
		refused error
	)
	apply := func(tx store.Tx) error {
		run := tx.Run()
		if run != nil && run.PendingApproval != nil && !tx.Now().Before(run.PendingApproval.ExpiresAt) {
			// An expired approval no longer holds the run.
			if err := s.withdrawTx(tx, run, "expired", "", by); err != nil {
				return err
			}
			run = tx.Run()
		}
		switch {
		case run == nil:
			return ErrNoRun
		case run.Status == store.StatusPaused:
			return ErrPaused
		case run.PendingApproval != nil:
			return fmt.Errorf("%w (approval %s to '%s')", ErrApprovalPending, run.PendingApproval.ID, run.PendingApproval.To)
		case run.Status == store.StatusAwaitingApproval:
			return ErrApprovalPending
		}
		c, err := s.compiledFor(run)
		if err != nil {
			return err
		}
		snap, err := snapshot(run)
		if err != nil {
			return err
		}
		out, err := engine.Step(c.Def, snap, ev, data)
		if err == nil {
			err = s.depthRefusal(run, out)
		}
		if err != nil {
			refused = err
			return tx.Append(event(store.KindTransition, run.State, map[string]any{
				"event": ev, "refused": true, "error": err.Error(), "actor": by}))
		}
		res = TransitionResult{From: out.From, To: out.To, Outcome: out, Final: out.Final}
		if out.RequiresApproval {
			ap, err := s.parkTx(tx, run, out, by)
			if err != nil {
				return err
			}
			res.Parked, res.ApprovalID, res.Message = true, ap.ID, ap.Message
			res.To = ap.To
			return nil
		}
		steps, err := s.applyTx(tx, run, out, by, nil)
		if err != nil {
			return err
		}
		res.settled(run, steps)
		return nil
	}
	err := s.st.Update(ctx, session, func(tx store.Tx) error {
		res, refused = TransitionResult{}, nil // fn may run more than once
		return onceTx(tx, RequestID(ctx), &res, func() error { return apply(tx) }, func() bool { return refused == nil })
	})
	if err == nil && refused != nil {
		err = fmt.Errorf("%w: %w", ErrTransition, refused)
	}
	if err != nil {
		return TransitionResult{}, fmt.Errorf("runtime: transition %s %q: %w", session, ev, err)
	}
	return res, nil
}

// parkTx parks run awaiting approval of out.
func (s *Service) parkTx(tx store.Tx, run *store.Run, out engine.Outcome, by Actor) (*store.Approval, error) {
	id, err := newApprovalID()
	if err != nil {
		return nil, err
	}
	ctxOut := maps.Clone(out.Context)
	delete(ctxOut, engine.RuntimeKey)
	apCtx, err := json.Marshal(ctxOut)
	if err != nil {
		return nil, fmt.Errorf("encode approval context: %w", err)
	}
	// Keep what completing the transition needs in the run's context.
	stored, err := decodeContext(run)
	if err != nil {
		return nil, err
	}
	stored[pendingKey] = pendingTransition{History: out.History, Invoke: out.Invoke, Fork: out.Fork}
	if run.Context, err = json.Marshal(stored); err != nil {
		return nil, fmt.Errorf("encode context: %w", err)
	}
	now := tx.Now()
	msg := out.ApprovalMessage
	if msg == "" {
		msg = fmt.Sprintf("move from '%s' to '%s' (event %s)", out.From, out.To, out.Event)
	}
	ap := &store.Approval{ID: id, Event: out.Event, From: out.From, To: out.To, Message: msg, Context: apCtx,
		RequestedAt: now, ExpiresAt: now.Add(s.opts.ApprovalTTL), Revision: run.Revision + 1}
	run.PendingApproval = ap
	run.Status = store.StatusAwaitingApproval
	if err := tx.Put(run); err != nil {
		return nil, fmt.Errorf("write run: %w", err)
	}
	if err := tx.Append(event(store.KindApproval, run.State, map[string]any{
		"action": "requested", "approval_id": id, "event": out.Event, "from": out.From, "to": out.To,
		"message": msg, "expires_at": ap.ExpiresAt, "actor": by})); err != nil {
		return nil, fmt.Errorf("append approval: %w", err)
	}
	return ap, nil
}

func newApprovalID() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("approval id: %w", err)
	}
	return "apr_" + hex.EncodeToString(b[:]), nil
}

// moveTx moves run per out within its current level (the sub-workflow
// stack stays): new state, context (without the runtime evidence and any
// pending transition), interrupt stack; iterations, files edited,
// reservations and evidence reset; status completed in a final state of
// the root workflow, else active. It writes the run and a transition
// event (plus a run event when the run completes). A move that ends child
// work is returned from by settleTx (applyTx does both).
func (s *Service) moveTx(tx store.Tx, run *store.Run, out engine.Outcome, by Actor, extra map[string]any) error {
	_, stack, err := readHistory(run)
	if err != nil {
		return err
	}
	data := map[string]any{"from": run.State, "to": out.To, "event": out.Event, "match": out.Match, "actor": by}
	if out.Interrupt != "" {
		data["interrupt"] = out.Interrupt
	}
	if len(stack) > 0 {
		data["depth"] = len(stack)
	}
	maps.Copy(data, extra)
	return s.putTx(tx, run, out.To, out.Context, out.History, stack, out.Final, data, by)
}

// requireHuman refuses agents. The refusal is returned to the caller; the
// operations record it in the event log.
func requireHuman(by Actor) error {
	if by.Kind != ActorHuman {
		return fmt.Errorf("%w: only a person may do this (actor %s via %s)", ErrNotAllowed, by.Kind, by.Channel)
	}
	return nil
}

// refuseTx records a refused operation and returns err (which Update's
// caller sees after the record is committed).
func refuseTx(tx store.Tx, state, action string, by Actor, err error) error {
	return tx.Append(event(store.KindAdmin, state, map[string]any{"action": action, "refused": true, "error": err.Error(), "actor": by}))
}

// Approve grants the pending approval of the session's run (human actors
// only: agents get ErrNotAllowed, and the refusal is logged). approvalID
// must name the pending approval ("" approves whichever is pending: the
// CLI makes the person confirm it); an expired approval is withdrawn and
// ErrNoApproval returned. The approval is still valid only while the run
// sits in the state it was requested from with that approval parked (any
// state change withdraws it); decisions made meanwhile move the run's
// revision but do not invalidate it. The run then moves to the approved
// target.
//
// With a request id in ctx (WithRequestID) an approval is applied at most
// once: a retry answers the first result instead of "no approval pending".
func (s *Service) Approve(ctx context.Context, session, approvalID string, by Actor) (TransitionResult, error) {
	var (
		res     TransitionResult
		outcome error
	)
	err := s.st.Update(ctx, session, func(tx store.Tx) error {
		res, outcome = TransitionResult{}, nil // fn may run more than once
		return onceTx(tx, RequestID(ctx), &res, func() error {
			var err error
			res, outcome, err = s.approveTx(tx, approvalID, by)
			return err
		}, func() bool { return outcome == nil })
	})
	if err == nil {
		err = outcome
	}
	if err != nil {
		return TransitionResult{}, fmt.Errorf("runtime: approve %s: %w", session, err)
	}
	return res, nil
}

// approveTx is Approve inside a transaction. err rolls the transaction
// back; outcome is a refusal that was recorded (an agent asking, an
// expired or stale approval withdrawn) and must be committed.
func (s *Service) approveTx(tx store.Tx, approvalID string, by Actor) (res TransitionResult, outcome, err error) {
	run := tx.Run()
	if run == nil {
		return res, nil, ErrNoRun
	}
	if err := requireHuman(by); err != nil {
		return res, err, refuseTx(tx, run.State, "approve", by, err)
	}
	ap := run.PendingApproval
	if ap == nil || (approvalID != "" && approvalID != ap.ID) {
		return res, nil, ErrNoApproval
	}
	if run.Status == store.StatusPaused {
		return res, nil, ErrPaused
	}
	if !tx.Now().Before(ap.ExpiresAt) {
		outcome = fmt.Errorf("%w: approval %s expired at %s", ErrNoApproval, ap.ID, ap.ExpiresAt.Format("2006-01-02 15:04:05Z07:00"))
		return res, outcome, s.withdrawTx(tx, run, "expired", "", by)
	}
	if run.State != ap.From || run.Revision < ap.Revision {
		outcome = fmt.Errorf("%w: approval %s is stale (the run is in '%s')", ErrNoApproval, ap.ID, run.State)
		return res, outcome, s.withdrawTx(tx, run, "stale", "", by)
	}
	c, err := s.compiledFor(run)
	if err != nil {
		return res, nil, err
	}
	to := c.Def.States[ap.To]
	if to == nil {
		return res, nil, fmt.Errorf("%w: approved target '%s' is not a state", ErrWorkflow, ap.To)
	}
	apCtx := map[string]any{}
	if len(ap.Context) > 0 {
		if err := json.Unmarshal(ap.Context, &apCtx); err != nil {
			return res, nil, fmt.Errorf("decode approval context: %w", err)
		}
	}
	stored, err := decodeContext(run)
	if err != nil {
		return res, nil, err
	}
	var pend pendingTransition
	if raw, ok := stored[pendingKey]; ok {
		b, _ := json.Marshal(raw)
		if err := json.Unmarshal(b, &pend); err != nil {
			return res, nil, fmt.Errorf("decode pending transition: %w", err)
		}
	}
	out := engine.Outcome{From: ap.From, To: ap.To, Event: ap.Event, Match: engine.MatchExact, Context: apCtx,
		History: pend.History, Invoke: pend.Invoke, Fork: pend.Fork, Final: to.IsFinal(),
		RequiresApproval: true, ApprovalMessage: ap.Message}
	if err := tx.Append(event(store.KindApproval, run.State, map[string]any{
		"action": "granted", "approval_id": ap.ID, "from": ap.From, "to": ap.To, "actor": by})); err != nil {
		return res, nil, fmt.Errorf("append approval: %w", err)
	}
	res = TransitionResult{From: ap.From, To: ap.To, ApprovalID: ap.ID, Message: ap.Message, Outcome: out, Final: out.Final}
	steps, err := s.applyTx(tx, run, out, by, map[string]any{"approval_id": ap.ID})
	if err != nil {
		return res, nil, err
	}
	res.settled(run, steps)
	return res, nil, nil
}

// withdrawTx clears run's pending approval (expired, stale, rejected): the
// run stays in its state, active again (or paused if it was).
func (s *Service) withdrawTx(tx store.Tx, run *store.Run, action, reason string, by Actor) error {
	ap := run.PendingApproval
	run.PendingApproval = nil
	if run.Status == store.StatusAwaitingApproval {
		run.Status = store.StatusActive
	}
	stored, err := decodeContext(run)
	if err != nil {
		return err
	}
	if _, ok := stored[pendingKey]; ok {
		delete(stored, pendingKey)
		if len(stored) == 0 {
			run.Context = nil
		} else if run.Context, err = json.Marshal(stored); err != nil {
			return fmt.Errorf("encode context: %w", err)
		}
	}
	if err := tx.Put(run); err != nil {
		return fmt.Errorf("write run: %w", err)
	}
	data := map[string]any{"action": action, "approval_id": ap.ID, "from": ap.From, "to": ap.To, "actor": by}
	if reason != "" {
		data["reason"] = reason
	}
	return tx.Append(event(store.KindApproval, run.State, data))
}

// Reject refuses the pending approval (human actors only); the run stays
// in its state, active. approvalID "" rejects whichever is pending.
func (s *Service) Reject(ctx context.Context, session, approvalID, reason string, by Actor) error {
	var outcome error
	err := s.st.Update(ctx, session, func(tx store.Tx) error {
		outcome = nil // fn may run more than once
		run := tx.Run()
		if run == nil {
			return ErrNoRun
		}
		if err := requireHuman(by); err != nil {
			outcome = err
			return refuseTx(tx, run.State, "reject", by, err)
		}
		ap := run.PendingApproval
		if ap == nil || (approvalID != "" && approvalID != ap.ID) {
			return ErrNoApproval
		}
		return s.withdrawTx(tx, run, "rejected", reason, by)
	})
	if err == nil {
		err = outcome
	}
	if err != nil {
		return fmt.Errorf("runtime: reject %s: %w", session, err)
	}
	return nil
}

// Pause pauses the session's live run (human actors only): every call but
// read-only control tools is denied until Resume. A pending approval stays.
func (s *Service) Pause(ctx context.Context, session string, by Actor) error {
	return s.admin(ctx, session, "pause", by, pauseRun)
}

// Resume resumes a paused run (human actors only): active again, or
// awaiting_approval when an approval is still pending.
func (s *Service) Resume(ctx context.Context, session string, by Actor) error {
	return s.admin(ctx, session, "resume", by, resumeRun)
}

// Deactivate ends the session's live run (human actors only): status
// deactivated, and the session is dormant again.
func (s *Service) Deactivate(ctx context.Context, session string, by Actor) error {
	return s.admin(ctx, session, "deactivate", by, deactivateRun)
}

func pauseRun(run *store.Run) error {
	run.Status = store.StatusPaused
	return nil
}

func resumeRun(run *store.Run) error {
	if run.Status != store.StatusPaused {
		return fmt.Errorf("%w: the run is %s, not paused", ErrNotAllowed, run.Status)
	}
	run.Status = store.StatusActive
	if run.PendingApproval != nil {
		run.Status = store.StatusAwaitingApproval
	}
	return nil
}

func deactivateRun(run *store.Run) error {
	run.Status = store.StatusDeactivated
	return nil
}

// admin runs a human-only status change on the live run, recording who
// did it (or who was refused).
func (s *Service) admin(ctx context.Context, session, action string, by Actor, fn func(run *store.Run) error) error {
	var outcome error
	err := s.st.Update(ctx, session, func(tx store.Tx) error {
		var err error
		outcome, err = s.adminTx(tx, action, by, fn)
		return err
	})
	if err == nil {
		err = outcome
	}
	if err != nil {
		return fmt.Errorf("runtime: %s %s: %w", action, session, err)
	}
	return nil
}

// adminTx is admin inside a transaction; err and outcome as for approveTx.
func (s *Service) adminTx(tx store.Tx, action string, by Actor, fn func(run *store.Run) error) (outcome, err error) {
	run := tx.Run()
	if run == nil {
		return nil, ErrNoRun
	}
	if err := requireHuman(by); err != nil {
		return err, refuseTx(tx, run.State, action, by, err)
	}
	from := run.Status
	if err := fn(run); err != nil {
		return nil, err
	}
	if run.Status == from {
		return nil, nil
	}
	if err := tx.Put(run); err != nil {
		return nil, fmt.Errorf("write run: %w", err)
	}
	return nil, tx.Append(event(store.KindAdmin, run.State, map[string]any{"action": action, "from": from, "to": run.Status, "actor": by}))
}

// Status returns the session's live run view (ErrNoRun when none).
func (s *Service) Status(ctx context.Context, session string) (*RunView, error) {
	run, err := s.st.LiveRun(ctx, session)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("runtime: status %s: %w", session, ErrNoRun)
	}
	if err != nil {
		return nil, fmt.Errorf("runtime: status %s: %w", session, err)
	}
	return s.View(run)
}

// View describes a stored run (live or not) for displays.
func (s *Service) View(run *store.Run) (*RunView, error) {
	c, err := s.compiledFor(run)
	if err != nil {
		return nil, fmt.Errorf("runtime: view: %w", err)
	}
	return s.view(run, c), nil
}

func (s *Service) view(run *store.Run, c *Prepared) *RunView {
	v := &RunView{Run: run, NextEvents: []engine.EventInfo{}}
	if st := c.Def.States[run.State]; st != nil {
		v.IsFinal = st.IsFinal()
		v.AllowedTools = st.AllowedTools
		v.Instructions = st.Instructions
		v.MaxIterations = st.MaxIterations
		v.MaxEditLines = st.MaxEditLines
		v.MaxFilesPerState = st.MaxFilesPerState
		if ne := engine.NextEvents(c.Def, run.State); ne != nil {
			v.NextEvents = ne
		}
		phaseFields(v, c.Def, st)
	}
	if rt, err := runtimeContext(run); err == nil {
		v.Runtime = rt
	}
	v.Workflow = c.Def.ID
	if v.Workflow == "" {
		v.Workflow = run.WorkflowID
	}
	v.Stack = s.stackView(run)
	v.Interrupts, _ = decodeHistory(run)
	return v
}

// Runs lists runs, newest first.
func (s *Service) Runs(ctx context.Context, f store.RunFilter) ([]*store.Run, error) {
	runs, err := s.st.Runs(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("runtime: runs: %w", err)
	}
	return runs, nil
}

// History lists a session's events (decisions, results, transitions,
// approvals, admin actions), oldest first.
func (s *Service) History(ctx context.Context, session string) ([]store.Event, error) {
	evs, err := s.st.Events(ctx, store.EventFilter{SessionKey: session})
	if err != nil {
		return nil, fmt.Errorf("runtime: history %s: %w", session, err)
	}
	return evs, nil
}

// Off deactivates every live run (human actors only): the emergency stop.
// It returns the sessions it deactivated; it stops at the first error.
func (s *Service) Off(ctx context.Context, by Actor) ([]string, error) {
	if err := requireHuman(by); err != nil {
		return nil, fmt.Errorf("runtime: off: %w", err)
	}
	runs, err := s.st.Runs(ctx, store.RunFilter{LiveOnly: true})
	if err != nil {
		return nil, fmt.Errorf("runtime: off: %w", err)
	}
	var done []string
	for _, r := range runs {
		err := s.Deactivate(ctx, r.SessionKey, by)
		if errors.Is(err, ErrNoRun) {
			continue // ended meanwhile
		}
		if err != nil {
			return done, fmt.Errorf("runtime: off: %w", err)
		}
		done = append(done, r.SessionKey)
	}
	return done, nil
}
