package workflow

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// tplWantNames is the set of bundled templates, sorted.
var tplWantNames = []string{"bugfix", "code-review", "feature", "investigate", "refactor", "release", "tdd"}

func TestTemplateNames(t *testing.T) {
	if got := TemplateNames(); !slices.Equal(got, tplWantNames) {
		t.Fatalf("TemplateNames() = %v, want %v", got, tplWantNames)
	}
}

func TestTemplateSourceUnknown(t *testing.T) {
	for _, name := range []string{"", "nope", "bugfix.json", "../templates/bugfix", "BUGFIX"} {
		t.Run(name, func(t *testing.T) {
			data, err := TemplateSource(name)
			if err == nil {
				t.Fatalf("TemplateSource(%q) = %d bytes, want error", name, len(data))
			}
			var nf *TemplateNotFoundError
			if !errors.As(err, &nf) {
				t.Fatalf("TemplateSource(%q) error %T %v, want *TemplateNotFoundError", name, err, err)
			}
			if nf.Name != name || !slices.Equal(nf.Available, tplWantNames) {
				t.Errorf("error = %+v, want Name %q and Available %v", nf, name, tplWantNames)
			}
			for _, n := range tplWantNames {
				if !strings.Contains(err.Error(), n) {
					t.Errorf("error %q does not list %q", err, n)
				}
			}
			if _, err := LoadTemplate(name); !errors.As(err, &nf) {
				t.Errorf("LoadTemplate(%q) error = %v, want *TemplateNotFoundError", name, err)
			}
		})
	}
}

// TestTemplateSourcesRaw checks the raw files, independently of Parse: well
// formed JSON, the id equal to the file name, a description in meta, and no
// "$schema" key.
func TestTemplateSourcesRaw(t *testing.T) {
	for _, name := range tplWantNames {
		t.Run(name, func(t *testing.T) {
			data, err := TemplateSource(name)
			if err != nil {
				t.Fatal(err)
			}
			var raw struct {
				ID     string         `json:"id"`
				Schema *string        `json:"$schema"`
				Meta   map[string]any `json:"meta"`
			}
			if err := json.Unmarshal(data, &raw); err != nil {
				t.Fatalf("template %s is not valid JSON: %v", name, err)
			}
			if raw.ID != name {
				t.Errorf("id = %q, want %q", raw.ID, name)
			}
			if raw.Schema != nil {
				t.Errorf("template carries a $schema key")
			}
			if d, _ := raw.Meta["description"].(string); d == "" || strings.Contains(d, "\n") {
				t.Errorf("meta.description = %q, want one non-empty line", d)
			}
		})
	}
}

// loadTemplateForTest parses and validates a template, turning a panic of a
// not yet implemented Parse or Validate into a test failure so that the
// other tests still run.
func loadTemplateForTest(t *testing.T, name string) (def *Definition, diags Diagnostics) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("loading template %s panicked: %v", name, r)
		}
	}()
	data, err := TemplateSource(name)
	if err != nil {
		t.Fatal(err)
	}
	def, diags, err = Parse(data, ParseOptions{Source: TemplateSourceName(name), Strict: true})
	if err != nil {
		t.Fatalf("Parse(%s): %v", name, err)
	}
	return def, append(diags, Validate(def)...)
}

// tplAcceptedNotes are the diagnostic codes a template may carry: notes that
// explain where statewright-go's semantics differ from statewright's, which
// the templates use on purpose (max_iterations denies at the limit).
var tplAcceptedNotes = map[string]bool{"compat-max-iterations": true}

func TestTemplatesParseAndValidateClean(t *testing.T) {
	for _, name := range tplWantNames {
		t.Run(name, func(t *testing.T) {
			def, diags := loadTemplateForTest(t, name)
			for _, d := range diags {
				if d.Severity == SeverityError || !tplAcceptedNotes[d.Code] {
					t.Errorf("diagnostic: %s [%s]", d, d.Code)
				}
			}
			if def.Source != TemplateSourceName(name) {
				t.Errorf("Source = %q, want %q", def.Source, TemplateSourceName(name))
			}
			loaded, err := LoadTemplate(name)
			if err != nil {
				t.Fatalf("LoadTemplate(%s): %v", name, err)
			}
			if loaded.ID != name || len(loaded.States) != len(def.States) {
				t.Errorf("LoadTemplate(%s) = id %q with %d states, want id %q with %d", name, loaded.ID, len(loaded.States), name, len(def.States))
			}
		})
	}
}

