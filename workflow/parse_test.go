package workflow

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func mustParse(t *testing.T, src string) (*Definition, Diagnostics) {
	t.Helper()
	def, diags, err := Parse([]byte(src), ParseOptions{Source: "wf.json"})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return def, diags
}

func TestParseGuardValueTypes(t *testing.T) {
	for _, src := range []string{
		`{"id":"x","initial":"a","states":{"a":{"type":"final"}},"guards":{
		  "i":{"field":"f","op":"eq","value":1},
		  "f":{"field":"f","op":"eq","value":1.0},
		  "e":{"field":"f","op":"eq","value":1e2},
		  "b":{"field":"f","op":"eq","value":true},
		  "s":{"field":"f","op":"eq","value":"x"},
		  "n":{"field":"f","op":"eq","value":null},
		  "a":{"field":"f","op":"in","value":[1,"x",2.5]},
		  "o":{"field":"f","op":"eq","value":{"k":[1]}},
		  "big":{"field":"f","op":"eq","value":18446744073709551615}}}`,
		"id: x\ninitial: a\nstates: {a: {type: final}}\nguards:\n" +
			"  i: {field: f, op: eq, value: 1}\n" +
			"  f: {field: f, op: eq, value: 1.0}\n" +
			"  e: {field: f, op: eq, value: 1e2}\n" +
			"  b: {field: f, op: eq, value: true}\n" +
			"  s: {field: f, op: eq, value: x}\n" +
			"  n: {field: f, op: eq, value: null}\n" +
			"  a: {field: f, op: in, value: [1, x, 2.5]}\n" +
			"  o: {field: f, op: eq, value: {k: [1]}}\n" +
			"  big: {field: f, op: eq, value: 18446744073709551615}\n",
	} {
		def, _ := mustParse(t, src)
		want := map[string]any{
			"i": int64(1), "f": float64(1), "e": float64(100), "b": true, "s": "x", "n": nil,
			"a": []any{int64(1), "x", 2.5}, "o": map[string]any{"k": []any{int64(1)}},
			"big": float64(18446744073709551615),
		}
		for name, w := range want {
			g := def.Guards[name]
			if g == nil {
				t.Fatalf("guard %q missing", name)
			}
			if !reflect.DeepEqual(g.Value, w) {
				t.Errorf("guard %q value = %#v (%T), want %#v (%T)", name, g.Value, g.Value, w, w)
			}
		}
	}
}

func TestParseDefaultsAndNames(t *testing.T) {
	def, diags := mustParse(t, `{"id":"x","initial":"a","states":{
	  "a":{"allowed_tools":[],"on":{"GO":"b"}},
	  "b":{"type":"final"}},
	  "meta":{"failure_states":["blocked"],"debug":true,"default_model":"m"}}`)
	if len(diags) != 0 {
		t.Errorf("diagnostics: %v", diags)
	}
	if def.Context == nil || len(def.Context) != 0 {
		t.Errorf("Context = %#v, want empty non-nil map", def.Context)
	}
	if def.Source != "wf.json" {
		t.Errorf("Source = %q", def.Source)
	}
	for name, s := range def.States {
		if s.Name != name {
			t.Errorf("state %q has Name %q", name, s.Name)
		}
		if !s.Pos.IsValid() {
			t.Errorf("state %q has no Pos", name)
		}
	}
	a := def.States["a"]
	if a.AllowedTools == nil || len(a.AllowedTools) != 0 {
		t.Errorf("allowed_tools [] must stay non-nil and empty, got %#v", a.AllowedTools)
	}
	if def.States["b"].AllowedTools != nil {
		t.Errorf("absent allowed_tools must be nil")
	}
	if got := a.On["GO"]; got.Kind != TransitionSimple || got.Target != "b" || got.Pos != (Pos{Line: 2, Col: 39}) {
		t.Errorf("GO = %+v", got)
	}
	want := map[string]any{"failure_states": []any{"blocked"}, "debug": true}
	if !reflect.DeepEqual(def.Meta.Extra, want) {
		t.Errorf("Meta.Extra = %#v, want %#v", def.Meta.Extra, want)
	}
	if def.Meta.DefaultModel != "m" {
		t.Errorf("DefaultModel = %q", def.Meta.DefaultModel)
	}
}

