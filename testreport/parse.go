package testreport

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Counts are what a structured report says about a run.
type Counts struct {
	// Run is the number of tests that ran to a verdict (Passed + Failed).
	Run int `json:"run"`
	// Passed and Failed count the tests by verdict; Skipped the tests that
	// were selected but skipped (t.Skip, pytest.skip, it.skip, #[ignore]).
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
	// Errors counts failures outside any test: a package that did not
	// build, a suite that crashed, a collection error, a test binary that
	// died.
	Errors int `json:"errors"`
	// FilteredOut is the number of tests the runner says a filter left out
	// (libtest reports it; other formats do not, and leave it 0).
	FilteredOut int `json:"filtered_out,omitempty"`
}

// MaxReportSize bounds the report Parse reads.
const MaxReportSize = 64 << 20

// ErrNoReport reports a report that holds no result at all (an empty file,
// a stream without a single event).
var ErrNoReport = errors.New("testreport: the report holds no result")

// Parse reads a structured report of the given format.
func Parse(f Format, report []byte) (Counts, error) {
	if len(report) > MaxReportSize {
		return Counts{}, fmt.Errorf("testreport: report larger than %d bytes", MaxReportSize)
	}
	switch f {
	case FormatGoJSON:
		return parseGoJSON(report)
	case FormatJUnit:
		return parseJUnit(report)
	case FormatJestJSON:
		return parseJestJSON(report)
	case FormatLibtestJSON:
		return parseLibtestJSON(report)
	case FormatUnittestJSON:
		return parseUnittestJSON(report)
	}
	return Counts{}, fmt.Errorf("testreport: unknown report format %q", f)
}

// goEvent is one test2json event.
type goEvent struct {
	Action  string  `json:"Action"`
	Package string  `json:"Package"`
	Test    string  `json:"Test"`
	Output  string  `json:"Output"`
	Elapsed float64 `json:"Elapsed"`
}

// jsonLines calls fn for every line of b that decodes as a JSON object
// into a fresh T; other lines (a package manager's banner, build output in
// plain text) are skipped. It returns how many lines decoded.
func jsonLines[T any](b []byte, fn func(*T)) int {
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), MaxReportSize)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var v T
		if json.Unmarshal(line, &v) != nil {
			continue
		}
		n++
		fn(&v)
	}
	return n
}

func parseGoJSON(b []byte) (Counts, error) {
	var c Counts
	failedTests := map[string]int{} // package -> failed tests
	var pkgFails []string
	n := jsonLines(b, func(e *goEvent) {
		switch {
		case e.Test != "" && e.Action == "pass":
			c.Passed++
		case e.Test != "" && e.Action == "fail":
			c.Failed++
			failedTests[e.Package]++
		case e.Test != "" && e.Action == "skip":
			c.Skipped++
		case e.Test == "" && e.Action == "fail" && e.Package != "":
			// A build failure shows here too (FailedBuild), besides its
			// build-fail event: counted once, here.
			pkgFails = append(pkgFails, e.Package)
		}
	})
	if n == 0 {
		return Counts{}, ErrNoReport
	}
	for _, pkg := range pkgFails {
		if failedTests[pkg] == 0 {
			c.Errors++ // a package that failed outside its tests (build, TestMain, timeout, panic)
		}
	}
	c.Run = c.Passed + c.Failed
	return c, nil
}

func parseJUnit(b []byte) (Counts, error) {
	var c Counts
	d := xml.NewDecoder(bytes.NewReader(b))
	d.Strict = false
	depth, root := 0, ""
	inCase, caseDepth := false, 0
	verdict := ""
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Counts{}, fmt.Errorf("testreport: junit: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			name := t.Name.Local
			if root == "" {
				root = name
				if name != "testsuites" && name != "testsuite" {
					return Counts{}, fmt.Errorf("testreport: junit: root element is <%s>, want <testsuites> or <testsuite>", name)
				}
			}
			switch {
			case name == "testcase" && !inCase:
				inCase, caseDepth, verdict = true, depth, "pass"
			case inCase && depth == caseDepth+1:
				switch name {
				case "failure", "error":
					verdict = "fail"
				case "skipped":
					if verdict != "fail" {
						verdict = "skip"
					}
				}
			case !inCase && name == "error":
				c.Errors++ // an error reported by a suite outside its cases
			}
		case xml.EndElement:
			if inCase && depth == caseDepth {
				inCase = false
				switch verdict {
				case "pass":
					c.Passed++
				case "fail":
					c.Failed++
				case "skip":
					c.Skipped++
				}
			}
			depth--
		}
	}
	if root == "" {
		return Counts{}, ErrNoReport
	}
	c.Run = c.Passed + c.Failed
	return c, nil
}