// tplEditTools are the tools that change files directly.
var tplEditTools = []string{"Edit", "Write", "MultiEdit", "NotebookEdit"}

// TestTemplatesSafety checks the rules every template follows: instructions
// and an explicit tool list per working state, an iteration budget, a final
// "failed" state reachable from every working state, no Exec capability, and
// metadata.
func TestTemplatesSafety(t *testing.T) {
	for _, name := range tplWantNames {
		t.Run(name, func(t *testing.T) {
			def, _ := loadTemplateForTest(t, name)
			if def.Meta == nil || def.Meta.TaskType == "" || def.Meta.DangerLevel == "" {
				t.Errorf("meta = %+v, want task_type and danger_level", def.Meta)
			} else if d, _ := def.Meta.Extra["description"].(string); d == "" {
				t.Errorf("meta.description missing after parsing (Extra = %v)", def.Meta.Extra)
			}
			if !def.States["failed"].IsFinal() {
				t.Fatalf("no final state named failed")
			}
			for _, sn := range tplSortedKeys(def.States) {
				s := def.States[sn]
				if s.IsFinal() {
					if len(s.On) != 0 {
						t.Errorf("final state %s has transitions", sn)
					}
					continue
				}
				if s.Instructions == "" {
					t.Errorf("state %s has no instructions", sn)
				}
				if s.AllowedTools == nil {
					t.Errorf("state %s leaves allowed_tools unrestricted", sn)
				}
				if s.MaxIterations == nil || *s.MaxIterations == 0 {
					t.Errorf("state %s has no max_iterations", sn)
				}
				if slices.Contains(s.AllowedTools, "Exec") {
					t.Errorf("state %s grants Exec", sn)
				}
				if !tplReaches(def, sn, "failed") {
					t.Errorf("state %s cannot reach failed", sn)
				}
				if s.SafeNext != "" && tplGrantsEdits(def.States[s.SafeNext]) && !tplGrantsEdits(s) {
					t.Errorf("state %s: safe_next %s grants edits the state does not have", sn, s.SafeNext)
				}
			}
		})
	}
}

// tplGrantsEdits reports whether s allows a file-editing tool.
func tplGrantsEdits(s *State) bool {
	for _, tool := range tplEditTools {
		if slices.Contains(s.AllowedTools, tool) && !slices.Contains(s.DisallowedTools, tool) {
			return true
		}
	}
	return false
}

// reaches reports whether to is reachable from from over transition targets.
func tplReaches(def *Definition, from, to string) bool {
	seen := map[string]bool{from: true}
	queue := []string{from}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur == to {
			return true
		}
		s := def.States[cur]
		if s == nil {
			continue
		}
		for _, ev := range tplSortedKeys(s.On) {
			for _, target := range s.On[ev].Targets() {
				if !seen[target] {
					seen[target] = true
					queue = append(queue, target)
				}
			}
		}
	}
	return false
}

func tplSortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestTemplateSpecifics checks what each template promises in docs/templates.md.
func TestTemplateSpecifics(t *testing.T) {
	tests := []struct {
		name  string
		check func(def *Definition) error
	}{
		{"bugfix", func(def *Definition) error {
			return tplAll(
				tplPath(def, "localizing", "planning", "implementing", "testing", "done"),
				tplReadOnly(def, "localizing", "planning"),
				tplTarget(def, "testing", "TESTS_FAIL", "implementing"),
				tplCommands(def, "testing", "go test", "pytest", "npm test", "cargo test", "make test"),
			)
		}},
		{"feature", func(def *Definition) error {
			return tplAll(
				tplPath(def, "planning", "implementing", "testing", "review", "done"),
				tplReadOnly(def, "planning", "review"),
				tplTarget(def, "review", "CHANGES_NEEDED", "implementing"),
				tplApproval(def, "review", "APPROVED", "done"),
				tplCommands(def, "testing", "go test", "pytest", "npm test", "cargo test", "make test"),
			)
		}},
		{"tdd", func(def *Definition) error {
			return tplAll(
				tplPath(def, "red", "green", "refactor", "done"),
				tplGuardOn(def, "red", "green", "runtime.last_test.passed", false),
				tplGuardOn(def, "green", "refactor", "runtime.last_test.passed", true),
				tplGuardOn(def, "refactor", "done", "runtime.last_test.passed", true),
				tplGuardOn(def, "refactor", "red", "runtime.last_test.passed", true),
			)
		}},
		{"refactor", func(def *Definition) error {
			s := def.States["refactoring"]
			if s == nil || s.MaxEditLines == nil || s.MaxFilesPerState == nil {
				return fmt.Errorf("refactoring state lacks max_edit_lines/max_files_per_state")
			}
			if slices.Contains(s.AllowedTools, "Bash") {
				return fmt.Errorf("refactoring allows Bash, whose writes escape the edit limits")
			}
			return tplAll(
				tplPath(def, "analyzing", "refactoring", "verifying", "done"),
				tplReadOnly(def, "analyzing", "verifying"),
				tplTarget(def, "verifying", "TESTS_FAIL", "refactoring"),
			)
		}},
		{"code-review", func(def *Definition) error {
			return tplAll(
				tplPath(def, "reading", "reporting", "done"),
				tplReadOnly(def, tplSortedKeys(def.States)...),
				tplCommands(def, "reading", "git diff", "git log"),
				tplNoCapabilities(def),
			)
		}},
		{"investigate", func(def *Definition) error {
			return tplAll(
				tplPath(def, "exploring", "hypothesizing", "reporting", "done"),
				tplReadOnly(def, tplSortedKeys(def.States)...),
				tplTools(def, "exploring", "WebFetch", "WebSearch"),
				tplNoCapabilities(def),
			)
		}},
		{"release", func(def *Definition) error {
			for _, sn := range tplSortedKeys(def.States) {
				if sn != "committing" && slices.Contains(def.States[sn].AllowedTools, "GitWrite") {
					return fmt.Errorf("state %s grants GitWrite before the approval", sn)
				}
			}
			return tplAll(
				tplPath(def, "planning", "preparing", "testing", "committing", "done"),
				tplReadOnly(def, "planning"),
				tplApproval(def, "testing", "SHIP", "committing"),
				tplTools(def, "committing", "GitWrite"),
				tplCommands(def, "committing", "git commit", "git tag"),
				tplCommands(def, "testing", "go test", "make test"),
			)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def, _ := loadTemplateForTest(t, tt.name)
			if def.Initial != "" && def.Initial != tplInitial[tt.name] {
				t.Errorf("initial = %q, want %q", def.Initial, tplInitial[tt.name])
			}
			if err := tt.check(def); err != nil {
				t.Error(err)
			}
		})
	}
}

// tplInitial is each template's initial state.
var tplInitial = map[string]string{
	"bugfix": "localizing", "feature": "planning", "tdd": "red", "refactor": "analyzing",
	"code-review": "reading", "investigate": "exploring", "release": "planning",
}

func tplAll(errs ...error) error { return errors.Join(errs...) }

// path checks that consecutive states are joined by a transition.
func tplPath(def *Definition, states ...string) error {
	for i := 0; i+1 < len(states); i++ {
		s := def.States[states[i]]
		if s == nil {
			return fmt.Errorf("no state %s", states[i])
		}
		found := false
		for _, tr := range s.On {
			if slices.Contains(tr.Targets(), states[i+1]) {
				found = true
			}
		}
		if !found {
			return fmt.Errorf("no transition %s -> %s", states[i], states[i+1])
		}
	}
	return nil
}

// readOnly checks that the named states allow no editing tool and no write capability.
func tplReadOnly(def *Definition, states ...string) error {
	for _, sn := range states {
		s := def.States[sn]
		if s == nil {
			return fmt.Errorf("no state %s", sn)
		}
		if s.IsFinal() {
			continue
		}
		if tplGrantsEdits(s) {
			return fmt.Errorf("state %s allows edits: %v", sn, s.AllowedTools)
		}
		for _, c := range []string{"GitWrite", "Exec", "Destructive", "Privileged"} {
			if slices.Contains(s.AllowedTools, c) {
				return fmt.Errorf("state %s grants %s", sn, c)
			}
		}
	}
	return nil
}

