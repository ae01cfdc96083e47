package runtime

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/workflow"
)

const phaseWorkflow = `{"id":"ph","initial":"read","meta":{"capture_output":true,"default_model":"small"},"states":{
 "read":{"allowed_tools":["Read","Bash"],"context_budget_bytes":10,"thinking_level":"high","env_overrides":{"B":"2","A":"1"},"on":{"GO":"write"}},
 "write":{"model":"big","on":{"DONE":"done"}},
 "done":{"type":"final"}}}`

// TestPhaseFields: the model (falling back to default_model), thinking
// level, environment values and read budget reach the view and the
// phase notes; tool output is counted per phase and captured.
func TestPhaseFields(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := context.Background()
	const s = "test:ph"
	if _, err := f.svc.Start(ctx, s, f.workflowFile("ph.json", phaseWorkflow), human); err != nil {
		t.Fatal(err)
	}
	read := func(id, out string) {
		c := f.call(s, id, "Read", map[string]any{"file_path": f.dir + "/x"})
		if d := f.decide(c); d.Verdict != policy.Allow {
			t.Fatalf("read: %+v", d)
		}
		b, _ := json.Marshal(out)
		if err := f.svc.RecordResult(ctx, ToolResult{Session: s, Call: c.Call, Output: b, Actor: agent}); err != nil {
			t.Fatal(err)
		}
	}
	view := func() *RunView {
		v, err := f.svc.Status(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	read("r1", "12345")
	v := view()
	if v.Model != "small" || v.ThinkingLevel != "high" || v.ContextBytes != 5 || v.ContextBudget == nil || *v.ContextBudget != 10 || v.OverBudget() || !v.CaptureOutput {
		t.Fatalf("view = model %q thinking %q bytes %d budget %v capture %v", v.Model, v.ThinkingLevel, v.ContextBytes, v.ContextBudget, v.CaptureOutput)
	}
	notes := strings.Join(v.PhaseNotes(), "\n")
	for _, want := range []string{"This phase's model: small (thinking level high).", "A=1 B=2", "Tool output read in this phase: 5 of its 10-byte budget."} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	read("r2", "678901")
	if v := view(); v.ContextBytes != 11 || !v.OverBudget() || !strings.Contains(strings.Join(v.PhaseNotes(), " "), "over its 10-byte budget") {
		t.Fatalf("after 11 bytes: %d, over %v, notes %v", v.ContextBytes, v.OverBudget(), v.PhaseNotes())
	}
	// A truncated copy counts at the size the harness reports.
	c := f.call(s, "r3", "Read", map[string]any{"file_path": f.dir + "/y"})
	f.decide(c)
	if err := f.svc.RecordResult(ctx, ToolResult{Session: s, Call: c.Call, Output: json.RawMessage(`"abc"`), OutputBytes: 100, Actor: agent}); err != nil {
		t.Fatal(err)
	}
	if v := view(); v.ContextBytes != 111 {
		t.Fatalf("bytes after a truncated copy of 100: %d", v.ContextBytes)
	}
	var captured []string
	for _, e := range f.events(s, store.KindResult) {
		var d resultData
		_ = json.Unmarshal(e.Data, &d)
		captured = append(captured, d.Output)
	}
	if strings.Join(captured, ",") != "12345,678901,abc" {
		t.Errorf("captured outputs %q", captured)
	}
	// A transition starts the next phase's count afresh, with its own model.
	if _, err := f.svc.Transition(ctx, s, "GO", nil, agent); err != nil {
		t.Fatal(err)
	}
	if v := view(); v.Model != "big" || v.ThinkingLevel != "" || v.ContextBytes != 0 || v.ContextBudget != nil || len(v.EnvOverrides) != 0 {
		t.Fatalf("in write: %+v", v)
	}
}

func TestFieldEffects(t *testing.T) {
	def, _, err := workflow.Parse([]byte(`{"id":"fe","initial":"a","meta":{"capture_output":true},"states":{
	  "a":{"model":"m","thinking_level":"high","model_ladder":["x"],"context_budget_bytes":5,"env_overrides":{"K":"v"},"direct_execution":true,"on":{"GO":"b"}},
	  "b":{"type":"final"}}}`), workflow.ParseOptions{Source: "fe.json"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		harness string
		want    []string // the fields reported, in table order
	}{
		{"", []string{"env_overrides", "direct_execution"}},
		{"claude-code", []string{"model", "thinking_level", "model_ladder", "env_overrides", "direct_execution"}},
		{"codex", []string{"model", "thinking_level", "model_ladder", "env_overrides", "direct_execution"}},
		{"cursor", []string{"model", "thinking_level", "model_ladder", "context_budget_bytes", "env_overrides", "direct_execution", "capture_output"}},
		{"opencode", []string{"thinking_level", "model_ladder", "env_overrides", "direct_execution"}},
		{"pi", []string{"model_ladder", "env_overrides", "direct_execution"}},
		{"agent", []string{"env_overrides", "direct_execution"}},
	}
	for _, tt := range tests {
		var got []string
		for _, d := range FieldEffects(def, tt.harness) {
			if d.Severity != workflow.SeverityWarning || d.Code != CodeNoEffect {
				t.Errorf("%s: %v", tt.harness, d)
			}
			got = append(got, strings.Split(d.Message, `"`)[1])
		}
		if strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("FieldEffects(%q) reports %v; want %v", tt.harness, got, tt.want)
		}
	}
	if ds := FieldEffects(def, "nosuch"); !ds.HasErrors() {
		t.Errorf("an unknown harness: %v", ds)
	}
}