func TestParseTransitionShapes(t *testing.T) {
	def, _ := mustParse(t, `{"id":"x","initial":"a","guards":{"g":{"field":"data.ok","op":"eq","value":true}},"states":{
	  "a":{"on":{
	    "S":"b",
	    "F":{"target":"b","guard":"g","guards":["g"],"requires_approval":true,"approval_message":"ok?"},
	    "G":[{"target":"b","guard":"g"},{"target":"a"}],
	    "K":{"fork":{"branches":{"x":{"initial":"a","terminal":"b"}},"on_complete":"b"}},
	    "I":{"invoke":"m","on_complete":"b","on_fail":"a","input":{"k":1}}}},
	  "b":{"type":"final"}}}`)
	on := def.States["a"].On
	if on["S"].Kind != TransitionSimple || on["F"].Kind != TransitionFull || on["G"].Kind != TransitionGuarded ||
		on["K"].Kind != TransitionFork || on["I"].Kind != TransitionInvoke {
		t.Fatalf("kinds: S=%v F=%v G=%v K=%v I=%v", on["S"].Kind, on["F"].Kind, on["G"].Kind, on["K"].Kind, on["I"].Kind)
	}
	if f := on["F"]; !f.RequiresApproval || f.ApprovalMessage != "ok?" || !reflect.DeepEqual(f.GuardNames(), []string{"g", "g"}) {
		t.Errorf("F = %+v", f)
	}
	if g := on["G"]; !reflect.DeepEqual(g.Targets(), []string{"b", "a"}) || g.Branches[0].Guard != "g" {
		t.Errorf("G targets = %v", g.Targets())
	}
	if k := on["K"]; k.Fork.Join != JoinAll || k.Fork.Branches["x"].Initial != "a" || k.PrimaryTarget() != "b" {
		t.Errorf("K = %+v", k.Fork)
	}
	if i := on["I"]; i.Invoke.Machine != "m" || i.Invoke.OnFail != "a" || !reflect.DeepEqual(i.Invoke.Input, map[string]any{"k": int64(1)}) {
		t.Errorf("I = %+v", i.Invoke)
	}
}

func TestParseCombinators(t *testing.T) {
	def, _ := mustParse(t, `{"id":"x","initial":"a","states":{"a":{"type":"final"}},"context":{"n":1},"guards":{
	  "base":{"field":"n","op":"gt","value":0},
	  "c":{"all":["base",{"any":[{"field":"n","op":"lt","value":5},"base"]},{"not":"base"}]}}}`)
	c := def.Guards["c"]
	if len(c.All) != 3 || c.All[0].Ref != "base" || len(c.All[1].Any) != 2 || c.All[1].Any[1].Ref != "base" || c.All[2].Not.Ref != "base" {
		t.Fatalf("combinator tree wrong: %+v", c)
	}
	if c.All[1].Any[0].Op != OpLt || c.All[1].Any[0].Value != int64(5) {
		t.Errorf("nested comparison = %+v", c.All[1].Any[0])
	}
}

func TestParseWrapperAndYAMLMatchJSON(t *testing.T) {
	jsonSrc := `{"id":"x","initial":"a","context":{"n":1},"states":{"a":{"allowed_tools":["Read"],"max_iterations":3,"on":{"GO":{"target":"b","guard":"g"}}},"b":{"type":"final"}},"guards":{"g":{"field":"n","op":"eq","value":1}}}`
	yamlSrc := "id: x\ninitial: a\ncontext: {n: 1}\nstates:\n  a:\n    allowed_tools: [Read]\n    max_iterations: 3\n    on:\n      GO: {target: b, guard: g}\n  b: {type: final}\nguards:\n  g: {field: n, op: eq, value: 1}\n"
	wrapped := `{"definition":` + jsonSrc + `,"upstream_servers":[{"name":"fs"}]}`
	var encoded []string
	for _, src := range []string{jsonSrc, yamlSrc, wrapped} {
		def, _ := mustParse(t, src)
		b, err := json.Marshal(def)
		if err != nil {
			t.Fatal(err)
		}
		encoded = append(encoded, string(b))
	}
	if encoded[0] != encoded[1] || encoded[0] != encoded[2] {
		t.Errorf("JSON, YAML and wrapper parse differently:\n%s\n%s\n%s", encoded[0], encoded[1], encoded[2])
	}
}

