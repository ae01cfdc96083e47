package testreport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"strings"
)

// Unittest is Python's unittest runner (python -m unittest).
const Unittest Runner = "unittest"

// FormatUnittestJSON is the result of a unittest run as its TestResult
// object counts it, written by the small driver Instrument runs in place of
// `python -m unittest` (unittest has no structured reporter of its own).
const FormatUnittestJSON Format = "unittest-json"

// unittestDriver runs unittest.main exactly as `python -m unittest ARGS`
// does (same argument parsing, discovery, output on stderr) and then writes
// the TestResult's counts to the report path, its first argument. The exit
// status is unittest's own: 1 on failures, 5 when no test ran (Python
// 3.12+), else 0.
const unittestDriver = `import json, sys, unittest
report = sys.argv[1]
sys.argv = [sys.argv[0]] + sys.argv[2:]
sys.path.insert(0, "")
prog = unittest.main(module=None, exit=False)
r = prog.result
with open(report, "w") as f:
    json.dump({"tests_run": r.testsRun, "failures": len(r.failures), "errors": len(r.errors),
               "skipped": len(r.skipped), "expected_failures": len(r.expectedFailures),
               "unexpected_successes": len(r.unexpectedSuccesses)}, f)
if r.testsRun == 0 and not r.skipped and sys.version_info >= (3, 12):
    sys.exit(5)
sys.exit(not r.wasSuccessful())
`

// unittestValueOpts are unittest options that take a value.
var unittestValueOpts = map[string]bool{"-k": true, "-s": true, "--start-directory": true, "-p": true, "--pattern": true, "-t": true, "--top-level-directory": true}

func planUnittest(p *Plan, argv []string) bool {
	p.Runner, p.Format = Unittest, FormatUnittestJSON
	args := argv[3:]
	if len(args) > 0 && args[0] == "discover" {
		args = args[1:]
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			p.narrow("argv names tests %s", a)
			continue
		}
		opt, val, hasVal := strings.Cut(a, "=")
		if !hasVal && unittestValueOpts[opt] && i+1 < len(args) {
			i++
			val = args[i]
		}
		switch opt {
		case "-k":
			p.narrow("argv -k %s", quoteArg(val))
		case "-p", "--pattern":
			if val != "test*.py" {
				p.narrow("argv %s %s", opt, quoteArg(val))
			}
		case "-s", "--start-directory":
			if path.Clean(val) != "." {
				p.narrow("argv %s %s", opt, val)
			}
		case "-v", "--verbose":
			p.Verbose = true
		case "-h", "--help":
			p.ListOnly = true
		}
	}
	p.inst = func(argv []string, reportPath string) (Instrumented, error) {
		out := []string{argv[0], "-c", unittestDriver, reportPath}
		return Instrumented{Argv: append(out, argv[3:]...)}, nil
	}
	return true
}

func parseUnittestJSON(b []byte) (Counts, error) {
	var r struct {
		TestsRun            *int `json:"tests_run"`
		Failures            int  `json:"failures"`
		Errors              int  `json:"errors"`
		Skipped             int  `json:"skipped"`
		ExpectedFailures    int  `json:"expected_failures"`
		UnexpectedSuccesses int  `json:"unexpected_successes"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(b), &r); err != nil {
		return Counts{}, fmt.Errorf("testreport: unittest json: %w", err)
	}
	if r.TestsRun == nil {
		return Counts{}, ErrNoReport
	}
	if *r.TestsRun < 0 || r.Failures < 0 || r.Errors < 0 || r.Skipped < 0 || r.ExpectedFailures < 0 || r.UnexpectedSuccesses < 0 {
		return Counts{}, fmt.Errorf("testreport: unittest json: negative count")
	}
	c := Counts{Skipped: r.Skipped, Failed: r.Failures + r.Errors + r.UnexpectedSuccesses}
	c.Passed = max(*r.TestsRun-r.Skipped-c.Failed, 0)
	c.Run = c.Passed + c.Failed
	return c, nil
}
