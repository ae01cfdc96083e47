package runtime

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/store"
)

// A transition retried with the same request id (the replica that took the
// first attempt died before answering) answers the first result and moves
// the run once; another id is another request.
func TestTransitionRequestIDAppliesOnce(t *testing.T) {
	f := newFixture(t, Options{})
	f.start("s")
	before := len(f.events("s", store.KindTransition))
	ctx := WithRequestID(context.Background(), "toolu_go_1")
	first, err := f.svc.Transition(ctx, "s", "GO", nil, agent)
	if err != nil || first.From != "plan" || first.To != "build" {
		t.Fatalf("first = %+v, %v", first, err)
	}
	for i := 0; i < 2; i++ {
		again, err := f.svc.Transition(ctx, "s", "GO", nil, agent)
		if err != nil || again.From != "plan" || again.To != "build" {
			t.Fatalf("retry %d = %+v, %v; want the first result", i, again, err)
		}
	}
	if run := f.live("s"); run.State != "build" || run.Revision != 2 {
		t.Fatalf("run after retries: %s at revision %d; want build at 2", run.State, run.Revision)
	}
	if n := len(f.events("s", store.KindTransition)) - before; n != 1 {
		t.Fatalf("transition events added = %d, want 1", n)
	}
	// The same event under a new id is a new request: GO from build is refused.
	_, err = f.svc.Transition(WithRequestID(context.Background(), "toolu_go_2"), "s", "GO", nil, agent)
	if !errors.Is(err, ErrTransition) {
		t.Fatalf("GO again under a new id: err = %v, want ErrTransition", err)
	}
	// A refusal is not recorded: the same id tried again is decided again.
	_, err = f.svc.Transition(WithRequestID(context.Background(), "toolu_go_2"), "s", "DONE", nil, agent)
	if err != nil {
		t.Fatalf("a refused request's id reused for DONE: %v", err)
	}
	if RequestID(context.Background()) != "" || RequestID(WithRequestID(context.Background(), "")) != "" {
		t.Error("RequestID of a context without one is not empty")
	}
}

// An approval retried with the same request id answers the first result;
// without one, the retry finds nothing pending.
func TestApproveRequestIDAppliesOnce(t *testing.T) {
	f := newFixture(t, Options{})
	f.start("s")
	tr, err := f.svc.Transition(context.Background(), "s", "SHIP", nil, agent)
	if err != nil || !tr.Parked {
		t.Fatalf("park: %+v, %v", tr, err)
	}
	ctx := WithRequestID(context.Background(), "http:op:1")
	first, err := f.svc.Approve(ctx, "s", tr.ApprovalID, human)
	if err != nil || first.To != "done" {
		t.Fatalf("approve = %+v, %v", first, err)
	}
	again, err := f.svc.Approve(ctx, "s", tr.ApprovalID, human)
	if err != nil || again.To != "done" || again.From != first.From {
		t.Fatalf("retried approve = %+v, %v; want the first result", again, err)
	}
	if _, err := f.svc.Approve(context.Background(), "s", tr.ApprovalID, human); !errors.Is(err, ErrNoApproval) && !errors.Is(err, ErrNoRun) {
		t.Fatalf("approve without the id after it was granted: err = %v", err)
	}
	granted := 0
	for _, e := range f.events("s", store.KindApproval) {
		if strings.Contains(string(e.Data), `"granted"`) || strings.Contains(string(e.Data), `"approved"`) {
			granted++
		}
	}
	if granted != 1 {
		t.Errorf("approval granted %d times in the log, want 1", granted)
	}
}