func TestParseRoundTrip(t *testing.T) {
	src := `{"id":"x","initial":"a","trust_event_data":true,"context":{"n":1,"f":1.5},
	  "guards":{"g":{"field":"n","op":"in","value":[1,2]},"h":{"any":["g",{"not":"g"}]},"e":{"all":[]}},
	  "meta":{"danger_level":"moderate","approval_mode":"none","workspace":{"version":1,"mode":"git_worktree","cleanup":"never"}},
	  "interrupts":{"i":{"trigger":{"file_pattern":"**/*.sql"},"target":"h","priority":-2}},
	  "states":{
	    "a":{"allowed_tools":[],"disallowed_tools":["Bash"],"max_iterations":0,"blocked_env":["T"],"env":{"A":"1"},
	         "on":{"S":"b","F":{"target":"b","guard":"g","requires_approval":true},"G":[],"K":{"fork":{"branches":{"x":{"initial":"h","terminal":"b"}},"join":"any","on_complete":"b"}},"I":{"invoke":"m","on_complete":"b","input":[1]}}},
	    "h":{"on":{"OK":"$return"}},
	    "b":{"type":"final"}}}`
	def, _ := mustParse(t, src)
	b1, err := json.Marshal(def)
	if err != nil {
		t.Fatal(err)
	}
	def2, _, err := Parse(b1, ParseOptions{Strict: true})
	if err != nil {
		t.Fatalf("re-parse of %s: %v", b1, err)
	}
	b2, err := json.Marshal(def2)
	if err != nil {
		t.Fatal(err)
	}
	if string(b1) != string(b2) {
		t.Errorf("round trip changed the definition:\n%s\n%s", b1, b2)
	}
	if def2.States["a"].AllowedTools == nil {
		t.Error("round trip turned allowed_tools [] into absent (unrestricted)")
	}
	if def2.States["a"].On["G"].Kind != TransitionGuarded || def2.Guards["e"].All == nil {
		t.Error("round trip lost an empty branch list or an empty all")
	}
	if def2.Meta.Extra["approval_mode"] != "none" {
		t.Error("round trip lost meta extras")
	}
	def3, _ := mustParse(t, `{"id":"x","initial":"a","trust_event_data":false,"states":{"a":{"type":"final"}}}`)
	b3, err := json.Marshal(def3)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b3), `"trust_event_data":false`) {
		t.Errorf("explicit trust_event_data false lost: %s", b3)
	}
	if b4, _ := json.Marshal(&Definition{ID: "y", States: map[string]*State{}}); strings.Contains(string(b4), "trust_event_data") {
		t.Errorf("unset trust_event_data encoded: %s", b4)
	}
}