func parseJestJSON(b []byte) (Counts, error) {
	var r struct {
		NumTotalTests             *int `json:"numTotalTests"`
		NumPassedTests            int  `json:"numPassedTests"`
		NumFailedTests            int  `json:"numFailedTests"`
		NumPendingTests           int  `json:"numPendingTests"`
		NumTodoTests              int  `json:"numTodoTests"`
		NumRuntimeErrorTestSuites int  `json:"numRuntimeErrorTestSuites"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(b), &r); err != nil {
		return Counts{}, fmt.Errorf("testreport: jest json: %w", err)
	}
	if r.NumTotalTests == nil {
		return Counts{}, ErrNoReport
	}
	c := Counts{Passed: r.NumPassedTests, Failed: r.NumFailedTests, Skipped: r.NumPendingTests + r.NumTodoTests,
		Errors: r.NumRuntimeErrorTestSuites}
	if c.Passed < 0 || c.Failed < 0 || c.Skipped < 0 || c.Errors < 0 {
		return Counts{}, fmt.Errorf("testreport: jest json: negative count")
	}
	c.Run = c.Passed + c.Failed
	return c, nil
}

// libtestEvent is one event of libtest's JSON format.
type libtestEvent struct {
	Type        string `json:"type"`
	Event       string `json:"event"`
	Name        string `json:"name"`
	Stdout      string `json:"stdout"`
	TestCount   int    `json:"test_count"`
	Passed      int    `json:"passed"`
	Failed      int    `json:"failed"`
	Ignored     int    `json:"ignored"`
	FilteredOut int    `json:"filtered_out"`
	ExecTime    any    `json:"exec_time"`
}

func parseLibtestJSON(b []byte) (Counts, error) {
	var c Counts
	open := 0
	n := jsonLines(b, func(e *libtestEvent) {
		switch {
		case e.Type == "suite" && e.Event == "started":
			open++
		case e.Type == "suite" && (e.Event == "ok" || e.Event == "failed"):
			open--
			c.FilteredOut += max(e.FilteredOut, 0)
		case e.Type == "test" && e.Event == "ok":
			c.Passed++
		case e.Type == "test" && (e.Event == "failed" || e.Event == "timeout"):
			c.Failed++
		case e.Type == "test" && e.Event == "ignored":
			c.Skipped++
		}
	})
	if n == 0 {
		return Counts{}, ErrNoReport
	}
	if open > 0 {
		c.Errors += open // a test binary that started and never finished
	}
	c.Run = c.Passed + c.Failed
	return c, nil
}

// Evidence is what a finished test command proves.
type Evidence struct {
	// Runner is the test runner.
	Runner Runner `json:"runner"`
	// Report is the structured report's format ("" when there was none).
	Report Format `json:"report,omitempty"`
	// ExitCode is the command's exit status.
	ExitCode int `json:"exit_code"`
	// Counts are the report's counts (zero without a report).
	Counts Counts `json:"counts"`
	// Narrowed and NarrowedBy: the plan's narrowing, plus tests the
	// report says a filter left out.
	Narrowed   bool     `json:"narrowed"`
	NarrowedBy []string `json:"narrowed_by,omitempty"`
	// Passed is true when the report shows at least one test ran, none
	// failed, nothing errored, and the command exited 0.
	Passed bool `json:"passed"`
	// Reason explains Passed == false ("" when it is true).
	Reason string `json:"reason,omitempty"`
	// Channel says how the report reached statewright, and so what could
	// have forged it ("" when the caller did not say).
	Channel Channel `json:"channel,omitempty"`
}

// Channel is how a structured report reached statewright.
type Channel string

// The channels, from the hardest to forge for code the tests run.
const (
	// ChannelStream: the runner's own stdout (go test -json, libtest's
	// JSON), read by the sandbox launcher outside the OS sandbox. Printing
	// fake results or writing a fake report changes nothing: output of
	// the tests' code reaches the stream as output of its own test
	// binary, and the launcher's record is out of the sandbox's reach.
	// Code in a test binary decides that binary's verdict (as editing its
	// tests could), and a test that attaches a debugger to its runner
	// (ptrace, /proc/PID/mem: the same user inside the sandbox) could
	// rewrite the rest: docs/threat-model.md.
	ChannelStream Channel = "stream"
	// ChannelFile: a report file the runner's process wrote inside the
	// OS sandbox (JUnit XML, jest's JSON). That process runs the tests'
	// code, so a test file or a plugin (conftest.py) could have written
	// the report.
	ChannelFile Channel = "file"
	// ChannelUnsandboxed: no OS sandbox ran the command (`statewright
	// testrun`): the tests' code runs as the user and could forge any
	// record, statewright's own included (DECISIONS 9).
	ChannelUnsandboxed Channel = "unsandboxed"
)

// OnStdout reports whether the runner writes a report of format f to its
// stdout rather than to a file.
func (f Format) OnStdout() bool { return f == FormatGoJSON || f == FormatLibtestJSON }

// Evidence combines the plan with the finished command: its exit code and
// the parsed report (parseErr is Parse's error, or the reason no report
// was read). A run without a readable report, a run of zero tests, a
// listing, and a run with failures or errors never pass.
func (p Plan) Evidence(exitCode int, c Counts, parseErr error) Evidence {
	ev := Evidence{Runner: p.Runner, Report: p.Format, ExitCode: exitCode, Counts: c,
		Narrowed: p.Narrowed, NarrowedBy: append([]string(nil), p.NarrowedBy...)}
	if parseErr != nil {
		ev.Counts, ev.Report = Counts{}, ""
	}
	if parseErr == nil && c.FilteredOut > 0 {
		ev.Narrowed = true
		ev.NarrowedBy = append(ev.NarrowedBy, fmt.Sprintf("the report: %d tests filtered out", c.FilteredOut))
	}
	switch {
	case parseErr != nil:
		ev.Reason = "no structured report: " + strings.TrimPrefix(parseErr.Error(), "testreport: ")
	case p.ListOnly:
		ev.Reason = "the command only lists or compiles tests"
	case exitCode != 0:
		ev.Reason = fmt.Sprintf("exit code %d", exitCode)
	case c.Failed > 0:
		ev.Reason = fmt.Sprintf("%d tests failed", c.Failed)
	case c.Errors > 0:
		ev.Reason = fmt.Sprintf("%d errors outside tests", c.Errors)
	case c.Run == 0:
		ev.Reason = "no test ran"
	default:
		ev.Passed = true
	}
	return ev
}
