//go:build e2e

package e2e

import (
	"os"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/internal/fakemodel"
)

// phaseModelWorkflow names a model per phase: "fake/fake-big" for the
// planning phase, the provider's "fake-model" (a bare id) for the next.
const phaseModelWorkflow = `{"id": "e2e-models", "initial": "plan", "states": {
  "plan": {"model": "fake/fake-big", "thinking_level": "high", "allowed_tools": ["Read", "Grep"], "on": {"PLANNED": "build"}},
  "build": {"model": "fake-model", "context_budget_bytes": 10, "allowed_tools": ["Read", "Write", "Bash"], "on": {"DONE": "done"}},
  "done": {"type": "final"}}}`

// requestModels lists the model of each main request the fake served.
func requestModels(t *testing.T, srv *fakemodel.Server) []string {
	t.Helper()
	var out []string
	for _, q := range srv.MainRequests() {
		c, err := q.Chat()
		if err != nil {
			t.Fatalf("a request is not Chat Completions: %v", err)
		}
		out = append(out, c.Model)
	}
	return out
}

// TestPiPhaseModel: the Pi extension switches Pi to the phase's model as
// the original's Pi extension did, at each prompt (Pi fixes a prompt's
// model when its agent loop starts): run 1, in the planning phase, asks
// fake-big although Pi was started on fake-model; the agent moves on with
// its own statewright_transition; run 2 of the same session, in the build
// phase, asks fake-model. The phase context names the model, and the
// build phase's read budget is counted.
func TestPiPhaseModel(t *testing.T) {
	p := newPluginProject(t, "pi")
	if err := os.WriteFile(p.wfPath, []byte(phaseModelWorkflow), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := fakemodel.NewChatCompletions(chatScript(
		fakemodel.Call(tool("call_plan", "statewright_transition", map[string]any{"event": "PLANNED"})),
		fakemodel.Say("Planned."),
	), fakemodel.WithLog(t.Logf))
	r := p.piRun(t, srv) // Pi starts on fake-model (--model)
	srv.Close()
	if models := requestModels(t, srv); len(models) == 0 || models[0] != "fake-big" {
		t.Fatalf("run 1 request models %v; want fake-big in the planning phase\n%s", models, r)
	}
	if reqs := srv.MainRequests(); !strings.Contains(string(reqs[0].Body), "This phase's model: fake/fake-big (thinking level high).") {
		t.Errorf("the phase context does not name the model\n%s", srv.Summary())
	}
	session, state := p.session(t)
	if state != "build" {
		t.Fatalf("after run 1 the run is in %q; want build", state)
	}

	srv = fakemodel.NewChatCompletions(chatScript(
		fakemodel.Call(tool("call_echo", "bash", map[string]any{"command": "echo a-line-longer-than-ten-bytes"})),
		fakemodel.Call(tool("call_state", "statewright_get_state", map[string]any{})),
		fakemodel.Say("Built."),
	), fakemodel.WithLog(t.Logf))
	r = p.piRun(t, srv, "--session", session)
	srv.Close()
	if models := requestModels(t, srv); len(models) == 0 || models[0] != "fake-model" {
		t.Fatalf("run 2 request models %v; want fake-model in the build phase\n%s", models, r)
	}
	st := mustResult(t, srv, "call_state", r).Content
	for _, want := range []string{`"model": "fake-model"`, `"context_budget_bytes": 10`, `"context_bytes": `, "over its 10-byte budget"} {
		if !strings.Contains(st, want) {
			t.Errorf("get_state lacks %s:\n%s", want, st)
		}
	}
}

// TestOpencodePhaseModel: the opencode plugin picks the phase's model for
// each user message (opencode chooses the model per message): a run in
// the planning phase asks fake-big, although opencode's configured model
// is fake-model.
func TestOpencodePhaseModel(t *testing.T) {
	p := newPluginProject(t, "opencode")
	if err := os.WriteFile(p.wfPath, []byte(phaseModelWorkflow), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := fakemodel.NewChatCompletions(chatScript(fakemodel.Say("Planned.")), fakemodel.WithLog(t.Logf))
	r := p.opencodeRun(t, srv)
	srv.Close()
	models := requestModels(t, srv)
	if len(models) == 0 || models[0] != "fake-big" {
		t.Fatalf("request models %v; want fake-big for the planning phase\n%s", models, r)
	}
}
