package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
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

// readAhead sets how long a value the lazy reading passes from the start
// before it turns to the end (0: none, it reads from the end at once; a
// large value: it reads from the start only) until the test ends.
func readAhead(t testing.TB, n int) {
	old := lazyAhead
	lazyAhead = n
	t.Cleanup(func() { lazyAhead = old })
}

// aheads are the lazyAhead values a lazy reading is tested with.
var aheads = []int{0, 1, 128, 1 << 30}

// TestLazyReadingKeepsTheCorpus: the corpus and the golden lessons
// decide alike when every flat edit is read lazily, from the start or
// from the end.
func TestLazyReadingKeepsTheCorpus(t *testing.T) {
	readLazily(t)
	for _, n := range aheads {
		t.Run(fmt.Sprintf("ahead=%d", n), func(t *testing.T) {
			readAhead(t, n)
			TestCorpus(t)
			TestGoldenReasons(t)
			TestRawFieldsAgree(t)
		})
	}
}

// lazyAgrees checks the lazy reading of a flat edit's input against
// encoding/json: the files it finds are the ones decoding finds, or the
// whole reading (what every allow goes through) refuses the input; the
// whole reading accepts only what decodes, with the decoded files; and
// whether the content is over a limit is what the whole count says.
func lazyAgrees(t *testing.T, input []byte) {
	t.Helper()
	readLazily(t)
	backAgrees(t, input)
	for _, n := range aheads {
		readAhead(t, n)
		lazyAgreesAhead(t, input)
	}
}

func lazyAgreesAhead(t *testing.T, input []byte) {
	t.Helper()
	unique := validUniqueObject(input)
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
			over2, overOK2 := p.linesOver(limit) // again, from where the count stopped
			if over2 != over || overOK2 != overOK {
				t.Fatalf("kind %d, %q: linesOver(%d) %v %v, then %v %v", k, input, limit, over, overOK, over2, overOK2)
			}
			if unique && want != nil {
				// Valid JSON, no flat key twice: the lazy reading finds
				// exactly what decoding finds, from either end.
				if terr != nil || !slices.Equal(targets, want.targets()) {
					t.Fatalf("kind %d, ahead %d, %q: lazy %q (%v), decoded %q", k, lazyAhead, input, targets, terr, want.targets())
				}
				if overOK && over != (want.lines > limit) {
					t.Fatalf("kind %d, ahead %d, %q: lazy says over %d is %v, decoded has %d lines", k, lazyAhead, input, limit, over, want.lines)
				}
			}
			ei, err := p.editInfo()
			if err == nil {
				if want == nil {
					t.Fatalf("kind %d: the whole reading accepts %q, which does not decode to an edit", k, input)
				}
				if !slices.Equal(ei.targets(), want.targets()) {
					t.Fatalf("kind %d, %q: whole reading %q, decoded %q", k, input, ei.targets(), want.targets())
				}
				if terr != nil || !slices.Equal(targets, want.targets()) {
					t.Fatalf("kind %d, %q: lazy %q (%v), decoded %q", k, input, targets, terr, want.targets())
				}
				lines, _, _ := p.editLines(ei.targets())
				if overOK && over != (lines > limit) {
					t.Fatalf("kind %d, %q: lazy says over %d is %v, the count is %d", k, input, limit, over, lines)
				}
				continue
			}
			if want != nil && terr == nil && !slices.Equal(targets, want.targets()) && err == nil {
				t.Fatalf("kind %d, %q: lazy %q, decoded %q, and the whole reading did not refuse", k, input, targets, want.targets())
			}
		}
	}
}

// validUniqueObject reports whether input is a valid JSON object that
// names no flat key twice (as the decoder reads the keys).
func validUniqueObject(input []byte) bool {
	var top map[string]json.RawMessage
	if !json.Valid(input) || json.Unmarshal(input, &top) != nil || top == nil {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(input))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		key := tok.(string)
		if flatKeyIndex(key) >= 0 && seen[key] {
			return false
		}
		seen[key] = true
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return false
		}
	}
	return true
}