// noCapabilities checks that no state grants a shell capability beyond Bash.
func tplNoCapabilities(def *Definition) error {
	for _, sn := range tplSortedKeys(def.States) {
		for _, c := range []string{"GitWrite", "Exec", "Network", "Destructive", "Privileged"} {
			if slices.Contains(def.States[sn].AllowedTools, c) {
				return fmt.Errorf("state %s grants %s", sn, c)
			}
		}
	}
	return nil
}

func tplTarget(def *Definition, state, event, want string) error {
	s := def.States[state]
	if s == nil || s.On[event] == nil {
		return fmt.Errorf("no event %s in state %s", event, state)
	}
	if got := s.On[event].PrimaryTarget(); got != want {
		return fmt.Errorf("%s.%s -> %s, want %s", state, event, got, want)
	}
	return nil
}

// tplApproval checks that state's event leads to target only after a human
// approves, with a message for the approver.
func tplApproval(def *Definition, state, event, target string) error {
	s := def.States[state]
	if s == nil || s.On[event] == nil {
		return fmt.Errorf("no event %s in state %s", event, state)
	}
	tr := s.On[event]
	if tr.Kind != TransitionFull || tr.Target != target || !tr.RequiresApproval || tr.ApprovalMessage == "" {
		return fmt.Errorf("%s.%s = %+v, want an approval-gated transition with a message to %s", state, event, tr, target)
	}
	return nil
}

func tplCommands(def *Definition, state string, want ...string) error {
	s := def.States[state]
	if s == nil {
		return fmt.Errorf("no state %s", state)
	}
	for _, c := range want {
		if !slices.Contains(s.AllowedCommands, c) {
			return fmt.Errorf("state %s allowed_commands %v lacks %q", state, s.AllowedCommands, c)
		}
	}
	return nil
}

func tplTools(def *Definition, state string, want ...string) error {
	s := def.States[state]
	if s == nil {
		return fmt.Errorf("no state %s", state)
	}
	for _, tool := range want {
		if !slices.Contains(s.AllowedTools, tool) {
			return fmt.Errorf("state %s allowed_tools %v lacks %q", state, s.AllowedTools, tool)
		}
	}
	return nil
}

// guardOn checks that every transition from state to target is guarded by a
// guard comparing field with eq to want.
func tplGuardOn(def *Definition, state, target, field string, want bool) error {
	s := def.States[state]
	if s == nil {
		return fmt.Errorf("no state %s", state)
	}
	n := 0
	for _, ev := range tplSortedKeys(s.On) {
		tr := s.On[ev]
		if tr.PrimaryTarget() != target {
			continue
		}
		n++
		ok := false
		for _, gn := range tr.GuardNames() {
			g := def.Guards[gn]
			if g == nil {
				continue
			}
			for _, c := range append([]*Guard{g}, g.All...) {
				if c != nil && c.Field == field && c.Op == OpEq && c.Value == want {
					ok = true
				}
			}
		}
		if !ok {
			return fmt.Errorf("%s.%s -> %s is not guarded by %s eq %v", state, ev, target, field, want)
		}
	}
	if n == 0 {
		return fmt.Errorf("no transition %s -> %s", state, target)
	}
	return nil
}

// Every bundled guard that accepts a passed test run also requires that the
// run was not narrowed and ran at least one test (issue 15.2).
func TestTemplatesRequireWholeSuite(t *testing.T) {
	for _, name := range TemplateNames() {
		def, _ := loadTemplateForTest(t, name)
		for gn, g := range def.Guards {
			var passed, whole, ran bool
			for _, c := range append([]*Guard{g}, g.All...) {
				switch {
				case c.Field == EvidenceLastTestPassed && c.Op == OpEq && c.Value == true:
					passed = true
				case c.Field == EvidenceLastTestNarrowed && c.Op == OpEq && c.Value == false:
					whole = true
				case c.Field == EvidenceLastTestTestsRun && c.Op == OpGte && c.Value == int64(1):
					ran = true
				}
			}
			if passed && (!whole || !ran) {
				t.Errorf("%s: guard %s accepts a passed run without requiring narrowed == false (%v) and tests_run >= 1 (%v)", name, gn, whole, ran)
			}
		}
	}
}
