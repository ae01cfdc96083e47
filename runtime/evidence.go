package runtime

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/statewright-go/statewright/engine"
	"github.com/statewright-go/statewright/shell"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/testreport"
)

// evidence is what store.Run.Evidence holds: the runtime.* facts about
// the current state that guards read and the agent cannot write. The
// counters runtime.files_edited and runtime.iterations are derived from the
// run when the guard context is built.
type evidence struct {
	LastCommand *commandEvidence `json:"last_command,omitempty"`
	LastTest    *testEvidence    `json:"last_test,omitempty"`
}

type commandEvidence struct {
	ExitCode int    `json:"exit_code"`
	Program  string `json:"program"`
}

// testEvidence is runtime.last_test. Passed comes only from a structured
// report (testreport.Evidence, handed over by the launcher or `statewright
// testrun`): a run without one, a run of zero tests or a listing never
// passed, whatever it printed (docs/workflow-format.md, "Test evidence").
type testEvidence struct {
	ExitCode int  `json:"exit_code"`
	Passed   bool `json:"passed"`
	// TestsRun is how many tests ran to a verdict; TestsFailed how many
	// failed, plus failures outside any test (a package that did not build).
	TestsRun    int `json:"tests_run"`
	TestsFailed int `json:"tests_failed"`
	// Narrowed is true when the run covered part of the suite; NarrowedBy
	// says what narrowed it ("argv -run X; GOFLAGS -short").
	Narrowed   bool   `json:"narrowed"`
	NarrowedBy string `json:"narrowed_by,omitempty"`
	// Report is the structured report's format ("" when there was none).
	Report string `json:"report,omitempty"`
	// Runner is the test runner; Reason explains Passed == false.
	Runner string `json:"runner,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Channel is how the report reached statewright (testreport.Channel).
	Channel string `json:"channel,omitempty"`
}

// fromReport converts a runner's structured evidence.
func fromReport(e *testreport.Evidence) *testEvidence {
	return &testEvidence{ExitCode: e.ExitCode, Passed: e.Passed, TestsRun: e.Counts.Run,
		TestsFailed: e.Counts.Failed + e.Counts.Errors, Narrowed: e.Narrowed,
		NarrowedBy: strings.Join(e.NarrowedBy, "; "), Report: string(e.Report), Runner: string(e.Runner), Reason: e.Reason,
		Channel: string(e.Channel)}
}

// NoReportReason is runtime.last_test.reason for a test command that ran
// without a structured report.
const NoReportReason = "no structured report: the command did not run through statewright's test runner wrapper (the sandbox launcher or `statewright testrun`), so nothing shows how many tests ran"

func decodeEvidence(run *store.Run) (evidence, error) {
	var ev evidence
	if len(run.Evidence) == 0 || string(run.Evidence) == "null" {
		return ev, nil
	}
	if err := json.Unmarshal(run.Evidence, &ev); err != nil {
		return ev, fmt.Errorf("runtime: run %s: decode evidence: %w", run.ID, err)
	}
	return ev, nil
}

// runtimeContext returns the value of the guard context's "runtime" key.
func runtimeContext(run *store.Run) (map[string]any, error) {
	ev, err := decodeEvidence(run)
	if err != nil {
		return nil, err
	}
	m := map[string]any{
		"files_edited": len(run.FilesEdited),
		"iterations":   run.Iterations,
	}
	if c := ev.LastCommand; c != nil {
		m["last_command"] = map[string]any{"exit_code": c.ExitCode, "program": c.Program}
	}
	if t := ev.LastTest; t != nil {
		lt := map[string]any{"exit_code": t.ExitCode, "passed": t.Passed, "tests_run": int64(t.TestsRun),
			"tests_failed": int64(t.TestsFailed), "narrowed": t.Narrowed, "narrowed_by": t.NarrowedBy}
		if t.Report != "" {
			lt["report"] = t.Report
		}
		if t.Runner != "" {
			lt["runner"] = t.Runner
		}
		if t.Reason != "" {
			lt["reason"] = t.Reason
		}
		if t.Channel != "" {
			lt["channel"] = t.Channel
		}
		m["last_test"] = lt
	}
	return m, nil
}

// decodeContext returns the run's stored context (never nil).
func decodeContext(run *store.Run) (map[string]any, error) {
	ctx := map[string]any{}
	if len(run.Context) == 0 || string(run.Context) == "null" {
		return ctx, nil
	}
	if err := json.Unmarshal(run.Context, &ctx); err != nil {
		return nil, fmt.Errorf("runtime: run %s: decode context: %w", run.ID, err)
	}
	if ctx == nil {
		ctx = map[string]any{}
	}
	return ctx, nil
}

// snapshot builds the engine's view of the run: its context with the
// runtime evidence under "runtime" (whatever the stored context says there).
func snapshot(run *store.Run) (engine.Snapshot, error) {
	ctx, err := decodeContext(run)
	if err != nil {
		return engine.Snapshot{}, err
	}
	rt, err := runtimeContext(run)
	if err != nil {
		return engine.Snapshot{}, err
	}
	ctx[engine.RuntimeKey] = rt
	hist, err := decodeHistory(run)
	if err != nil {
		return engine.Snapshot{}, err
	}
	return engine.Snapshot{State: run.State, Context: ctx, History: hist}, nil
}

// shellEvidence updates ev for a shell command that exited with code.
// runtime.last_command is recorded for every command that parses; the
// program is the test runner's when the line runs one, else the last
// simple command's. runtime.last_test is recorded only when the command
// line is a single simple command classified as a test run (not in the
// background, not negated with `!`, not running another program through
// -exec/--script-shell and the like): in `go test ./... || true`, `pytest; echo`, or
// `go test | tee log` the line's exit status is not the test's, so it
// proves nothing about the tests.
//
// report is the structured evidence the runner wrapper recorded for this
// call, or nil. Without it, runtime.last_test says the command ran but
// never that it passed (NoReportReason), with the narrowing its argv shows.
func shellEvidence(ev *evidence, command string, code int, report *testreport.Evidence) (test bool) {
	a, err := shell.Analyze(command)
	if err != nil {
		return false
	}
	prog := ""
	for i := range a.Commands {
		c := &a.Commands[i]
		if c.Classes&shell.ClassTest != 0 {
			prog = c.Program
			break
		}
		prog = c.Program
	}
	ev.LastCommand = &commandEvidence{ExitCode: code, Program: prog}
	if len(a.Commands) == 1 && a.Classes&shell.ClassTest != 0 && a.Classes&shell.ClassBackground == 0 &&
		!a.Commands[0].Negated && a.Classes&shell.ClassExec == 0 && !runsNoTests(&a.Commands[0]) {
		if report != nil {
			ev.LastTest = fromReport(report)
			return true
		}
		t := &testEvidence{ExitCode: code, Reason: NoReportReason}
		if p, ok := testreport.New(a.Commands[0].Argv, a.Commands[0].Assigns, testreport.Project{}); ok {
			t.Runner, t.Narrowed, t.NarrowedBy = string(p.Runner), p.Narrowed, strings.Join(p.NarrowedBy, "; ")
		}
		ev.LastTest = t
		return true
	}
	return false
}

// commandText extracts the shell command from a shell tool's input:
// {"command": "..."} (Claude Code, Cursor, opencode, Pi) or an argv in
// "command"/"cmd" (Codex), where ["bash", "-lc", SCRIPT] is SCRIPT.
func commandText(input json.RawMessage) (string, bool) {
	var m map[string]any
	if err := json.Unmarshal(input, &m); err != nil {
		return "", false
	}
	for _, k := range []string{"command", "cmd"} {
		switch v := m[k].(type) {
		case string:
			return v, true
		case []any:
			argv := make([]string, 0, len(v))
			for _, w := range v {
				s, ok := w.(string)
				if !ok {
					return "", false
				}
				argv = append(argv, s)
			}
			if len(argv) == 3 && slices.Contains([]string{"bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/bin/zsh"}, argv[0]) &&
				(argv[1] == "-c" || argv[1] == "-lc") {
				return argv[2], true
			}
			for i, w := range argv {
				argv[i] = shellQuote(w)
			}
			return strings.Join(argv, " "), len(argv) > 0
		}
	}
	return "", false
}

func shellQuote(w string) string {
	if w != "" && !strings.ContainsAny(w, " \t\n'\"\\$`;&|<>(){}[]*?!#~=%") {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// noTestFlags make a test runner exit 0 without running any test (list,
// collect, compile only, help).
var noTestFlags = []string{"-list", "-test.list", "--collect-only", "--co", "--no-run", "--listTests", "--list",
	"--setup-only", "--setup-plan", "--fixtures", "--markers", "--help", "-h", "--version", "-V"}

// runsNoTests reports whether a test command only lists, compiles or
// prints help: its exit status proves nothing about the tests. A runner
// package testreport plans is read with its option grammar (pytest
// --collect-only, go test -list=X, cargo test --no-run); for other runners
// the words are scanned for the common listing flags.
func runsNoTests(c *shell.Command) bool {
	if p, ok := testreport.New(c.Argv, c.Assigns, testreport.Project{}); ok {
		return p.ListOnly
	}
	for _, a := range c.Argv {
		if c.Program == "go" && (a == "-c" || a == "-n") {
			return true // go test -c compiles, -n prints the commands
		}
		for _, f := range noTestFlags {
			if a == f || strings.HasPrefix(a, f+"=") {
				return true
			}
		}
	}
	return false
}