func TestParseErrorsAndStrict(t *testing.T) {
	src := "{\n  \"id\": \"x\", \"initial\": \"a\",\n  \"states\": {\"a\": {\"type\": \"final\", \"typ\": 1}}\n}"
	// Unknown keys are errors by default (docs/workflow-format.md).
	def, _, err := Parse([]byte(src), ParseOptions{Source: "w.json"})
	var pe *ParseError
	if def != nil || !errors.As(err, &pe) {
		t.Fatalf("default: def=%v err=%v", def, err)
	}
	if got, want := pe.Diagnostics[0].String(), `w.json:3:37: error: unknown key "typ" in state "a" (did you mean "type"?)`; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	// A run's snapshot is read leniently: a warning, and a usable definition.
	for _, tc := range []struct {
		name string
		src  string
		opts ParseOptions
		ok   bool
	}{
		{"lenient snapshot", src, ParseOptions{Source: "w.json", Lenient: true}, true},
		{"compat opt-in", strings.Replace(src, `"id": "x",`, `"id": "x", "compat": "statewright",`, 1), ParseOptions{Source: "w.json"}, true},
		{"compat opt-in in the wrapper", `{"compat": "statewright", "definition": ` + src + `}`, ParseOptions{Source: "w.json"}, true},
		{"compat under --strict", strings.Replace(src, `"id": "x",`, `"id": "x", "compat": "statewright",`, 1), ParseOptions{Source: "w.json", Strict: true}, false},
		{"compat with another value", strings.Replace(src, `"id": "x",`, `"id": "x", "compat": "yes",`, 1), ParseOptions{Source: "w.json"}, false},
		{"lenient reads dropped fields too", `{"id":"x","initial":"a","states":{"a":{"on":{"GO":{"invoke":"m","on_complete":"b","guard":"g"}}},"b":{"type":"final"}}}`, ParseOptions{Lenient: true}, true},
		{"dropped fields are errors", `{"id":"x","initial":"a","states":{"a":{"on":{"GO":{"invoke":"m","on_complete":"b","guard":"g"}}},"b":{"type":"final"}}}`, ParseOptions{}, false},
	} {
		def, diags, err := Parse([]byte(tc.src), tc.opts)
		if (err == nil) != tc.ok {
			t.Errorf("%s: err = %v, want ok %v", tc.name, err, tc.ok)
			continue
		}
		if tc.ok && (def == nil || len(diags) == 0 || diags.HasErrors() || diags[0].Severity != SeverityWarning) {
			t.Errorf("%s: diags = %v", tc.name, diags)
		}
	}
	if def, _, _ := Parse([]byte(strings.Replace(src, `"typ": 1`, `"compat_note": 1`, 1)), ParseOptions{Lenient: true}); def == nil || def.Compat != "" {
		t.Errorf("compat set without the key")
	}
	def, _, _ = Parse([]byte(strings.Replace(src, `"id": "x",`, `"id": "x", "compat": "statewright",`, 1)), ParseOptions{})
	if def == nil || def.Compat != CompatStatewright || !RustNumbering(def) {
		t.Errorf("compat definition = %+v", def)
	}

	_, _, err = Parse([]byte(`{"id": 1, "initial": 2, "states": 3}`), ParseOptions{})
	if !errors.As(err, &pe) || len(pe.Diagnostics) != 3 || !strings.Contains(err.Error(), "(and 2 more errors)") {
		t.Errorf("multi-error = %v", err)
	}
	_, _, err = Parse([]byte("{\"id\": \"x\",\n \"initial\" \"a\"}"), ParseOptions{})
	if !errors.As(err, &pe) || pe.Diagnostics[0].Code != CodeSyntax || pe.Diagnostics[0].Pos != (Pos{Line: 2, Col: 12}) {
		t.Errorf("syntax error = %v (%+v)", err, pe)
	}
}

func TestDiagnosticString(t *testing.T) {
	for _, tc := range []struct {
		d    Diagnostic
		want string
	}{
		{Diagnostic{Severity: SeverityError, Message: "m", Pos: Pos{3, 7}, Source: "f.yaml"}, "f.yaml:3:7: error: m"},
		{Diagnostic{Severity: SeverityWarning, Message: "m", Pos: Pos{3, 7}}, "3:7: warning: m"},
		{Diagnostic{Severity: SeverityWarning, Message: "m", Source: "f"}, "f: warning: m"},
		{Diagnostic{Severity: SeverityError, Message: "m"}, "error: m"},
	} {
		if got := tc.d.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}

func TestValidateDeterministicAndSourced(t *testing.T) {
	src := `{"id":"m","initial":"zz","states":{"a":{"on":{"X":"q","Y":"r","Z":"s"}},"b":{"on":{"X":"q"}},"c":{},"d":{}},
	  "guards":{"g1":{"field":"u","op":"eq","value":1},"g2":{"field":"v","op":"eq","value":1}},
	  "interrupts":{"i1":{"trigger":{"file_pattern":"["},"target":"t1"},"i2":{"trigger":{"file_pattern":"*"},"target":"t2"}}}`
	def, _, err := Parse([]byte(src), ParseOptions{Source: "m.json"})
	if err != nil {
		t.Fatal(err)
	}
	first := Validate(def)
	if len(first) < 8 {
		t.Fatalf("expected many findings, got %v", first)
	}
	for _, d := range first {
		if d.Source != "m.json" || !d.Pos.IsValid() || d.Code == "" {
			t.Errorf("finding without source, position or code: %+v", d)
		}
	}
	for range 20 {
		if again := Validate(def); !reflect.DeepEqual(first, again) {
			t.Fatalf("Validate is not deterministic:\n%v\n%v", first, again)
		}
	}
}

func TestValidateHandBuiltDefinitions(t *testing.T) {
	// Definitions built in Go (no positions, nil entries) must not panic.
	defs := []*Definition{
		nil,
		{},
		{Initial: "a", States: map[string]*State{"a": nil}},
		{Initial: "a", States: map[string]*State{"a": {On: map[string]*Transition{
			"F": {Kind: TransitionFork}, "I": {Kind: TransitionInvoke}, "G": {Kind: TransitionGuarded, Branches: []*Branch{nil}}, "N": nil,
		}}, "nil": nil}, Guards: map[string]*Guard{"g": nil, "h": {All: []*Guard{nil, {Ref: "h"}}}}, Interrupts: map[string]*Interrupt{"i": nil},
			Meta: &Meta{DangerLevel: DangerDangerous}},
	}
	for i, d := range defs {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("definition %d: Validate panicked: %v", i, r)
				}
			}()
			Validate(d)
		}()
	}
}

