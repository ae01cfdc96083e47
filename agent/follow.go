package agent

import (
	"context"
	"errors"
	"time"

	"github.com/statewright-go/statewright/agent/tools"
	"github.com/statewright-go/statewright/store"
)

// followPollEvery is how often followPhase reads the run in a store that
// delivers no changes (store.Watcher).
const followPollEvery = 250 * time.Millisecond

// followPhase returns a context for a command decided in phase that is
// cancelled with tools.ErrPhaseLeft as soon as the store has the run in
// another phase (or without a live run): a person's transition, approve,
// the TUI, serve on another host. The command's sandbox dies with it
// (tools.Sandbox.RunIn kills it), as the watcher stops the phase's sandbox
// of a hook-routed harness (docs/sandbox.md, "One sandbox per phase").
// stop ends the following; call it when the command has ended. A store
// that cannot be read at the moment changes nothing: the command runs on
// until its timeout.
func followPhase(ctx context.Context, st store.Store, session, phase string) (_ context.Context, stop func()) {
	cctx, cancel := context.WithCancelCause(ctx)
	wctx, wcancel := context.WithCancel(cctx)
	var changes <-chan store.Change
	if w, ok := st.(store.Watcher); ok {
		if ch, err := w.Watch(wctx); err == nil {
			changes = ch
		}
	}
	left := func() bool {
		run, err := st.LiveRun(wctx, session)
		switch {
		case err == nil:
			return run.State != phase
		case errors.Is(err, store.ErrNotFound):
			return true
		}
		return false
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		// After Watch: no change falls between.
		if left() {
			cancel(tools.ErrPhaseLeft)
			return
		}
		tick := time.NewTicker(followPollEvery)
		defer tick.Stop()
		for {
			select {
			case <-wctx.Done():
				return
			case c, ok := <-changes:
				if !ok {
					changes = nil // the store stopped delivering: poll
					continue
				}
				if (c.Resync() || c.SessionKey == session) && left() {
					cancel(tools.ErrPhaseLeft)
					return
				}
			case <-tick.C:
				if changes == nil && left() {
					cancel(tools.ErrPhaseLeft)
					return
				}
			}
		}
	}()
	return cctx, func() {
		wcancel()
		<-done
		cancel(nil)
	}
}
