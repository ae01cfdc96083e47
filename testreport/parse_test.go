package testreport

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The reports in testdata were written by the real runners over the
// projects in testdata/src (testdata/gen.sh writes them again).
func TestParseRealReports(t *testing.T) {
	for _, tc := range []struct {
		file string
		f    Format
		want Counts
	}{
		// a: TestPass, TestSub + 2 subtests, TestSkip.
		{"go-pass.json", FormatGoJSON, Counts{Run: 4, Passed: 4, Skipped: 1}},
		// a as above; b: TestFail (prints forged "--- PASS: TestForged"), TestOK.
		{"go-fail.json", FormatGoJSON, Counts{Run: 6, Passed: 5, Failed: 1, Skipped: 1}},
		// go test -run NoSuchTest ./...: exit 0, no test ran.
		{"go-zero.json", FormatGoJSON, Counts{}},
		{"go-buildfail.json", FormatGoJSON, Counts{Errors: 1}},
		// pytest: a pass, a fail (printing "1 passed in 0.01s"), a skip.
		{"pytest-mixed.xml", FormatJUnit, Counts{Run: 2, Passed: 1, Failed: 1, Skipped: 1}},
		{"pytest-zero.xml", FormatJUnit, Counts{}},
		{"pytest-collect-error.xml", FormatJUnit, Counts{Run: 1, Failed: 1}},
		// node --test: passes, fails, skipped, todo, group > inner.
		{"node-junit.xml", FormatJUnit, Counts{Run: 3, Passed: 2, Failed: 1, Skipped: 2}},
		{"cargo-fail.json", FormatLibtestJSON, Counts{Run: 2, Passed: 1, Failed: 1, Skipped: 1}},
		{"cargo-filtered.json", FormatLibtestJSON, Counts{Run: 1, Passed: 1, FilteredOut: 2}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := Parse(tc.f, b)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got != tc.want {
				t.Errorf("Parse = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestParseSmall(t *testing.T) {
	for _, tc := range []struct {
		name    string
		f       Format
		in      string
		want    Counts
		wantErr bool
	}{
		{"go empty", FormatGoJSON, "", Counts{}, true},
		{"go text only", FormatGoJSON, "ok  \tx\t0.1s\n--- PASS: TestX (0.00s)\n", Counts{}, true},
		{"go banner then events", FormatGoJSON, "> pkg@1 test\n" + `{"Action":"pass","Package":"p","Test":"TestA"}` + "\n", Counts{Run: 1, Passed: 1}, false},
		{"go package fail after test fail is no error", FormatGoJSON, `{"Action":"fail","Package":"p","Test":"T"}` + "\n" + `{"Action":"fail","Package":"p"}`, Counts{Run: 1, Failed: 1}, false},
		{"go package fail without a test (TestMain, timeout)", FormatGoJSON, `{"Action":"pass","Package":"p","Test":"T"}` + "\n" + `{"Action":"fail","Package":"p"}`, Counts{Run: 1, Passed: 1, Errors: 1}, false},
		{"junit single suite", FormatJUnit, `<testsuite><testcase name="a"/><testcase name="b"><failure/></testcase></testsuite>`, Counts{Run: 2, Passed: 1, Failed: 1}, false},
		{"junit error element", FormatJUnit, `<testsuites><testsuite><testcase name="a"><error message="x"/></testcase></testsuite></testsuites>`, Counts{Run: 1, Failed: 1}, false},
		{"junit nested element inside failure is no verdict", FormatJUnit, `<testsuite><testcase><system-out><skipped/></system-out></testcase></testsuite>`, Counts{Run: 1, Passed: 1}, false},
		{"junit suite-level error", FormatJUnit, `<testsuite><error message="crash"/></testsuite>`, Counts{Errors: 1}, false},
		{"junit wrong root", FormatJUnit, `<html><testcase/></html>`, Counts{}, true},
		{"junit empty", FormatJUnit, ``, Counts{}, true},
		{"junit truncated", FormatJUnit, `<testsuite><testcase name="a">`, Counts{}, true},
		{"jest", FormatJestJSON, `{"numTotalTests":5,"numPassedTests":3,"numFailedTests":1,"numPendingTests":1,"numTodoTests":0,"numRuntimeErrorTestSuites":0,"success":false}`, Counts{Run: 4, Passed: 3, Failed: 1, Skipped: 1}, false},
		{"jest no tests", FormatJestJSON, `{"numTotalTests":0,"numPassedTests":0,"numFailedTests":0,"numPendingTests":0,"success":true}`, Counts{}, false},
		{"jest not a result", FormatJestJSON, `{"success":true}`, Counts{}, true},
		{"jest negative", FormatJestJSON, `{"numTotalTests":1,"numPassedTests":-1}`, Counts{}, true},
		{"libtest crashed binary", FormatLibtestJSON, `{"type":"suite","event":"started","test_count":2}` + "\n" + `{"type":"test","event":"ok","name":"a"}`, Counts{Run: 1, Passed: 1, Errors: 1}, false},
		{"unittest", FormatUnittestJSON, `{"tests_run":5,"failures":1,"errors":1,"skipped":1,"expected_failures":0,"unexpected_successes":0}`, Counts{Run: 4, Passed: 2, Failed: 2, Skipped: 1}, false},
		{"unittest none", FormatUnittestJSON, `{"tests_run":0,"failures":0,"errors":0,"skipped":0}`, Counts{}, false},
		{"unittest not a result", FormatUnittestJSON, `{}`, Counts{}, true},
		{"unknown format", Format("tap"), "ok 1", Counts{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.f, []byte(tc.in))
			if (err != nil) != tc.wantErr {
				t.Fatalf("Parse err = %v, wantErr %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("Parse = %+v, want %+v", got, tc.want)
			}
		})
	}
}

var timing = regexp.MustCompile(`\d+\.\d+s`)

// The renderer gives the agent go test's own text for a -json run.
func TestRenderGoJSON(t *testing.T) {
	for _, tc := range []struct {
		json, text string
		verbose    bool
	}{
		{"go-pass.json", "go-pass.txt", false},
		{"go-pass.json", "go-pass-v.txt", true},
		{"go-fail.json", "go-fail.txt", false},
	} {
		t.Run(tc.text, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join("testdata", tc.json))
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join("testdata", tc.text))
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			w := NewRenderer(FormatGoJSON, &out, tc.verbose)
			// Write in odd chunks: lines split across writes must not matter.
			for len(in) > 0 {
				n := min(7, len(in))
				if _, err := w.Write(in[:n]); err != nil {
					t.Fatal(err)
				}
				in = in[n:]
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			got := timing.ReplaceAllString(out.String(), "T")
			exp := timing.ReplaceAllString(string(want), "T")
			// go test prints a last FAIL of its own after the packages; the
			// JSON stream has no event for it.
			if strings.HasSuffix(exp, "\nFAIL\n") && !strings.HasSuffix(got, "\nFAIL\nFAIL\n") {
				exp = strings.TrimSuffix(exp, "FAIL\n")
			}
			if tc.text == "go-fail.txt" {
				block := "=== RUN   TestForged\n--- PASS: TestForged (T)\n--- FAIL: TestFail (T)\n    b_test.go:10: boom\nFAIL\nFAIL\texample.com/gomod/b\tT\n"
				if !strings.Contains(got, block) {
					t.Errorf("rendered output lacks package b's block as go test prints it:\n%s", got)
				}
			}
			if tc.verbose || tc.text == "go-fail.txt" {
				// test2json reports a subtest's verdict line when the subtest
				// ends, not nested under its parent's: compare the lines.
				got, exp = sortedTrimmedLines(got), sortedTrimmedLines(exp)
			}
			if got != exp {
				t.Errorf("rendered:\n%s\nwant:\n%s", got, exp)
			}
		})
	}
}

func TestRenderLibtest(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("testdata", "cargo-fail.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w := NewRenderer(FormatLibtestJSON, &out, false)
	w.Write(in)
	w.Close()
	for _, s := range []string{"running 3 tests", "test tests::passes ... ok", "test tests::fails ... FAILED",
		"---- tests::fails stdout ----", "printed by fails", "test result: FAILED. 1 passed; 1 failed; 1 ignored"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("rendered output lacks %q:\n%s", s, out.String())
		}
	}
}

func TestEvidence(t *testing.T) {
	plain := Plan{Runner: GoTest, Format: FormatGoJSON}
	narrowed := Plan{Runner: GoTest, Format: FormatGoJSON, Narrowed: true, NarrowedBy: []string{"argv -run X"}}
	for _, tc := range []struct {
		name       string
		p          Plan
		code       int
		c          Counts
		err        error
		passed     bool
		narrowed   bool
		reasonPart string
	}{
		{"real suite", plain, 0, Counts{Run: 5, Passed: 5}, nil, true, false, ""},
		{"zero tests exit 0", plain, 0, Counts{}, nil, false, false, "no test ran"},
		{"only skipped", plain, 0, Counts{Skipped: 3}, nil, false, false, "no test ran"},
		{"narrowed passes but says so", narrowed, 0, Counts{Run: 1, Passed: 1}, nil, true, true, ""},
		{"failure", plain, 1, Counts{Run: 2, Passed: 1, Failed: 1}, nil, false, false, "exit code 1"},
		{"failed test with exit 0", plain, 0, Counts{Run: 2, Passed: 1, Failed: 1}, nil, false, false, "1 tests failed"},
		{"build error", plain, 0, Counts{Run: 2, Passed: 2, Errors: 1}, nil, false, false, "errors outside tests"},
		{"no report", plain, 0, Counts{Run: 9, Passed: 9}, ErrNoReport, false, false, "no structured report"},
		{"listing", Plan{Runner: GoTest, ListOnly: true}, 0, Counts{Run: 1, Passed: 1}, nil, false, false, "lists"},
		{"libtest filtered out", plain, 0, Counts{Run: 1, Passed: 1, FilteredOut: 2}, nil, true, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := tc.p.Evidence(tc.code, tc.c, tc.err)
			if ev.Passed != tc.passed || ev.Narrowed != tc.narrowed || !strings.Contains(ev.Reason, tc.reasonPart) {
				t.Errorf("Evidence = %+v; want passed %v narrowed %v reason containing %q", ev, tc.passed, tc.narrowed, tc.reasonPart)
			}
			if ev.Passed && ev.Reason != "" {
				t.Errorf("a passed run has a reason: %q", ev.Reason)
			}
			if tc.err != nil && ev.Counts != (Counts{}) {
				t.Errorf("counts without a report: %+v", ev.Counts)
			}
		})
	}
	if !errors.Is(ErrNoReport, ErrNoReport) {
		t.Fatal("unreachable")
	}
}

func sortedTrimmedLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n") + "\n"
}
