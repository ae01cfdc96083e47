package policy

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// readLazily makes every flat edit's input be read lazily until the test
// ends.
func readLazily(t testing.TB) {
	old := lazyMin
	lazyMin = 0
	t.Cleanup(func() { lazyMin = old })
}

// TestLazyReadingKeepsTheCorpus: the corpus and the golden lessons
// decide alike when every flat edit is read lazily.
func TestLazyReadingKeepsTheCorpus(t *testing.T) {
	readLazily(t)
	TestCorpus(t)
	TestGoldenReasons(t)
	TestRawFieldsAgree(t)
}

// lazyAgrees checks the lazy reading of a flat edit's input against
// encoding/json: the files it finds are the ones decoding finds, or the
// whole reading (what every allow goes through) refuses the input; the
// whole reading accepts only what decodes, with the decoded files; and
// whether the content is over a limit is what the whole count says.
func lazyAgrees(t *testing.T, input []byte) {
	t.Helper()
	readLazily(t)
	for _, k := range []kind{kWrite, kEdit, kNotebookEdit, kDelete} {
		var want *editInfo
		if m, err := decodeInput(input); err == nil {
			if ei, err := parseEdit(k, m); err == nil {
				want = &ei
			}
		}
		for _, limit := range []int{-1, 0, 1, 2, 3, 7} {
			p := prepared{call: &ToolCall{Tool: "x", Input: input}, info: toolInfo{kind: k}}
			targets, terr := p.editTargets()
			over, overOK := p.linesOver(limit)
			ei, err := p.editInfo()
			if err == nil {
				if want == nil {
					t.Fatalf("kind %d: the whole reading accepts %q, which does not decode to an edit", k, input)
				}
				if !slices.Equal(ei.paths, want.paths) {
					t.Fatalf("kind %d, %q: whole reading %q, decoded %q", k, input, ei.paths, want.paths)
				}
				if terr != nil || !slices.Equal(targets, want.paths) {
					t.Fatalf("kind %d, %q: lazy %q (%v), decoded %q", k, input, targets, terr, want.paths)
				}
				if overOK && over != (ei.lines > limit) {
					t.Fatalf("kind %d, %q: lazy says over %d is %v, the count is %d", k, input, limit, over, ei.lines)
				}
				continue
			}
			if want != nil && terr == nil && !slices.Equal(targets, want.paths) && err == nil {
				t.Fatalf("kind %d, %q: lazy %q, decoded %q, and the whole reading did not refuse", k, input, targets, want.paths)
			}
		}
	}
}

func TestLazyFlat(t *testing.T) {
	big := strings.Repeat(`x \"q\" \\ \n`, 200)
	for _, in := range []string{
		`{"file_path":"/a","content":"` + big + `"}`,
		`{"content":"` + big + `","file_path":"/a"}`,
		`{"file_path":"/a","content":"` + big + `","file_path":"/b"}`,
		`{"file_path":"/a","content":"x","file_path":"/a"}`,
		`{"file\u005fpath":"/a","file_path":"/b"}`,
		`{"path":"/p","content":"` + big + `","file_path":"/a"}`,
		`{"file_path":1,"path":"/p"}`,
		`{"file_path":"","path":"/p"}`,
		`{"file_path":"/\u002e\u002e/etc","content":"a\u000Ab"}`,
		`{"file_path":"/a\"b","content":"\\n"}`,
		`{"x":{"file_path":"/y","a":[1,"]}"]},"file_path":"/z"}`,
		`{"file_path":"/a","content":"unterminated`,
		`{"file_path":"/a","content":"` + big + `"} trailing`,
		`{"file_path":"/a",}`, `{"file_path" "/a"}`, `{"file_path":"/a"` + "\x00" + `}`, `["/a"]`, `null`, ``, `{}`,
		`{"content":"a\nb\n","file_path":"/a"}`, `{"content":"a\nb","file_path":"/a"}`, `{"content":"","file_path":"/a"}`,
		`{"notebook_path":"/n","new_source":"a\nb\nc","content":"x"}`,
		`{"file_path":"/a","old_string":"a\nb","new_string":"c","replace_all":true}`,
		`{"filePath":"/a","content":"` + big + `","text":"y"}`,
	} {
		lazyAgrees(t, []byte(in))
	}
}

func FuzzLazyFlat(f *testing.F) {
	for _, in := range []string{`{"file_path":"/a","content":"x\ny\n"}`, `{"content":"\"\\\n","file_path":"/a","file_path":"/b"}`,
		`{"path":"/\u0061b","content":"\u00e9","file_path":"/c"}`, `{"a":{"file_path":"/x"},"file_path":"/y"}`, `{"file\u005fpath":"/a"}`} {
		f.Add([]byte(in))
	}
	f.Fuzz(lazyAgrees)
}

