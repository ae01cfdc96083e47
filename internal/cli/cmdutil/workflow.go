package cmdutil

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/workflow"
)

// ErrInvalidWorkflow reports that a workflow parsed (or failed to) with error
// diagnostics, or with warnings under --strict. The diagnostics say why.
var ErrInvalidWorkflow = errors.New("invalid workflow")

// LooksLikeTemplateName reports whether arg is a bare name (no path
// separator, no extension) that could name a bundled template.
func LooksLikeTemplateName(arg string) bool {
	return arg != "" && !strings.ContainsAny(arg, `/\.`)
}

// LoadWorkflow loads a workflow by bundled template name or by file path,
// parses it (strict turns unknown keys into errors) and validates it.
//
// A bare name (no path separator, no extension) that names a bundled template
// loads the template, with diagnostics naming "template:NAME"; anything else
// is read as a file. The returned diagnostics are every parse and validation
// finding, for the caller to print.
//
// Errors: a usageError when the file cannot be read or no template or file
// has that name (the workflow was never looked at); ErrInvalidWorkflow
// (wrapped) when there is an error diagnostic, or a warning and strict is set.
// With ErrInvalidWorkflow the definition is returned when it parsed, so that
// callers may still show it.
func LoadWorkflow(nameOrPath string, strict bool) (*workflow.Definition, workflow.Diagnostics, error) {
	var (
		data   []byte
		source string
	)
	if LooksLikeTemplateName(nameOrPath) && workflow.IsTemplate(nameOrPath) {
		src, err := workflow.TemplateSource(nameOrPath)
		if err != nil {
			return nil, nil, Usage(fmt.Errorf("load workflow: %w", err))
		}
		data, source = src, workflow.TemplateSourceName(nameOrPath)
	} else {
		src, err := os.ReadFile(nameOrPath)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) && LooksLikeTemplateName(nameOrPath) {
				return nil, nil, Usagef("no bundled workflow or file named %q%s (bundled: %s)", nameOrPath, DidYouMean(nameOrPath, workflow.TemplateNames()), strings.Join(workflow.TemplateNames(), ", "))
			}
			return nil, nil, Usage(fmt.Errorf("read workflow: %w", err))
		}
		data, source = src, nameOrPath
	}

	def, diags, err := workflow.Parse(data, workflow.ParseOptions{Source: source, Strict: strict})
	if err != nil {
		var pe *workflow.ParseError
		if len(diags) == 0 && errors.As(err, &pe) {
			diags = pe.Diagnostics
		}
		if len(diags) == 0 {
			// Keep the failure visible even if the parser gave no finding.
			diags = workflow.Diagnostics{{Severity: workflow.SeverityError, Code: "parse", Message: err.Error(), Source: source}}
		}
		return nil, diags, fmt.Errorf("%s: %w", source, ErrInvalidWorkflow)
	}
	diags = lintTools(def, append(diags, workflow.Validate(def)...))
	if diags.HasErrors() || (strict && len(diags) > 0) {
		return def, diags, fmt.Errorf("%s: %w", source, ErrInvalidWorkflow)
	}
	return def, diags, nil
}

// PrintDiagnostics writes one diagnostic per line as
// "file:line:col: severity: message".
func PrintDiagnostics(w io.Writer, diags workflow.Diagnostics) {
	c := ColorsFor(w)
	for _, d := range diags {
		line := d.String()
		switch d.Severity {
		case workflow.SeverityError:
			line = strings.Replace(line, "error:", c.Red("error:"), 1)
		case workflow.SeverityWarning:
			line = strings.Replace(line, "warning:", c.Yellow("warning:"), 1)
		}
		fmt.Fprintln(w, line)
	}
}

// LoadForCommand loads a workflow for a command that needs a usable
// definition (show, graph, engine step): diagnostics go to stderr, a load
// that fails becomes the command's error (exit 2 for an unreadable or
// unknown workflow, exit 1 for an invalid one). When allowInvalid is set, a
// definition that parsed but has validation errors is returned together with
// the exit-1 error so the caller can still render it.
//
// Compatibility notes (warnings with a "compat-" code, which say where
// statewright-go's semantics differ from statewright's) are left to
// 'workflows validate' unless strict makes them count; errors and every
// other warning are printed.
func LoadForCommand(stderr io.Writer, nameOrPath string, strict, allowInvalid bool) (*workflow.Definition, error) {
	def, diags, err := LoadWorkflow(nameOrPath, strict)
	for _, d := range diags {
		if !strict && d.Severity == workflow.SeverityWarning && strings.HasPrefix(d.Code, "compat-") {
			continue
		}
		fmt.Fprintln(stderr, d.String())
	}
	if err == nil {
		return def, nil
	}
	if errors.Is(err, ErrInvalidWorkflow) {
		if allowInvalid && def != nil {
			return def, Failure("")
		}
		return nil, Failure(fmt.Sprintf("%s is not a valid workflow", DisplayName(nameOrPath)))
	}
	return nil, err
}

// DisplayName is how messages name a workflow argument.
func DisplayName(nameOrPath string) string {
	if LooksLikeTemplateName(nameOrPath) && workflow.IsTemplate(nameOrPath) {
		return workflow.TemplateSourceName(nameOrPath)
	}
	return filepath.ToSlash(nameOrPath)
}

// lintTools adds the policy's checks to a loaded workflow's diagnostics:
// the tool-name lint (policy.LintToolNames: a name no harness's alias
// table knows, with a did-you-mean), the permission rules
// (policy.LintRules: malformed ones are errors, ones that can never match
// warnings) and the inline examples (policy.CheckExamples: a failing
// example is an error at its line:column).
func lintTools(def *workflow.Definition, diags workflow.Diagnostics) workflow.Diagnostics {
	diags = append(diags, policy.LintToolNames(def)...)
	rules := policy.LintRules(def)
	diags = append(diags, rules...)
	if !rules.HasErrors() {
		diags = append(diags, policy.CheckExamples(def)...)
	}
	return diags
}

// DidYouMean returns ` (did you mean "x"?)` naming the candidate name is a
// likely typo of (workflow.Suggest), or "".
func DidYouMean(name string, candidates []string) string {
	if s := workflow.Suggest(name, candidates); s != "" {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	return ""
}
