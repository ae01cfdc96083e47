package eventtext

import (
	"testing"

	"github.com/statewright-go/statewright/store"
)

func TestDescribe(t *testing.T) {
	human := `"actor":{"kind":"human","channel":"web"}`
	for _, tc := range []struct {
		e    store.Event
		want string
	}{
		{store.Event{Kind: store.KindDecision, State: "plan", Tool: "Edit", Decision: "deny", Rule: "tool-not-allowed", Reason: "no edits"},
			"[plan] Edit deny (tool-not-allowed): no edits"},
		{store.Event{Kind: store.KindDecision, State: "plan", Tool: "Edit", Decision: "deny", Rule: "r", Reason: "x", Data: []byte(`{"enforced":false}`)},
			"[plan] Edit deny (r): x [audit-only: not enforced]"},
		{store.Event{Kind: store.KindTransition, State: "build", Data: []byte(`{"from":"plan","to":"build","event":"GO",` + human + `}`)},
			"plan → build (event GO) by human via web"},
		{store.Event{Kind: store.KindTransition, State: "plan", Data: []byte(`{"from":"","to":"plan","event":"start"}`)},
			"(new run) → plan (event start)"},
		{store.Event{Kind: store.KindTransition, State: "plan", Data: []byte(`{"event":"GO","refused":true,"error":"guard failed"}`)},
			"[plan] event GO refused: guard failed"},
		{store.Event{Kind: store.KindTransition, State: "look", Data: []byte(`{"from":"work","to":"look","event":"CHECK","subflow":"enter","kind":"invoke","invoke":"audit","workflow":"audit","depth":1}`)},
			"work → look (event CHECK): entered sub-workflow audit (depth 1)"},
		{store.Event{Kind: store.KindTransition, State: "lint_run", Data: []byte(`{"from":"start","to":"lint_run","event":"SPLIT","subflow":"enter","kind":"fork","branch":"lint","depth":1}`)},
			"start → lint_run (event SPLIT): fork, branch lint starts (depth 1)"},
		{store.Event{Kind: store.KindTransition, State: "types_run", Data: []byte(`{"from":"lint_done","to":"types_run","event":"SPLIT:lint:completed","subflow":"branch","kind":"fork","branch":"types","ended":"lint","outcome":"completed","depth":1}`)},
			"lint_done → types_run (event SPLIT:lint:completed): branch lint completed, branch types starts (depth 1)"},
		{store.Event{Kind: store.KindTransition, State: "ship", Data: []byte(`{"from":"passed","to":"ship","event":"CHECK:completed","subflow":"return","kind":"invoke","invoke":"audit","outcome":"completed","depth":0}`)},
			"passed → ship (event CHECK:completed): sub-workflow audit completed, back at depth 0"},
		{store.Event{Kind: store.KindTransition, State: "passed", Data: []byte(`{"from":"look","to":"passed","event":"OK","depth":1}`)},
			"look → passed (event OK) [depth 1]"},
		{store.Event{Kind: store.KindResult, State: "test", Tool: "Bash", Data: []byte(`{"exit_code":1,"failed":true}`)},
			"[test] Bash failed exit 1"},
		{store.Event{Kind: store.KindApproval, State: "build", Data: []byte(`{"action":"granted","approval_id":"apr_1","from":"build","to":"done",` + human + `}`)},
			"[build] granted apr_1: build → done by human via web"},
		{store.Event{Kind: store.KindRun, State: "plan", Data: []byte(`{"event":"started","workflow":"wf"}`)},
			"[plan] run started wf"},
		{store.Event{Kind: store.KindAdmin, State: "plan", Data: []byte(`{"action":"pause","from":"active","to":"paused",` + human + `}`)},
			"[plan] pause active → paused by human via web"},
		{store.Event{Kind: store.KindAdmin, State: "plan", Data: []byte(`not json`)}, "[plan] "},
	} {
		if got := Describe(&tc.e); got != tc.want {
			t.Errorf("Describe(%s %s) = %q, want %q", tc.e.Kind, tc.e.Data, got, tc.want)
		}
	}
}
