package runtime

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/store"
)

const (
	deactivateTool = "mcp__statewright__statewright_deactivate"
	pauseTool      = "mcp__statewright__statewright_pause"
	transitionTool = "mcp__statewright__statewright_transition"
)

// prompting marks c as made where a person answers the harness's prompts
// (Claude Code's default mode).
func prompting(c ToolCall) ToolCall {
	c.PermissionMode, c.HumanPrompt = "default", true
	return c
}

// grants returns the session's prompt-grant events, decoded.
func (f *fixture) grants(session string) []grantData {
	f.t.Helper()
	var out []grantData
	for _, e := range f.events(session, store.KindApproval) {
		if e.Rule != "prompt-grant" {
			continue
		}
		var g grantData
		if err := json.Unmarshal(e.Data, &g); err != nil {
			f.t.Fatal(err)
		}
		out = append(out, g)
	}
	return out
}

func TestAskDeniedWhereNoPersonAnswers(t *testing.T) {
	for _, mode := range []string{"bypassPermissions", "acceptEdits", "plan", "dontAsk", "auto", ""} {
		t.Run(mode, func(t *testing.T) {
			f := newFixture(t, Options{})
			f.start("s")
			c := f.call("s", "d1", deactivateTool, map[string]any{})
			c.PermissionMode = mode // HumanPrompt stays false: the adapter vouches for no person
			r := f.decide(c)
			if r.Verdict != policy.Deny || r.Rule != policy.RuleControlHumanOnly {
				t.Fatalf("decision = %+v", r)
			}
			if !strings.Contains(r.Reason, "`statewright deactivate s`") {
				t.Errorf("reason does not name the person's command: %s", r.Reason)
			}
			if mode != "" && !strings.Contains(r.Reason, `permission mode "`+mode+`"`) {
				t.Errorf("reason does not name the mode: %s", r.Reason)
			}
			// Even a PostToolUse for the same id (the tool ran anyway)
			// grants nothing: the call was denied.
			f.result(c, false, nil)
			if run := f.live("s"); run.Status != store.StatusActive {
				t.Errorf("status = %s, want active", run.Status)
			}
			if g := f.grants("s"); len(g) != 0 {
				t.Errorf("grants = %+v", g)
			}
		})
	}
}

func TestAskGrantedOnlyByConfirmedResult(t *testing.T) {
	tests := []struct {
		name string
		// post: "" no result at all, "ok" PostToolUse, "failed" PostToolUseFailure,
		// "other-tool" a PostToolUse with the id but another tool.
		post       string
		wantStatus store.Status
		wantGrant  bool
	}{
		{"no PostToolUse (the person said no)", "", store.StatusActive, false},
		{"PostToolUseFailure", "failed", store.StatusActive, false},
		{"PostToolUse of another tool", "other-tool", store.StatusActive, false},
		{"PostToolUse confirms", "ok", store.StatusDeactivated, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, Options{})
			f.start("s")
			c := prompting(f.call("s", "d1", deactivateTool, map[string]any{"reason": "done"}))
			r := f.decide(c)
			if r.Verdict != policy.Ask || r.Rule != policy.RuleControlHumanOnly {
				t.Fatalf("decision = %+v", r)
			}
			// The ask alone changes nothing, and a retried hook asks again.
			if run := f.live("s"); run.Status != store.StatusActive {
				t.Fatalf("status after ask = %s", run.Status)
			}
			if r2 := f.decide(c); r2.Verdict != policy.Ask || !r2.Replayed {
				t.Fatalf("replay = %+v", r2)
			}
			switch tt.post {
			case "ok":
				f.result(c, false, nil)
				f.result(c, false, nil) // a retried PostToolUse grants once
			case "failed":
				f.result(c, true, nil)
			case "other-tool":
				o := c
				o.Call.Tool = "Bash"
				f.result(o, false, nil)
			}
			runs, err := f.st.Runs(context.Background(), store.RunFilter{SessionKey: "s"})
			if err != nil || len(runs) != 1 {
				t.Fatalf("runs = %v, %v", runs, err)
			}
			if runs[0].Status != tt.wantStatus {
				t.Errorf("status = %s, want %s", runs[0].Status, tt.wantStatus)
			}
			g := f.grants("s")
			if !tt.wantGrant {
				if len(g) != 0 {
					t.Errorf("grants = %+v", g)
				}
				return
			}
			if len(g) != 1 {
				t.Fatalf("grants = %+v, want one", g)
			}
			want := grantData{Action: "prompt-granted", Op: "deactivate", PermissionMode: "default", Performed: true,
				Actor: Actor{Kind: ActorHuman, Channel: "prompt:claude-code"}, Agent: agent}
			if g[0] != want {
				t.Errorf("grant = %+v, want %+v", g[0], want)
			}
			// The deactivation is recorded as done by the person.
			var admin map[string]any
			evs := f.events("s", store.KindAdmin)
			if len(evs) == 0 {
				t.Fatal("no admin event")
			}
			json.Unmarshal(evs[len(evs)-1].Data, &admin)
			if a, _ := admin["actor"].(map[string]any); admin["action"] != "deactivate" || a["kind"] != "human" || a["channel"] != "prompt:claude-code" {
				t.Errorf("admin event = %v", admin)
			}
		})
	}
}

