package policy

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// linesOverByStep is lazyFlat.linesOver one quote or escape at a time
// (lineStep only): the reading linesOver's words must agree with.
func linesOverByStep(f *lazyFlat, idx, limit int) (over, ok bool) {
	start := int(f.span(idx).start)
	c := &f.lnState
	if f.ln != start+1 {
		f.ln, *c = start+1, lineCount{j: start + 1, lastNL: -1}
	}
	for !c.done && c.nl <= limit {
		if !f.lineStep(f.s) {
			f.ln = 0
			return false, false
		}
	}
	if !c.done {
		return true, true
	}
	lines := 0
	if c.lastQ > start+1 {
		lines = c.nl + 1
		if c.lastNL == c.lastQ {
			lines = c.nl
		}
	}
	return lines > limit, true
}

// linesAgree asks linesOver and linesOverByStep, each on its own reading
// of s (a string value from s[0], as the content of a Write), whether the
// value is over each limit in turn (a reading goes on from where the
// previous limit stopped it), and fails where they differ. When s starts
// with a valid JSON string, both must also say what countLines of the
// decoded string says.
func linesAgree(t *testing.T, s string, limits ...int) {
	t.Helper()
	linesAgreeSets(t, s, [][]int{limits})
}

// linesAgreeSets is linesAgree of each list of limits in sets, with s
// decoded once.
func linesAgreeSets(t *testing.T, s string, sets [][]int) {
	t.Helper()
	var decoded string
	valid := false
	if end, ok := skipStr(s, 0); ok && s[0] == '"' {
		valid = json.Unmarshal([]byte(s[:end]), &decoded) == nil
	}
	for _, limits := range sets {
		linesAgreeDecoded(t, s, valid, decoded, limits)
	}
}

func linesAgreeDecoded(t *testing.T, s string, valid bool, decoded string, limits []int) {
	t.Helper()
	idx := flatKeyIndex("content")
	fast, slow := lazyFlat{s: s}, lazyFlat{s: s}
	fast.spans[idx] = lazySpan{start: 0, end: -1}
	slow.spans[idx] = lazySpan{start: 0, end: -1}
	for _, limit := range limits {
		over, ok := fast.linesOver(idx, limit)
		wover, wok := linesOverByStep(&slow, idx, limit)
		if over != wover || ok != wok {
			t.Fatalf("%q, limit %d (of %v): by words %v %v, by steps %v %v", s, limit, limits, over, ok, wover, wok)
		}
		if valid && (!ok || over != (countLines(decoded) > limit)) {
			t.Fatalf("%q, limit %d (of %v): linesOver %v %v, the decoded string has %d lines", s, limit, limits, over, ok, countLines(decoded))
		}
	}
}