// TestLazyDecisions: a large Write's decisions, read lazily, fail closed:
// a protected path before or after the content is denied where Write is
// not allowed, where it is, and with no run; a file path given twice with
// different values is denied where Write is allowed; an implicit
// transition reads the whole input before it allows.
func TestLazyDecisions(t *testing.T) {
	law := loadLaw(t, "workflows/dev.yaml", corpusOptions)
	auto := loadLaw(t, "workflows/auto.yaml", corpusOptions)
	content, _ := json.Marshal(strings.Repeat("\tfmt.Println(\"line\")\n", 400))
	c := string(content)
	write := func(in string) *ToolCall {
		return &ToolCall{Tool: "Write", Cwd: "/repo", ProjectDir: "/repo", Input: json.RawMessage(in)}
	}
	planning := &RunState{Active: true, State: "planning"}
	ops := &RunState{Active: true, State: "ops"}
	dormant := &RunState{}
	for _, tc := range []struct {
		name string
		law  *Law
		run  *RunState
		in   string
		want Verdict
		rule Rule
	}{
		{"protected first, not allowed", law, planning, `{"file_path":".claude/settings.json","content":` + c + `}`, Deny, RuleSelfProtect},
		{"protected last, not allowed", law, planning, `{"content":` + c + `,"file_path":".claude/settings.json"}`, Deny, RuleSelfProtect},
		{"protected last, allowed", law, ops, `{"content":` + c + `,"file_path":".claude/settings.json"}`, Deny, RuleSelfProtect},
		{"protected, dormant", law, dormant, `{"file_path":"/repo/workflows/dev.yaml","content":` + c + `}`, Deny, RuleSelfProtect},
		{"ordinary, allowed", law, ops, `{"file_path":"src/a.go","content":` + c + `}`, Allow, RuleAllow},
		{"ordinary, dormant", law, dormant, `{"file_path":"src/a.go","content":` + c + `}`, Allow, RuleDormant},
		{"ordinary, not allowed", law, planning, `{"file_path":"src/a.go","content":` + c + `}`, Deny, RuleToolNotAllowed},
		{"twice, allowed", law, ops, `{"file_path":"src/a.go","content":` + c + `,"file_path":".claude/settings.json"}`, Deny, RuleBadInput},
		{"twice, dormant", law, dormant, `{"file_path":"src/a.go","content":` + c + `,"file_path":"/repo/workflows/dev.yaml"}`, Deny, RuleBadInput},
		{"twice alike, allowed", law, ops, `{"file_path":"src/a.go","content":` + c + `,"file_path":"src/a.go"}`, Allow, RuleAllow},
		{"escaped key twice, allowed", law, ops, `{"file_path":"src/a.go","content":` + c + `,"file\u005fpath":".claude/settings.json"}`, Deny, RuleBadInput},
		{"broken after the path, allowed", law, ops, `{"file_path":"src/a.go","content":` + c + `,}`, Deny, RuleBadInput},
		{"broken after the path, dormant", law, dormant, `{"file_path":"src/a.go","content":` + c[:len(c)-1], Deny, RuleBadInput},
		{"implicit", auto, planning, `{"file_path":"a.go","content":` + c + `}`, Allow, RuleImplicitTransition},
		{"implicit, broken", auto, planning, `{"file_path":"a.go","content":` + c + `,"x":}`, Deny, RuleToolNotAllowed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.law.Decide(tc.run, write(tc.in))
			if d.Verdict != tc.want || d.Rule != tc.rule {
				t.Errorf("%v %s, want %v %s: %s", d.Verdict, d.Rule, tc.want, tc.rule, d.Reason)
			}
		})
	}
}

// TestLazyLesson: the lesson of a large denied Write names the phases
// where it would be allowed as the whole reading would: implementing's
// max_edit_lines (20) rules it out at 21 lines, not at 20.
func TestLazyLesson(t *testing.T) {
	law := loadLaw(t, "workflows/dev.yaml", corpusOptions)
	run := &RunState{Active: true, State: "planning"}
	def := lazyMin
	defer func() { lazyMin = def }()
	for _, lines := range []int{20, 21} {
		content, _ := json.Marshal(strings.Repeat("x\n", lines-1) + strings.Repeat("y", 2000))
		for _, in := range []string{`{"file_path":"src/a.go","content":` + string(content) + `}`, `{"content":` + string(content) + `,"file_path":"src/a.go"}`} {
			decide := func(min int) Decision {
				lazyMin = min
				return law.Decide(run, &ToolCall{Tool: "Write", Cwd: "/repo", Input: json.RawMessage(in)})
			}
			lazy, whole := decide(0), decide(1<<30)
			if got := slices.Contains(lazy.NextEvents, "PLAN_READY"); got != (lines <= 20) || !slices.Contains(lazy.NextEvents, "GO_OPS") {
				t.Errorf("%d lines: next events %v", lines, lazy.NextEvents)
			}
			if lazy.Reason != whole.Reason || !slices.Equal(lazy.NextEvents, whole.NextEvents) {
				t.Errorf("%d lines: lazily %q, whole %q", lines, lazy.Reason, whole.Reason)
			}
		}
	}
}