func TestAskApprovalPendingTransition(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, Options{})
	f.start("s")
	tr, err := f.svc.Transition(ctx, "s", "SHIP", nil, agent)
	if err != nil || !tr.Parked {
		t.Fatalf("park: %+v, %v", tr, err)
	}
	// Where no person answers prompts, the transition tool stays denied
	// and the lesson names `statewright approve`.
	denied := f.call("s", "t0", transitionTool, map[string]any{"event": "SHIP"})
	denied.PermissionMode = "bypassPermissions"
	if r := f.decide(denied); r.Verdict != policy.Deny || r.Rule != policy.RuleApprovalPending ||
		!strings.Contains(r.Reason, "statewright approve s --id "+tr.ApprovalID) {
		t.Fatalf("decision without a person = %+v", r)
	}
	f.result(denied, false, nil)
	if run := f.live("s"); run.State != "plan" || run.Status != store.StatusAwaitingApproval {
		t.Fatalf("run after a denied call's result = %s %s", run.State, run.Status)
	}

	// Another event than the pending one is not asked: the pending
	// approval must be decided first.
	if r := f.decide(prompting(f.call("s", "t9", transitionTool, map[string]any{"event": "GO"}))); r.Verdict != policy.Deny ||
		r.Rule != policy.RuleApprovalPending {
		t.Fatalf("another event while parked = %+v", r)
	}
	c := prompting(f.call("s", "t1", transitionTool, map[string]any{"event": "SHIP"}))
	r := f.decide(c)
	if r.Verdict != policy.Ask || r.Rule != RuleApprovalPrompt || !strings.Contains(r.Reason, tr.ApprovalID) ||
		!strings.Contains(r.Reason, "ship it?") {
		t.Fatalf("decision with a person = %+v", r)
	}
	f.result(c, false, nil)
	runs, _ := f.st.Runs(ctx, store.RunFilter{SessionKey: "s"})
	if len(runs) != 1 || runs[0].State != "done" || runs[0].Status != store.StatusCompleted {
		t.Fatalf("run after the grant = %+v", runs[0])
	}
	g := f.grants("s")
	if len(g) != 1 || g[0].Op != "approve" || g[0].ApprovalID != tr.ApprovalID || !g[0].Performed {
		t.Fatalf("grants = %+v", g)
	}
	var granted bool
	for _, e := range f.events("s", store.KindApproval) {
		var d map[string]any
		json.Unmarshal(e.Data, &d)
		if a, _ := d["actor"].(map[string]any); d["action"] == "granted" && d["approval_id"] == tr.ApprovalID && a["kind"] == "human" {
			granted = true
		}
	}
	if !granted {
		t.Error("no granted approval event by a human")
	}
}

func TestAskGrantBoundToItsRunAndApproval(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, Options{})
	f.start("s")
	if _, err := f.svc.Transition(ctx, "s", "SHIP", nil, agent); err != nil {
		t.Fatal(err)
	}
	c := prompting(f.call("s", "t1", transitionTool, map[string]any{"event": "SHIP"}))
	if r := f.decide(c); r.Verdict != policy.Ask {
		t.Fatalf("decision = %+v", r)
	}
	// Meanwhile a person rejects the approval and the agent parks again:
	// the yes given to the first approval must not grant the second.
	if err := f.svc.Reject(ctx, "s", "", "not yet", human); err != nil {
		t.Fatal(err)
	}
	tr2, err := f.svc.Transition(ctx, "s", "SHIP", nil, agent)
	if err != nil || !tr2.Parked {
		t.Fatal(err)
	}
	f.result(c, false, nil)
	run := f.live("s")
	if run.State != "plan" || run.PendingApproval == nil || run.PendingApproval.ID != tr2.ApprovalID {
		t.Fatalf("run = %+v", run)
	}
	g := f.grants("s")
	if len(g) != 1 || g[0].Performed || g[0].Error == "" {
		t.Fatalf("grants = %+v", g)
	}

	// A grant for a run that a person ended meanwhile does nothing to the
	// session's next run.
	p := prompting(f.call("s", "p1", pauseTool, map[string]any{}))
	if r := f.decide(p); r.Verdict != policy.Ask {
		t.Fatalf("pause decision = %+v", r)
	}
	if err := f.svc.Deactivate(ctx, "s", human); err != nil {
		t.Fatal(err)
	}
	f.start("s")
	f.result(p, false, nil)
	if run := f.live("s"); run.Status != store.StatusActive {
		t.Errorf("the new run is %s", run.Status)
	}
}

func TestAskPausedRunCanBeResumedThroughThePrompt(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, Options{})
	f.start("s")
	if err := f.svc.Pause(ctx, "s", human); err != nil {
		t.Fatal(err)
	}
	c := prompting(f.call("s", "r1", "mcp__statewright__statewright_resume", map[string]any{}))
	if r := f.decide(c); r.Verdict != policy.Ask {
		t.Fatalf("decision = %+v", r)
	}
	f.result(c, false, nil)
	if run := f.live("s"); run.Status != store.StatusActive {
		t.Errorf("status = %s, want active", run.Status)
	}
}

func TestAskWithoutAnOperationToGrantDenies(t *testing.T) {
	f := newFixture(t, Options{})
	f.start("s")
	// statewright has no operation that forces a state: nothing for a
	// person's yes to do, so no prompt.
	c := prompting(f.call("s", "f1", "mcp__statewright__statewright_force_state", map[string]any{"state": "done"}))
	if r := f.decide(c); r.Verdict != policy.Deny || !strings.Contains(r.Reason, "statewright") {
		t.Fatalf("decision = %+v", r)
	}
	// approve with nothing pending: no prompt either.
	a := prompting(f.call("s", "a1", "mcp__statewright__statewright_approve", map[string]any{}))
	if r := f.decide(a); r.Verdict != policy.Deny {
		t.Fatalf("approve with nothing pending = %+v", r)
	}
}

func TestAskDormantSessionDenies(t *testing.T) {
	f := newFixture(t, Options{})
	c := prompting(f.call("s", "d1", deactivateTool, map[string]any{}))
	if r := f.decide(c); r.Verdict != policy.Deny {
		t.Fatalf("decision = %+v", r)
	}
}
