package runscmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/statewright-go/statewright/harness/adapters"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
)

// hookSilence says, for a live run of a harness session that a person
// started, that no hook event has arrived from the harness for it: no
// SessionStart started it (the operator's default workflow) and no tool
// call of it was decided or recorded. A run the hooks never reach governs
// nothing: the hooks are missing, untrusted (Codex skips those silently),
// or scoped to another project. "" when a hook has been heard, or the run
// is not a harness session's.
func hookSilence(ctx context.Context, st store.Store, r *store.Run) (string, error) {
	name, _, ok := strings.Cut(r.SessionKey, ":")
	if !ok || !slices.Contains(adapters.Names(), name) || !r.Status.Live() {
		return "", nil
	}
	calls, err := st.Events(ctx, store.EventFilter{RunID: r.ID, Kinds: []store.EventKind{store.KindDecision, store.KindResult}, Limit: 1})
	if err != nil || len(calls) > 0 {
		return "", err
	}
	started, err := st.Events(ctx, store.EventFilter{RunID: r.ID, Kinds: []store.EventKind{store.KindRun}, Limit: 1})
	if err != nil || len(started) == 0 {
		return "", err
	}
	var data struct {
		Actor runtime.Actor `json:"actor"`
	}
	json.Unmarshal(started[0].Data, &data)
	if data.Actor.Kind != runtime.ActorHuman || strings.HasPrefix(data.Actor.Channel, "hook-config:") {
		return "", nil // started by the harness's hook, or by the agent through one
	}
	return fmt.Sprintf("no hook event has arrived from %s for this session (no SessionStart, no tool call decided): "+
		"if the agent has been working, its hooks are not installed, not trusted or not scoped to this project; run statewright doctor", name), nil
}

// printSilences writes hookSilence's note for each run that has one.
func printSilences(ctx context.Context, w io.Writer, st store.Store, runs []*store.Run) error {
	for _, r := range runs {
		note, err := hookSilence(ctx, st, r)
		if err != nil {
			return err
		}
		if note != "" {
			fmt.Fprintf(w, "%s: %s\n", r.SessionKey, note)
		}
	}
	return nil
}