func TestToolRung(t *testing.T) {
	def := &Definition{ToolPrivileges: map[string]string{"mcp__db__query": "read", "mcp__k8s__apply": "git", "Read": "external"}}
	for _, tc := range []struct {
		tool       string
		want       Rung
		seed, rust int
	}{
		{"TodoWrite", RungNone, 0, 0}, {"mcp__statewright__transition", RungNone, 0, 0}, {"statewright_get_state", RungNone, 0, 0},
		{"Grep", RungRead, 0, 1}, {"Glob", RungRead, 0, 1}, {"LS", RungRead, 0, 1}, {"read_file", RungRead, 0, 1},
		{"Task", RungRead, 0, 1}, {"git_log", RungRead, 0, 1}, {"mcp__git__git_status", RungRead, 0, 1},
		{"Edit", RungWrite, 1, 2}, {"Write", RungWrite, 1, 2}, {"MultiEdit", RungWrite, 1, 2}, {"NotebookEdit", RungWrite, 1, 2}, {"apply_patch", RungWrite, 1, 2},
		{"Bash", RungExecute, 2, 3}, {"bash", RungExecute, 2, 3}, {"Exec", RungExecute, 2, 3}, {"run_command", RungExecute, 2, 3},
		{"GitWrite", RungGit, 3, 3}, {"git_commit", RungGit, 3, 3}, {"mcp__git__git_push", RungGit, 3, 3},
		{"WebFetch", RungExternal, 4, 4}, {"Network", RungExternal, 4, 4}, {"Destructive", RungExternal, 4, 4}, {"deploy", RungExternal, 4, 4},
		// Unknown tools stand on the top rung unless the workflow rates them.
		{"mcp__github__create_pr", RungExternal, 4, 4}, {"Raed", RungExternal, 4, 4}, {"git_frobnicate", RungExternal, 4, 4},
		{"mcp__db__query", RungRead, 0, 1}, {"mcp__k8s__apply", RungGit, 3, 3},
		// tool_privileges is matched exactly: "Read" is rated, "read" is not.
		{"Read", RungExternal, 4, 4}, {"read", RungRead, 0, 1},
	} {
		got := ToolRung(def, tc.tool)
		if got != tc.want || got.Number(false) != tc.seed || got.Number(true) != tc.rust {
			t.Errorf("ToolRung(%q) = %s (%d, rust %d), want %s (%d, rust %d)", tc.tool, got, got.Number(false), got.Number(true), tc.want, tc.seed, tc.rust)
		}
	}
	for _, tc := range []struct {
		s    *State
		want Rung
	}{
		{&State{}, RungExternal},
		{&State{AllowedTools: []string{}}, RungNone},
		{&State{AllowedTools: []string{"Read", "Edit"}}, RungWrite},
		{&State{AllowedTools: []string{"Read", "Edit"}, DisallowedTools: []string{"edit"}}, RungRead},
		{&State{AllowedTools: []string{"Read", "mcp__x__y"}}, RungExternal},
		{&State{Type: StateFinal}, RungNone},
	} {
		if got := StateRung(nil, tc.s); got != tc.want {
			t.Errorf("StateRung(%+v) = %s, want %s", tc.s, got, tc.want)
		}
	}
}