// backAgrees reads input's members from the end to its start, and from
// the start to its end, and checks them against encoding/json: for a
// valid JSON object the reading from the end never gets stuck and finds
// every flat key decoding finds, with the value decoding keeps (the last
// of a key given twice); the reading from the start finds the first.
// Whatever the input, neither panics.
func backAgrees(t *testing.T, input []byte) {
	t.Helper()
	f := lazyFlat{s: string(input)}
	for f.stepBack() {
	}
	for f.advance(-1) {
	}
	var m map[string]json.RawMessage
	if !json.Valid(input) || json.Unmarshal(input, &m) != nil || m == nil {
		return
	}
	if f.bst != lbDone || f.st != lzDone && f.st != lzUnsure {
		t.Fatalf("%q: a valid object read from the end ends %d, from the start %d", input, f.bst, f.st)
	}
	firsts := map[string]json.RawMessage{}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.Token()
	for dec.More() {
		tok, _ := dec.Token()
		var v json.RawMessage
		dec.Decode(&v)
		if _, ok := firsts[tok.(string)]; !ok {
			firsts[tok.(string)] = v
		}
	}
	same := func(raw json.RawMessage, sp lazySpan) bool {
		var a, b any
		return json.Unmarshal(raw, &a) == nil && json.Unmarshal([]byte(f.s[sp.start:sp.end]), &b) == nil && reflect.DeepEqual(a, b)
	}
	for idx, key := range flatKeys {
		v, ok := m[key]
		if sp := f.back[idx]; ok != (sp.end != 0) || ok && !same(v, sp) {
			t.Fatalf("%q: %s read from the end %v (%q), decoded %v (%s)", input, key, sp.end != 0, f.s[sp.start:max(sp.end, sp.start)], ok, v)
		}
		if f.st != lzDone {
			continue // a flat key given twice: the reading from the start is unsure
		}
		if sp := f.spans[idx]; ok != (sp.end != 0) || ok && !same(firsts[key], sp) {
			t.Fatalf("%q: %s read from the start %v (%q), decoded first %v (%s)", input, key, sp.end != 0, f.s[sp.start:max(sp.end, sp.start)], ok, firsts[key])
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
		// Read from the end: quotes, backslashes and brackets in strings,
		// nesting, literals, escaped keys, keys given twice, whitespace.
		`{"content":"` + big + `","file_path":"/a","file_path":"/b"}`,
		`{"content":"` + big + `","file\u005fpath":"/a"}`,
		`{"content":"` + big + `","file_path":"/a","x":{"file_path":"/y","a":[1,"]}\"{[",{"b":"\\"}],"c":null}}`,
		`{"content":"` + big + `","file_path":"/a\\","n":-1.5e3,"t":true,"f":false,"z":null}`,
		`{"content":"` + big + `","file_path":"/a\"b"}`,
		` { "content" : "` + big + `" , "file_path" : "/a" } ` + "\n\t",
		`{"content":"` + big + `","path":"/p","filePath":"/q"}`,
		`{"content":"` + big + `","file_path":1,"path":"/p"}`,
		`{"content":"` + big + `","file_path":"/\u002e\u002e/etc"}`,
		`{"content":"` + big + `","file_path":"\ud800/a` + "\xff\xfe" + `"}`, `{"content":"` + big + `","file_pathÿ":"/a","file_path":"/b"}`,
		`{"content":"` + big + `","file_path":"/a"` + "\n", `{"content":"` + big + `","file_path":"/a"}}`,
		`{"content":"` + big + `","file_path":"/a\"}`, `{"content":"` + big + `",:"/a"}`, `{"content":"` + big + `","file_path""/a"}`,
		`{"content":"` + big + `" "file_path":"/a"}`, `"file_path":"/a"}`, `{"file_path":"/a"}` + `{"file_path":"/b"}`,
		`{"a":"\\","file_path":"/a"}`, `{"a":"\\\"","file_path":"/a"}`, `{"file_path":"/a",}`, `{,"file_path":"/a"}`,
		`{"notebook_path":"/n","x":"` + big + `","new_source":"a\nb\nc"}`,
		`{"file_path":"/a","content":"` + big + `","old_string":"a","new_string":"b\nc"}`,
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

// FuzzLazyMembers builds valid JSON objects from fuzzed members (flat keys,
// spelled plainly or escaped, given once or twice; string values with any
// bytes, or any valid JSON value) in fuzzed order, so that the readings
// from either end meet quotes, backslashes and brackets inside values:
// lazyAgrees holds for each.
func FuzzLazyMembers(f *testing.F) {
	f.Add(uint64(0x0700), "/a", `x \" "q" \\ \n`, `{"file_path":"/y","a":["]}"]}`)
	f.Add(uint64(0x070000), "/a\\", "line\n\"quoted\"\n", `"/b"`)
	f.Add(uint64(0x02000700), "/p", strings.Repeat(`\"x\\`, 40), `[1,{"k":"\\\""}]`)
	keys := append(slices.Clone(flatKeys), "x", `file\u005fpath`, `\u0070ath`, "file_path ")
	f.Fuzz(func(t *testing.T, shape uint64, a, b, c string) {
		vals := []string{a, b, c}
		var sb strings.Builder
		sb.WriteByte('{')
		for i := range 4 {
			k := int(shape>>(8*i)) & 0xff
			if k >= len(keys) {
				continue
			}
			if sb.Len() > 1 {
				sb.WriteByte(',')
			}
			sb.WriteString(`"` + keys[k] + `":`)
			v := vals[(int(shape>>(32+4*i))&0xf)%3]
			if shape>>(48+i)&1 == 1 && json.Valid([]byte(v)) {
				sb.WriteString(v)
			} else {
				m, _ := json.Marshal(v)
				sb.Write(m)
			}
		}
		sb.WriteByte('}')
		if !json.Valid([]byte(sb.String())) {
			t.Fatalf("built %q, which is not JSON", sb.String())
		}
		lazyAgrees(t, []byte(sb.String()))
	})
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
