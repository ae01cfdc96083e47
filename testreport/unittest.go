package testreport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"

	"github.com/statewright-go/statewright/shell"
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

// unittestGrammar is python -m unittest's options (its main and discover
// parsers together). unittest's argparse accepts unique prefixes of long
// options (--pat for --pattern) and clustered short ones (-vk x).
var unittestGrammar = shell.G("python -m unittest", shell.StyleArgparse, "h help", "v verbose", "q quiet",
	"locals", "durations=", "f failfast", "c catch", "b buffer", "k= :f", "s start-directory= :f",
	"p pattern= :f", "t top-level-directory=")

func planUnittest(p *Plan, argv []string) bool {
	p.Runner, p.Format = Unittest, FormatUnittestJSON
	args := argv[3:]
	discover := len(args) > 0 && args[0] == "discover"
	if discover {
		args = args[1:]
	}
	pa := unittestGrammar.Parse(literalWords(args))
	for _, o := range pa.Options {
		if !o.Known {
			p.unknownOption("argv", o)
			continue
		}
		val := o.Value.Value
		switch o.Name {
		case "k":
			p.narrow("argv -k %s", quoteArg(val))
		case "p":
			if val != "test*.py" {
				p.narrow("argv %s %s", spelled(o), quoteArg(val))
			}
		case "s":
			if path.Clean(val) != "." {
				p.narrow("argv %s %s", spelled(o), val)
			}
		case "v":
			p.Verbose = true
		case "h":
			p.ListOnly = true
		}
	}
	pos := operands(pa)
	if discover {
		// discover's positional arguments are the start directory, the
		// pattern and the top-level directory
		if len(pos) > 0 && path.Clean(pos[0]) != "." {
			p.narrow("argv discover start directory %s", pos[0])
		}
		if len(pos) > 1 && pos[1] != "test*.py" {
			p.narrow("argv discover pattern %s", quoteArg(pos[1]))
		}
	} else {
		for _, a := range pos {
			p.narrow("argv names tests %s", a)
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
