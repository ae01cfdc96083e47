package sandboxcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/statewright-go/statewright/sandbox"
	"github.com/statewright-go/statewright/store"
)

// RunWatch is `statewright sandbox watch --store LOC --session KEY --root
// DIR --phase P`, which the keeper of a phase's sandbox server runs beside
// it (sandbox.Profile.Watch; docs/sandbox.md, "One sandbox per phase"): it
// follows the session's run in the store and, as soon as the run is in
// another phase than P (or has none), stops the session's server of
// phase P, with everything it runs, whoever moved the run (a person's
// approve or transition, the TUI, the dashboard, serve on another host,
// the agent's control tool). It exits then, when its parent (the keeper)
// exits, or when the store cannot be followed. main calls it before
// building the command tree.
func RunWatch(args []string, stderr io.Writer) int {
	var loc, session, root string
	var phase *string
	for i := 0; i+1 < len(args); i += 2 {
		switch v := args[i+1]; args[i] {
		case "--store":
			loc = v
		case "--session":
			session = v
		case "--root":
			root = v
		case "--phase":
			phase = &v
		}
	}
	if loc == "" || session == "" || root == "" || phase == nil {
		fmt.Fprintln(stderr, "statewright sandbox watch: usage: watch --store LOC --session KEY --root DIR --phase P")
		return 2
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := store.Open(ctx, loc, store.Options{MustExist: true})
	if err != nil {
		fmt.Fprintln(stderr, "statewright sandbox watch:", err)
		return 1
	}
	defer st.Close()
	if err := watchPhase(ctx, st, root, session, *phase, os.Getppid); err != nil {
		fmt.Fprintln(stderr, "statewright sandbox watch:", err)
		return 1
	}
	return 0
}

// watchPollEvery is how often watchPhase checks that its parent lives
// (and, for a store without Watch, the run).
const watchPollEvery = time.Second

// watchPhase returns once it has stopped the session's server of phase, or
// when the parent that started it (ppid's first answer) is gone.
func watchPhase(ctx context.Context, st store.Store, root, session, phase string, ppid func() int) error {
	parent := ppid()
	var changes <-chan store.Change
	if w, ok := st.(store.Watcher); ok {
		ch, err := w.Watch(ctx)
		if err != nil {
			return err
		}
		changes = ch
	}
	// The run's phase now (after Watch, so no change falls between).
	left := func() bool {
		now := ""
		switch run, err := st.LiveRun(ctx, session); {
		case err == nil:
			now = run.State
		case !errors.Is(err, store.ErrNotFound):
			return false // a store that cannot be read now: the hooks still stop it
		}
		if now == phase {
			return false
		}
		sandbox.StopServerUnless(root, session, &now)
		return true
	}
	if left() {
		return nil
	}
	tick := time.NewTicker(watchPollEvery)
	defer tick.Stop()
	for {
		select {
		case c, ok := <-changes:
			if !ok {
				return errors.New("the store stopped delivering changes")
			}
			if (c.Resync() || c.SessionKey == session) && left() {
				return nil
			}
		case <-tick.C:
			if ppid() != parent {
				return nil
			}
			if changes == nil && left() {
				return nil
			}
		}
	}
}