// The escalation check (safety check 6) on both numberings: write -> deploy
// is flagged on the seed design's ladder (write 1) and passes on the Rust
// project's (write 2), which only flags read states.
func TestEscalationLadder(t *testing.T) {
	const tmpl = `{%s"id": "x", "initial": "a", "meta": {"danger_level": "dangerous"},
  "states": {
    "a": {"allowed_tools": [%s], "on": {"GO": "b", "FAIL": "failed", "OK": {"target": "b", "requires_approval": true}}},
    "b": {"allowed_tools": ["Read", "deploy"], "on": {"FAIL": "failed"}},
    "failed": {"type": "final"}}}`
	for _, tc := range []struct {
		name    string
		compat  string
		tools   string
		flagged bool
	}{
		{"read to external", "", `"Read"`, true},
		{"write to external", "", `"Read"`, true},
		{"write to external (seed ladder)", "", `"Edit"`, true},
		{"write to external (Rust numbering)", `"compat": "statewright", `, `"Edit"`, false},
		{"read to external (Rust numbering)", `"compat": "statewright", `, `"Grep"`, true},
		{"execute to external", "", `"Bash"`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			def, _, err := Parse([]byte(fmt.Sprintf(tmpl, tc.compat, tc.tools)), ParseOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var found []string
			for _, d := range Validate(def) {
				if d.Code == CodeSafetyEscalation {
					found = append(found, d.Message)
				}
			}
			if (len(found) > 0) != tc.flagged {
				t.Errorf("escalation findings %q, want flagged %v", found, tc.flagged)
			}
		})
	}
}

func TestEvidenceFields(t *testing.T) {
	want := []string{EvidenceFilesEdited, EvidenceIterations, EvidenceLastCommandExitCode, EvidenceLastCommandProgram,
		EvidenceLastTestChannel, EvidenceLastTestExitCode, EvidenceLastTestNarrowed, EvidenceLastTestNarrowedBy, EvidenceLastTestPassed,
		EvidenceLastTestReason, EvidenceLastTestReport, EvidenceLastTestRunner, EvidenceLastTestTestsFailed, EvidenceLastTestTestsRun}
	if got := EvidenceFields(); !reflect.DeepEqual(got, want) {
		t.Errorf("EvidenceFields() = %v", got)
	}
	if typ, ok := EvidenceFieldType(EvidenceLastTestPassed); !ok || typ != EvidenceBool {
		t.Errorf("type of last_test.passed = %v %v", typ, ok)
	}
	if _, ok := EvidenceFieldType("runtime.nope"); ok || !IsEvidenceField("runtime.nope") || IsEvidenceField("runtimex") {
		t.Error("evidence field classification wrong")
	}
}

func TestSuggest(t *testing.T) {
	known := []string{"allowed_tools", "allowed_commands", "disallowed_tools", "instructions", "type", "on"}
	for in, want := range map[string]string{
		"allowed_tool": "allowed_tools", "Allowed_Tools": "allowed_tools", "instrutions": "instructions",
		"tpye": "type", "owner": "", "x": "", "disalowed_tools": "disallowed_tools",
	} {
		if got := suggest(in, known); got != want {
			t.Errorf("suggest(%q) = %q, want %q", in, got, want)
		}
	}
}

// corpusDef parses one corpus case by archive and name.
func corpusDef(t *testing.T, archive, name string) *Definition {
	t.Helper()
	for _, c := range loadCorpus(t) {
		if strings.HasSuffix(c.archive, "/"+archive) && c.name == name {
			def, _, err := Parse(c.data, ParseOptions{})
			if err != nil {
				t.Fatalf("%s/%s: %v", archive, name, err)
			}
			return def
		}
	}
	t.Fatalf("no corpus case %s/%s", archive, name)
	return nil
}