// TestLinesOverAgrees: counting a string's newlines eight bytes at a
// time gives what counting one escape at a time gives, and what the
// decoded string has, for escaped content: \n, \u000a and \u000A, \\n
// (a backslash, then n), \\\n, escaped quotes, surrogate pairs, other
// \u escapes (whose digits may hold what looks like a quote, backslash
// or n when the input is not JSON), a backslash as a word's last byte,
// the closing quote at every offset, and strings that never end.
func TestLinesOverAgrees(t *testing.T) {
	pieces := []string{`a`, `bcdefgh`, `\n`, `\\n`, `\\\n`, `\\\\`, `\"`, `\\\"`, `\u000a`, `\u000A`, `\u000b`, `\u00e9`,
		`\ud83d\ude00`, `\t`, `\/`, `\r\n`, `n`, `u`, `\\u000a`, `\u"n\"`, `\u\\nx`, `\x`, "\xff", `\`, `"`, ` `}
	var limitSets = [][]int{{0}, {1}, {2}, {5}, {20}, {-1, 0, 1, 2, 3, 100}, {3, 1, 7}, {100}}
	// Every sequence of up to three pieces, padded to every offset of a
	// word, closed or not.
	for _, a := range pieces {
		for _, b := range pieces {
			for _, c := range pieces {
				for pad := range 9 {
					body := strings.Repeat("p", pad) + a + b + c
					for _, tail := range []string{`"`, `","x":"\n\n"}`, ``, `\`, `\u00`} {
						linesAgreeSets(t, `"`+body+tail, limitSets)
					}
				}
			}
		}
	}
	// Code as a Write carries it: many escapes a line, lines of every
	// length, the limit met at every line.
	for _, line := range []string{"\tfmt.Println(\"line\", i) // a comment\n", "x\n", "\"\\n\"\n", "s := `\\\\`\r\n", "é\u2028\n", "\n\n"} {
		for n := range 30 {
			m, _ := json.Marshal(strings.Repeat(line, n))
			for limit := -1; limit < 2*n+2; limit++ {
				linesAgree(t, string(m)+`}`, limit)
				linesAgree(t, string(m)+`}`, limit/2, limit)
			}
		}
	}
}

// FuzzLinesOver is TestLinesOverAgrees of fuzzed strings, given raw (any
// bytes, as an input that is not JSON may hold) and as JSON encodes them.
func FuzzLinesOver(f *testing.F) {
	f.Add(`\tfmt.Println(\"line\", i)\n`, 3, 5)
	f.Add(`a\\nb\u000Ac\ud83d\ude00\n"`, 1, 0)
	f.Add("x\ny\n", 0, 2)
	f.Fuzz(func(t *testing.T, body string, l1, l2 int) {
		l1, l2 = max(-1, min(l1, 1000)), max(-1, min(l2, 1000))
		linesAgree(t, `"`+body, l1, l2)
		m, _ := json.Marshal(body)
		linesAgree(t, string(m)+`,"x":"\n"}`, l1, l2)
	})
}

// escapedWrite is a Write (or NotebookEdit) of n lines, each written with
// the escape esc for its newline and the escaped text mid in it, padded
// past lazyMin when big, naming its file before or after the content.
func escapedWrite(tool, mid, esc string, n int, big, pathFirst bool) *ToolCall {
	body := strings.Repeat(`\tx := f(`+mid+`)`+esc, n)
	if big {
		body += strings.Repeat(" ", 2*lazyMin)
	}
	key, file := "content", "src/a.go"
	if tool == "NotebookEdit" {
		key, file = "new_source", "src/n.ipynb"
	}
	pathKey := map[string]string{"Write": "file_path", "NotebookEdit": "notebook_path"}[tool]
	in := `{"` + pathKey + `":"` + file + `","` + key + `":"` + body + `"}`
	if !pathFirst {
		in = `{"` + key + `":"` + body + `","` + pathKey + `":"` + file + `"}`
	}
	return &ToolCall{Tool: tool, Cwd: "/repo", ProjectDir: "/repo", Input: json.RawMessage(in)}
}

// TestEscapedContentDecisions: a Write or NotebookEdit of content with
// JSON escapes (\n and \u000a newlines, \\n, escaped quotes, surrogate
// pairs) at and around a phase's max_edit_lines is decided exactly alike
// when its input is read lazily (the lines counted through the escapes,
// eight bytes at a time) and when it is read whole (encoding/json), in
// every phase of the test workflow and simEdges, lesson text included,
// and alike with the simulations' shortcuts on and off. Content whose
// escapes are not JSON is never allowed, read either way.
func TestEscapedContentDecisions(t *testing.T) {
	laws := simLaws(t)
	newlines := []string{`\n`, `\u000a`, `\u000A`, `\r\n`, `\\\n`}
	mids := []string{`\"q\"`, `\"\\n\"`, `\ud83d\ude00`, `\u2028\/`, `\\\\`, `\\u000a`, ``}
	bad := []string{`\x`, `\u12`, `\ud83d\uzzzz`, "\\\x00", `\`}
	for _, name := range []string{"dev.yaml", "simedges"} {
		law := laws[name]
		var runs []*RunState
		for _, st := range law.States() {
			runs = append(runs, &RunState{Active: true, State: st})
		}
		for _, tool := range []string{"Write", "NotebookEdit"} {
			for _, n := range []int{0, 1, 19, 20, 21, 22, 24, 25} {
				for _, big := range []bool{false, true} {
					for _, first := range []bool{true, false} {
						for _, nlEsc := range newlines {
							for _, mid := range mids {
								call := escapedWrite(tool, mid, nlEsc, n, big, first)
								if !json.Valid(call.Input) {
									t.Fatalf("built %s, which is not JSON", call.Input)
								}
								decideBoth(t, name, law, call)
								for _, run := range runs {
									lazy := law.Decide(run, call)
									lazyMin = 1 << 30
									whole := law.Decide(run, call)
									lazyMin = 1024
									if !reflect.DeepEqual(lazy, whole) {
										t.Fatalf("%s %s, %s: read lazily and read whole differ:\nlazy  %+v\nwhole %+v", name, run.State, call.Input[:min(200, len(call.Input))], lazy, whole)
									}
								}
							}
						}
						for _, b := range bad {
							call := escapedWrite(tool, b, `\n`, max(n, 1), big, first)
							for _, run := range runs {
								for _, m := range []int{1024, 0, 1 << 30} {
									lazyMin = m
									d := law.Decide(run, call)
									lazyMin = 1024
									if d.Verdict == Allow {
										t.Fatalf("%s %s: allowed %s (lazyMin %d), which is not JSON", name, run.State, call.Input[:min(200, len(call.Input))], m)
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

// FuzzEscapedContentDecisions is TestEscapedContentDecisions of fuzzed
// text in each line, written as it comes (any escapes, valid or not) or
// as JSON encodes it, and a fuzzed number of lines.
func FuzzEscapedContentDecisions(f *testing.F) {
	f.Add(`\"q\"`, 21, true, true, false)
	f.Add(`\\n\u000a\ud83d\ude00`, 19, false, true, true)
	f.Add("é\u2028\"", 20, true, false, false)
	law := simLaws(f)["dev.yaml"]
	var runs []*RunState
	for _, st := range law.States() {
		runs = append(runs, &RunState{Active: true, State: st})
	}
	f.Fuzz(func(t *testing.T, mid string, n int, big, first, raw bool) {
		n = max(0, min(n, 60))
		if !raw {
			m, _ := json.Marshal(mid)
			mid = string(m[1 : len(m)-1])
		}
		for _, tool := range []string{"Write", "NotebookEdit"} {
			call := escapedWrite(tool, mid, `\n`, n, big, first)
			valid := json.Valid(call.Input)
			if valid {
				decideBoth(t, "dev.yaml", law, call)
			}
			for _, run := range runs {
				lazy := law.Decide(run, call)
				lazyMin = 1 << 30
				whole := law.Decide(run, call)
				lazyMin = 1024
				if valid && !reflect.DeepEqual(lazy, whole) {
					t.Fatalf("%s, %s: read lazily and read whole differ:\nlazy  %+v\nwhole %+v", run.State, call.Input[:min(200, len(call.Input))], lazy, whole)
				}
				if !valid && (lazy.Verdict == Allow || whole.Verdict == Allow) {
					t.Fatalf("%s: allowed %s, which is not JSON (lazily %v, whole %v)", run.State, call.Input[:min(200, len(call.Input))], lazy.Verdict, whole.Verdict)
				}
			}
		}
	})
}

// BenchmarkLinesOver is linesOver alone on the content of
// BenchmarkDecideDeniedWriteSize's Write of Go-like code (escaped quotes,
// tabs and newlines) and of plain lines, up to the 21st newline
// (max_edit_lines 20), from a fresh reading each time.
func BenchmarkLinesOver(b *testing.B) {
	for _, c := range []struct{ name, line string }{
		{"code", "\tfmt.Println(\"line\", i) // a comment\n"},
		{"plain", "some line of code\n"},
	} {
		m, _ := json.Marshal(strings.Repeat(c.line, 64<<10/len(c.line)))
		s := string(m) + `}`
		idx := flatKeyIndex("content")
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				f := lazyFlat{s: s}
				f.spans[idx] = lazySpan{start: 0, end: -1}
				if over, ok := f.linesOver(idx, 20); !over || !ok {
					b.Fatal(over, ok)
				}
			}
		})
	}
}

