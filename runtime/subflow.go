package runtime

import (
	"context"
	"fmt"
	"maps"

	"github.com/statewright-go/statewright/engine"
	"github.com/statewright-go/statewright/store"
)

// ChildResult is how the child work of an invoke or fork transition ended,
// as an orchestrator (the agent runner) ran it.
type ChildResult struct {
	// Failed reports that the child work failed (the run goes to on_fail).
	Failed bool
	// Context is shallow-merged into the run's context (the child's final
	// context, or the joined branches').
	Context map[string]any
	// Note says what ran, for the transition event ("invoke fix-bug: run_…").
	Note string
}

// CompleteDeferred takes an invoke or fork event whose child work an
// orchestrator has run: the run moves to the transition's on_complete
// state, or to on_fail when the child work failed, with the child's context
// merged into its own. Transition, by contrast, moves to on_complete at
// once without any child work. The event must resolve to an invoke or fork
// transition (else ErrTransition); a failure without on_fail is refused
// with ErrTransition and leaves the run where it is. Same rules as
// Transition otherwise (paused, pending approval, interrupts by people only).
func (s *Service) CompleteDeferred(ctx context.Context, session, ev string, child ChildResult, by Actor) (TransitionResult, error) {
	var (
		res     TransitionResult
		refused error
	)
	err := s.st.Update(ctx, session, func(tx store.Tx) error {
		res, refused = TransitionResult{}, nil
		run := tx.Run()
		switch {
		case run == nil:
			return ErrNoRun
		case run.Status == store.StatusPaused:
			return ErrPaused
		case run.PendingApproval != nil || run.Status == store.StatusAwaitingApproval:
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
		out, err := engine.Step(c.Def, snap, ev, nil)
		if err == nil && out.Invoke == nil && out.Fork == nil {
			err = fmt.Errorf("event %q in state '%s' is not an invoke or fork", ev, run.State)
		}
		if err == nil && child.Failed {
			onFail := ""
			if out.Invoke != nil {
				onFail = out.Invoke.OnFail
			} else {
				onFail = out.Fork.OnFail
			}
			if onFail == "" {
				err = fmt.Errorf("the child work of %q failed and the transition has no on_fail", ev)
			} else {
				out.To = onFail
				out.Final = c.Def.States[onFail].IsFinal()
			}
		}
		if err != nil {
			refused = err
			return tx.Append(event(store.KindTransition, run.State, map[string]any{
				"event": ev, "refused": true, "error": err.Error(), "actor": by}))
		}
		if len(child.Context) > 0 {
			merged := maps.Clone(out.Context)
			if merged == nil {
				merged = map[string]any{}
			}
			maps.Copy(merged, child.Context)
			out.Context = merged
		}
		res = TransitionResult{From: out.From, To: out.To, Outcome: out, Final: out.Final}
		return s.moveTx(tx, run, out, by, map[string]any{"deferred": "child work ran in an orchestrator", "child_failed": child.Failed, "child": child.Note})
	})
	if err == nil && refused != nil {
		err = fmt.Errorf("%w: %w", ErrTransition, refused)
	}
	if err != nil {
		return TransitionResult{}, fmt.Errorf("runtime: complete %s %q: %w", session, ev, err)
	}
	return res, nil
}