// TestTypesRSValues checks the parsed values the reference's types.rs and
// interrupt.rs parsing tests assert (§6.5, §6.4 15–17).
func TestTypesRSValues(t *testing.T) {
	def := corpusDef(t, "types_rs.txtar", "state_def_model_field")
	if def.States["a"].Model != "claude-sonnet-4-5" || def.States["done"].Model != "" {
		t.Errorf("state_def_deserializes_model_field: %q %q", def.States["a"].Model, def.States["done"].Model)
	}
	def = corpusDef(t, "examples.txtar", "bugfix_config")
	for name, s := range def.States {
		if s.Model != "" {
			t.Errorf("state_def_model_defaults_to_none: state %s has model %q", name, s.Model)
		}
	}
	def = corpusDef(t, "types_rs.txtar", "meta_default_model")
	if def.Meta.DefaultModel != "gpt-5" || def.States["a"].Model != "gpt-5-mini" {
		t.Errorf("meta_default_model_deserializes: %q %q", def.Meta.DefaultModel, def.States["a"].Model)
	}
	def = corpusDef(t, "types_rs.txtar", "thinking_level")
	if def.States["a"].ThinkingLevel != "high" || def.States["b"].ThinkingLevel != "off" || def.States["done"].ThinkingLevel != "" {
		t.Errorf("state_def_thinking_level_deserializes: %+v", def.States)
	}
	def = corpusDef(t, "types_rs.txtar", "delivery_policies_typed")
	if ws := def.Meta.Workspace; ws == nil || ws.Cleanup != "after_promoted" || ws.Mode != "git_worktree" || ws.Version != 1 {
		t.Errorf("workspace = %+v", def.Meta.Workspace)
	}
	if pv := def.Meta.Preview; pv == nil || pv.Mode != "taskfile" || pv.PrepareState != "a" {
		t.Errorf("preview = %+v", def.Meta.Preview)
	}
	if pr := def.Meta.Promotion; pr == nil || pr.Mode != "squash" || pr.PromoteState != "a" || pr.Required {
		t.Errorf("promotion = %+v", def.Meta.Promotion)
	}
	def = corpusDef(t, "types_rs.txtar", "interrupts_parse_without_validation")
	if len(def.Interrupts) != 2 {
		t.Fatalf("interrupts = %v", def.Interrupts)
	}
	if in := def.Interrupts["pb_check"]; in.Trigger.FilePattern != "site/pb/**/*.pb.js" || in.Target != "pb_validating" || in.Priority != 1 {
		t.Errorf("pb_check = %+v", in)
	}
	if in := def.Interrupts["env_audit"]; in.Target != "env_handler" || in.Priority != -1 {
		t.Errorf("env_audit = %+v", in)
	}
	def = corpusDef(t, "validate_statewright.txtar", "accepts_valid_machine")
	if def.Interrupts != nil && len(def.Interrupts) != 0 {
		t.Errorf("machine_definition_without_interrupts_defaults_empty: %v", def.Interrupts)
	}
	def = corpusDef(t, "examples.txtar", "research")
	if got := def.States["scoping"].DisallowedTools; !reflect.DeepEqual(got, []string{"Edit", "Write", "Bash"}) || def.States["scoping"].AllowedTools != nil {
		t.Errorf("research scoping: allowed=%v disallowed=%v", def.States["scoping"].AllowedTools, got)
	}
	if def.Meta.Extra["orchestration"] != "plugin" || def.Meta.Extra["autonomous"] != true || !def.Meta.CaptureOutput {
		t.Errorf("research meta = %+v", def.Meta)
	}
	def = corpusDef(t, "examples.txtar", "agentic_engineering_default")
	impl := def.States["implement"]
	if *impl.MaxEditLines != 400 || !impl.DirectExecution || len(impl.ModelLadder) != 2 || *def.States["localize"].ContextBudgetBytes != 200000 {
		t.Errorf("agentic implement = %+v", impl)
	}
	if trim, ok := def.Context["trim"].(map[string]any); !ok || trim["keep_last"] != int64(6) {
		t.Errorf("nested context = %#v", def.Context)
	}
}
