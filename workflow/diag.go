package workflow

import (
	"fmt"
	"strings"
)

// Severity says whether a Diagnostic blocks use of a workflow.
type Severity string

// Severities.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Diagnostic is one finding about a workflow file: a parse problem, an
// unknown key, a validation rule that fired, or a compatibility note.
type Diagnostic struct {
	// Severity is error or warning.
	Severity Severity `json:"severity"`
	// Code is a stable machine id such as "unknown-key" or "unreachable-state".
	Code string `json:"code"`
	// Message is the human text, without position.
	Message string `json:"message"`
	// Pos is where in the source the problem is, when known.
	Pos Pos `json:"pos"`
	// Source is the file name, when known.
	Source string `json:"source,omitempty"`
}

// String renders d as "file:line:col: severity: message".
func (d Diagnostic) String() string {
	var b strings.Builder
	if d.Source != "" {
		b.WriteString(d.Source)
		b.WriteString(":")
	}
	if d.Pos.IsValid() {
		b.WriteString(d.Pos.String())
		b.WriteString(":")
	}
	if b.Len() > 0 {
		b.WriteString(" ")
	}
	fmt.Fprintf(&b, "%s: %s", d.Severity, d.Message)
	return b.String()
}

// Diagnostics is a list of findings.
type Diagnostics []Diagnostic

// HasErrors reports whether any diagnostic is an error.
func (ds Diagnostics) HasErrors() bool {
	for _, d := range ds {
		if d.Severity == SeverityError {
			return true
		}
	}
	return false
}

// ParseError is returned when a workflow file cannot be parsed at all, or
// (in strict mode) when it has error diagnostics. It carries every finding.
type ParseError struct {
	Diagnostics Diagnostics
}

// Error renders the first error with its position and counts the rest.
func (e *ParseError) Error() string {
	var errs []string
	for _, d := range e.Diagnostics {
		if d.Severity == SeverityError {
			errs = append(errs, d.String())
		}
	}
	switch len(errs) {
	case 0:
		return "invalid workflow"
	case 1:
		return errs[0]
	default:
		return fmt.Sprintf("%s (and %d more errors)", errs[0], len(errs)-1)
	}
}