// TestLinesOverBlocks is TestLinesOverAgrees of strings long enough for
// plainBlocks' 64-byte steps: random sequences of the same pieces, each
// at every offset of a block, with and without the steps (blockScan).
func TestLinesOverBlocks(t *testing.T) {
	pieces := []string{`a`, `bcdefgh`, `\n`, `\\n`, `\\\n`, `\\\\`, `\"`, `\\\"`, `\u000a`, `\u000A`, `\u000b`, `\u00e9`,
		`\ud83d\ude00`, `\t`, `\/`, `\r\n`, `n`, `u`, `\\u000a`, `\u"n\"`, `\u\\nx`, `\x`, "\xff", `\`, `"`, ` `,
		`\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\`, `\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\`, strings.Repeat("x", 60)}
	limitSets := [][]int{{0}, {1}, {3}, {20}, {-1, 0, 1, 2, 3, 100}, {5, 2, 9}, {1000}}
	rng := rand.New(rand.NewPCG(16, 4))
	defer func(old bool) { blockScan = old }(blockScan)
	for range 3000 {
		var b strings.Builder
		for n := 1 + rng.IntN(40); n > 0; n-- {
			p := pieces[rng.IntN(len(pieces))]
			if rng.IntN(3) > 0 && (p == `"` || p == `\u"n\"`) {
				p = `\n` // (fewer strings that end early)
			}
			b.WriteString(p)
		}
		body := b.String()
		for _, pad := range []int{0, 1, 7, 8, 31, 62, 63, 64, 65} {
			for _, tail := range []string{`"`, `","x":"\n\n"}`, ``, `\`} {
				s := `"` + strings.Repeat("p", pad) + body + tail
				for _, on := range []bool{true, false} {
					blockScan = on
					linesAgreeSets(t, s, limitSets)
				}
			}
		}
	}
	// The code a Write carries, long.
	for _, line := range []string{"\tfmt.Println(\"line\", i) // a comment\n", "x\n", "\\\\\\\n", "\"\\n\"\n"} {
		for _, n := range []int{10, 50, 200} {
			m, _ := json.Marshal(strings.Repeat(line, n))
			for _, on := range []bool{true, false} {
				blockScan = on
				for limit := -1; limit < 2*n+2; limit += 3 {
					linesAgree(t, string(m)+`}`, limit)
					linesAgree(t, string(m)+`}`, limit/2, limit)
				}
			}
		}
	}
}
