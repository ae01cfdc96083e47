package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/store"
)

// Parked calls (docs/permissions.md, DECISIONS 29). A permission ask rule
// asks a person about one tool call. Where the harness puts the question
// to its user (Claude Code's prompt in default mode), the hook answers Ask
// and the harness runs the call only after a yes. Everywhere else the call
// is parked: the decision is a deny that names the command a person runs,
// `statewright approve SESSION --call ID`, and records the parked call on
// the run. The person's answer is a one-shot grant bound to the session
// (the run), the tool and the digest of the exact input, valid for
// GrantTTL: the same call, made again, is decided with policy.ToolCall.
// Granted set (rule permission-granted) and consumes the grant; a second
// try, or any other call, asks again.
//
// Parked calls and grants live in the run's Counters ("ask:<id>" and
// "granted:<id>", each an expiry in Unix seconds), so they are written in
// the decision's own transaction, on every store, and vanish with the run.

const (
	askPendingPrefix = "ask:"
	askGrantPrefix   = "granted:"
)

// AskTTL is how long a parked call waits for a person; GrantTTL how long
// a person's grant waits for the retried call.
var (
	AskTTL   = 24 * time.Hour
	GrantTTL = 10 * time.Minute
)

// ErrNoParkedCall: no parked call with that id waits on the session's run.
var ErrNoParkedCall = fmt.Errorf("%w: no call with that id waits for a person", ErrNotAllowed)

// askID names a parked call: a digest of the run, the tool and the input.
func askID(runID string, call *ToolCall) string {
	h := sha256.Sum256([]byte(runID + "\x00" + call.Call.Tool + "\x00" + store.InputDigest(call.Call.Input)))
	return "ask_" + hex.EncodeToString(h[:6])
}

// pruneAsks drops expired parked calls and grants; it reports whether it
// changed the run.
func pruneAsks(run *store.Run, now int64) bool {
	changed := false
	for k, v := range run.Counters {
		if (strings.HasPrefix(k, askPendingPrefix) || strings.HasPrefix(k, askGrantPrefix)) && v <= now {
			delete(run.Counters, k)
			changed = true
		}
	}
	return changed
}

// askData is the "ask" of a decision event: the parked call.
type askData struct {
	ID        string    `json:"id"`
	ExpiresAt time.Time `json:"expires_at"`
	// Granted is set on the decision that used a person's grant.
	Granted bool `json:"granted,omitempty"`
}

// parkOrGrant applies a permission ask rule's answer where no person
// answers the harness's prompt: with a person's unused grant for this very
// call, the call is decided again as granted (and the grant consumed);
// without one the call is parked and denied with the command a person
// runs. It reports whether the run changed.
func parkOrGrant(tx store.Tx, run *store.Run, call *ToolCall, law *policy.Law, rs *policy.RunState, d policy.Decision) (policy.Decision, *askData, bool) {
	now := tx.Now()
	pruneAsks(run, now.Unix())
	id := askID(run.ID, call)
	if run.Counters == nil {
		run.Counters = map[string]int64{}
	}
	if exp, ok := run.Counters[askGrantPrefix+id]; ok && exp > now.Unix() {
		delete(run.Counters, askGrantPrefix+id)
		c := call.Call
		c.Granted = true
		return law.Decide(rs, &c), &askData{ID: id, ExpiresAt: time.Unix(exp, 0).UTC(), Granted: true}, true
	}
	exp := now.Add(AskTTL)
	run.Counters[askPendingPrefix+id] = exp.Unix()
	d.Verdict = policy.Deny
	d.Reason = strings.TrimSpace(d.Reason) + fmt.Sprintf(" No person answers this harness's prompts here, so the call waits: a person runs `statewright approve %s --call %s`, and the same call, made again within %s of that, runs once.",
		tx.SessionKey(), id, GrantTTL)
	return d, &askData{ID: id, ExpiresAt: exp.UTC()}, true
}

// ParkedCall is a call that waits for a person.
type ParkedCall struct {
	// ID is what `statewright approve SESSION --call ID` names.
	ID string `json:"id"`
	// Tool and Reason are the decision's: the tool the agent called and
	// what the ask rule matched.
	Tool   string `json:"tool"`
	Reason string `json:"reason"`
	// State is the phase it was asked in.
	State string `json:"state"`
	// InputDigest identifies the exact input a grant is bound to.
	InputDigest string `json:"input_digest"`
	// ExpiresAt is when the parked call lapses.
	ExpiresAt time.Time `json:"expires_at"`
}

// ParkedCalls lists the calls of the session's run that wait for a person,
// newest first.
func (s *Service) ParkedCalls(ctx context.Context, session string) ([]ParkedCall, error) {
	v, err := s.Status(ctx, session)
	if err != nil {
		return nil, err
	}
	now := time.Now().Unix()
	pending := map[string]int64{}
	for k, exp := range v.Run.Counters {
		if id, ok := strings.CutPrefix(k, askPendingPrefix); ok && exp > now {
			pending[id] = exp
		}
	}
	if len(pending) == 0 {
		return nil, nil
	}
	evs, err := s.st.Events(ctx, store.EventFilter{RunID: v.Run.ID, Kinds: []store.EventKind{store.KindDecision}})
	if err != nil {
		return nil, fmt.Errorf("runtime: parked calls of %s: %w", session, err)
	}
	var out []ParkedCall
	seen := map[string]bool{}
	for i := len(evs) - 1; i >= 0; i-- {
		e := &evs[i]
		var dd struct {
			Ask *askData `json:"ask"`
		}
		if json.Unmarshal(e.Data, &dd) != nil || dd.Ask == nil || dd.Ask.Granted || seen[dd.Ask.ID] {
			continue
		}
		exp, ok := pending[dd.Ask.ID]
		if !ok {
			continue
		}
		seen[dd.Ask.ID] = true
		out = append(out, ParkedCall{ID: dd.Ask.ID, Tool: e.Tool, Reason: e.Reason, State: e.State, InputDigest: e.InputDigest, ExpiresAt: time.Unix(exp, 0).UTC()})
	}
	return out, nil
}

// GrantCall records a person's yes to a parked call: the same call, made
// again within GrantTTL, runs once. Only a person may grant (the refusal
// of anyone else is logged).
func (s *Service) GrantCall(ctx context.Context, session, id string, by Actor) (time.Time, error) {
	var until time.Time
	var outcome error
	err := s.st.Update(ctx, session, func(tx store.Tx) error {
		until, outcome = time.Time{}, nil
		run := tx.Run()
		if run == nil {
			outcome = ErrNoRun
			return nil
		}
		if err := requireHuman(by); err != nil {
			outcome = err
			return refuseTx(tx, run.State, "grant-call", by, err)
		}
		now := tx.Now()
		exp, ok := run.Counters[askPendingPrefix+id]
		if !ok || exp <= now.Unix() {
			outcome = ErrNoParkedCall
			return nil
		}
		delete(run.Counters, askPendingPrefix+id)
		pruneAsks(run, now.Unix())
		until = now.Add(GrantTTL)
		run.Counters[askGrantPrefix+id] = until.Unix()
		if err := tx.Put(run); err != nil {
			return fmt.Errorf("write run: %w", err)
		}
		return tx.Append(event(store.KindApproval, run.State, map[string]any{
			"action": "call-granted", "ask_id": id, "actor": by, "until": until.UTC(),
		}))
	})
	if err == nil {
		err = outcome
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("runtime: grant %s on %s: %w", id, session, err)
	}
	return until, nil
}
