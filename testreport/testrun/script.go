package testrun

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/statewright-go/statewright/shell"
	"github.com/statewright-go/statewright/testreport"
)

// PrepareScript prepares a shell command line (what a harness's shell tool
// runs with bash -c) to also write its structured report. It applies when
// the line is one plain test command: a single simple command of literal
// words, with literal NAME=value prefixes, optional wrappers (env, timeout,
// nice, ...) in front of the runner, no redirection, pipe, list,
// background or negation. env is the environment the line runs with (its
// own assignments are added). ok is false when the line is not such a test
// command; then it runs unchanged and, if it runs tests, its evidence
// says it had no report.
//
// w.Script is the line to run instead (assignments and wrappers kept, the
// runner's arguments instrumented); w.Stdout and w.Finish work as for
// Prepare. With a plan but no report format, w.Script is the line itself
// and Finish says why nothing passed.
func PrepareScript(script string, env []string, project testreport.Project, tmpDir string) (w *Wrapped, ok bool, err error) {
	return PrepareScriptIn(script, env, project, tmpDir, tmpDir)
}

// PrepareScriptIn is PrepareScript with the report's directories as for
// PrepareIn.
func PrepareScriptIn(script string, env []string, project testreport.Project, private, shared string) (w *Wrapped, ok bool, err error) {
	words, assigns, ok := plainCommand(script)
	if !ok {
		return nil, false, nil
	}
	runAt, p, ok := findRunner(words, append(append([]string(nil), env...), assigns...), project)
	if !ok {
		return nil, false, nil
	}
	w, err = PrepareIn(p, private, shared)
	if err != nil {
		return nil, false, err
	}
	if w.Argv == nil {
		w.Script = script
		return w, true, nil
	}
	var b strings.Builder
	for _, a := range assigns {
		k, v, _ := strings.Cut(a, "=")
		b.WriteString(k + "=" + quote(v) + " ")
	}
	for _, e := range w.Env {
		k, v, _ := strings.Cut(e, "=")
		b.WriteString(k + "=" + quote(v) + " ")
	}
	for _, wd := range words[:runAt] {
		b.WriteString(quote(wd) + " ")
	}
	for i, a := range w.Argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(quote(a))
	}
	w.Script = b.String()
	return w, true, nil
}

// findRunner finds the test runner in words after any wrappers: the first
// suffix of words that testreport recognises.
func findRunner(words, env []string, project testreport.Project) (int, testreport.Plan, bool) {
	for i := 0; i < len(words) && i < 8; i++ {
		if p, ok := testreport.New(words[i:], env, project); ok {
			if i > 0 && !wrapperWords(words[:i]) {
				return 0, testreport.Plan{}, false
			}
			return i, p, true
		}
	}
	return 0, testreport.Plan{}, false
}

// wrapperWords reports whether prefix is a run of known wrappers and their
// arguments (timeout 60, nice -n 5, env A=b, stdbuf -oL, command, time).
func wrapperWords(prefix []string) bool {
	switch prefix[0] {
	case "timeout", "nice", "env", "stdbuf", "command", "time", "ionice", "nohup":
		return prefix[0] != "nohup"
	}
	return false
}

// plainCommand parses script and returns its words and assignments when it
// is one plain simple command of literal words.
func plainCommand(script string) (words, assigns []string, ok bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), "")
	if err != nil || len(f.Stmts) != 1 {
		return nil, nil, false
	}
	st := f.Stmts[0]
	if st.Negated || st.Background || st.Coprocess || len(st.Redirs) > 0 {
		return nil, nil, false
	}
	call, isCall := st.Cmd.(*syntax.CallExpr)
	if !isCall || len(call.Args) == 0 {
		return nil, nil, false
	}
	for _, a := range call.Assigns {
		if a.Append || a.Naked || a.Index != nil || a.Array != nil || a.Name == nil {
			return nil, nil, false
		}
		v := ""
		if a.Value != nil {
			if v, ok = shell.LiteralWord(a.Value); !ok {
				return nil, nil, false
			}
		}
		assigns = append(assigns, a.Name.Value+"="+v)
	}
	for _, w := range call.Args {
		s, ok := shell.LiteralWord(w)
		if !ok {
			return nil, nil, false
		}
		words = append(words, s)
	}
	return words, assigns, true
}

// quote quotes s for bash when it needs it.
func quote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`;&|<>(){}[]*?!#~=%^") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// String describes the prepared script for logs.
func (w *Wrapped) String() string {
	if w.NoReport != "" {
		return fmt.Sprintf("%s (no report: %s)", w.Script, w.NoReport)
	}
	return w.Script
}
