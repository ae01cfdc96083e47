package workflow

import (
	"sort"
	"strings"
)

// Runtime evidence: facts the runtime records about what the agent actually
// did, exposed to guards under the "runtime." prefix. The agent cannot write
// them (event data lands under "data."), so a guard on runtime evidence is
// proof, not a claim. Every field describes the CURRENT state: the runtime
// clears the evidence on each transition, so a state must be able to produce
// the evidence its exits ask for (see the "deadlock" diagnostic).
//
// A field is absent until the runtime has something to put there (no shell
// command has run yet, say); a guard on an absent field fails, except
// not_exists and neq.
const (
	// EvidencePrefix starts every runtime evidence field.
	EvidencePrefix = "runtime."

	// EvidenceLastCommandExitCode is the exit code (int) of the last shell
	// command the agent ran in the current state.
	EvidenceLastCommandExitCode = "runtime.last_command.exit_code"
	// EvidenceLastCommandProgram is the program name (string, first word
	// after unwrapping env/sudo/timeout/...) of the last shell command run in
	// the current state.
	EvidenceLastCommandProgram = "runtime.last_command.program"
	// EvidenceLastTestExitCode is the exit code (int) of the last shell
	// command in the current state that the shell analysis classified as a
	// test run (go test, pytest, npm test, cargo test, ...).
	EvidenceLastTestExitCode = "runtime.last_test.exit_code"
	// EvidenceLastTestPassed is true (bool) when the last test run in the
	// current state wrote a structured report (through the sandbox
	// launcher or `statewright testrun`) showing at least one test ran and
	// none failed, and exited 0. A run without a report, of zero tests, or
	// that only listed tests is never passed (docs/workflow-format.md, "Test evidence").
	EvidenceLastTestPassed = "runtime.last_test.passed"
	// EvidenceLastTestTestsRun is how many tests (int) the last test run
	// executed to a verdict, by its structured report (0 without one).
	EvidenceLastTestTestsRun = "runtime.last_test.tests_run"
	// EvidenceLastTestTestsFailed is how many tests (int) failed, plus
	// failures outside any test (a package that did not build).
	EvidenceLastTestTestsFailed = "runtime.last_test.tests_failed"
	// EvidenceLastTestNarrowed is true (bool) when the last test run
	// covered only part of the suite: a name filter, a marker, a path or
	// package subset, -short, --lf, ..., in argv, the environment (GOFLAGS,
	// PYTEST_ADDOPTS) or the runner's config (pytest addopts).
	EvidenceLastTestNarrowed = "runtime.last_test.narrowed"
	// EvidenceLastTestNarrowedBy says what narrowed it (string, "" when
	// nothing did), e.g. "argv -run TestX; GOFLAGS -short".
	EvidenceLastTestNarrowedBy = "runtime.last_test.narrowed_by"
	// EvidenceLastTestReport is the structured report's format (string:
	// "go-json", "junit", "jest-json", "libtest-json"); absent when the
	// run wrote none.
	EvidenceLastTestReport = "runtime.last_test.report"
	// EvidenceLastTestRunner is the test runner (string: "go test",
	// "pytest", "jest", "vitest", "node --test", "cargo test").
	EvidenceLastTestRunner = "runtime.last_test.runner"
	// EvidenceLastTestReason explains passed == false (string).
	EvidenceLastTestReason = "runtime.last_test.reason"
	// EvidenceLastTestChannel says how the report reached statewright
	// (string, testreport.Channel): "stream" (the runner's stdout, read by
	// the sandbox launcher outside the OS sandbox), "file" (a report file
	// written inside the sandbox) or "unsandboxed" (`statewright testrun`);
	// absent without a report.
	EvidenceLastTestChannel = "runtime.last_test.channel"
	// EvidenceFilesEdited is the number (int) of distinct files edited in
	// the current state, by edit tools or shell writes. Always present (0).
	EvidenceFilesEdited = "runtime.files_edited"
	// EvidenceIterations is the number (int) of tool calls made in the
	// current state, denied calls included. Always present (0).
	EvidenceIterations = "runtime.iterations"
)

// EvidenceType is the JSON type of an evidence field's value.
type EvidenceType string

// Evidence value types.
const (
	EvidenceInt    EvidenceType = "int"
	EvidenceString EvidenceType = "string"
	EvidenceBool   EvidenceType = "bool"
)

// evidenceFields maps each known evidence field to its type.
var evidenceFields = map[string]EvidenceType{
	EvidenceLastCommandExitCode: EvidenceInt,
	EvidenceLastCommandProgram:  EvidenceString,
	EvidenceLastTestExitCode:    EvidenceInt,
	EvidenceLastTestPassed:      EvidenceBool,
	EvidenceLastTestTestsRun:    EvidenceInt,
	EvidenceLastTestTestsFailed: EvidenceInt,
	EvidenceLastTestNarrowed:    EvidenceBool,
	EvidenceLastTestNarrowedBy:  EvidenceString,
	EvidenceLastTestReport:      EvidenceString,
	EvidenceLastTestRunner:      EvidenceString,
	EvidenceLastTestReason:      EvidenceString,
	EvidenceLastTestChannel:     EvidenceString,
	EvidenceFilesEdited:         EvidenceInt,
	EvidenceIterations:          EvidenceInt,
}

// EvidenceFields returns the known runtime evidence fields, sorted.
func EvidenceFields() []string {
	out := make([]string, 0, len(evidenceFields))
	for f := range evidenceFields {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// EvidenceFieldType returns the type of a runtime evidence field and whether
// the field is known.
func EvidenceFieldType(field string) (EvidenceType, bool) {
	t, ok := evidenceFields[field]
	return t, ok
}

// IsEvidenceField reports whether field names runtime evidence (any field
// under "runtime.", known or not).
func IsEvidenceField(field string) bool {
	return strings.HasPrefix(field, EvidencePrefix) || field == "runtime"
}

// evidenceNeedsShell reports whether the evidence field can only be
// produced by running a shell command.
func evidenceNeedsShell(field string) bool {
	return strings.HasPrefix(field, "runtime.last_command.") || strings.HasPrefix(field, "runtime.last_test.")
}
