package testreport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// NewRenderer returns a writer that turns a report written to stdout back
// into the text the runner prints without it, for the agent to read:
// go test -json into go test's output (verbose or not), libtest's JSON
// into libtest's. Lines that are not JSON events pass through unchanged.
// Close flushes a last unterminated line. For formats that are written to
// a file (JUnit, jest) it returns w itself, wrapped to ignore Close.
func NewRenderer(f Format, w io.Writer, verbose bool) io.WriteCloser {
	switch f {
	case FormatGoJSON:
		r := &goRenderer{w: w, verbose: verbose, held: map[string][]string{}, pkgOut: map[string]*strings.Builder{}}
		return &lineWriter{line: r.line}
	case FormatLibtestJSON:
		r := &libtestRenderer{w: w}
		return &lineWriter{line: r.line}
	}
	return nopCloser{w}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// lineWriter splits what is written into lines and hands each (with its
// newline, if any) to line.
type lineWriter struct {
	buf  []byte
	line func([]byte) error
}

// maxLine bounds a buffered line; a longer one is handed on in pieces.
const maxLine = 1 << 20

func (l *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			l.buf = append(l.buf, p...)
			if len(l.buf) > maxLine {
				err := l.line(l.buf)
				l.buf = l.buf[:0]
				return n, err
			}
			return n, nil
		}
		l.buf = append(l.buf, p[:i+1]...)
		p = p[i+1:]
		err := l.line(l.buf)
		l.buf = l.buf[:0]
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func (l *lineWriter) Close() error {
	if len(l.buf) == 0 {
		return nil
	}
	err := l.line(l.buf)
	l.buf = nil
	return err
}

// goRenderer renders test2json events as go test's text.
type goRenderer struct {
	w       io.Writer
	verbose bool
	held    map[string][]string // package + "\x00" + test -> output held until the verdict
	// pkgOut holds a package's text until the package ends, so that
	// packages tested in parallel print one after another, as go test does.
	pkgOut map[string]*strings.Builder
	pkg    string // the package of the event being rendered
}

func (r *goRenderer) line(b []byte) error {
	t := bytes.TrimSpace(b)
	var e goEvent
	if len(t) == 0 || t[0] != '{' || json.Unmarshal(t, &e) != nil || e.Action == "" {
		_, err := r.w.Write(b)
		return err
	}
	key := e.Package + "\x00" + e.Test
	r.pkg = e.Package
	switch e.Action {
	case "output", "build-output":
		switch {
		case r.verbose:
			return r.write(e.Output)
		case e.Test == "":
			if e.Output == "PASS\n" || strings.HasPrefix(e.Output, "=== ") {
				return nil // go test drops a passing package's PASS line
			}
			return r.write(e.Output)
		default:
			if !isFraming(e.Output, e.Test) {
				r.held[key] = append(r.held[key], e.Output)
			}
		}
	case "fail":
		if e.Test != "" && !r.verbose {
			out := r.held[key]
			delete(r.held, key)
			return r.write(failText(out, e.Test))
		}
	case "pass", "skip":
		delete(r.held, key)
	}
	if e.Test == "" && e.Package != "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip") {
		if b := r.pkgOut[e.Package]; b != nil {
			delete(r.pkgOut, e.Package)
			_, err := io.WriteString(r.w, b.String())
			return err
		}
	}
	return nil
}

// write adds text to the package's block (verbose output and output
// outside any package go straight through).
func (r *goRenderer) write(s string) error {
	if s == "" {
		return nil
	}
	if !r.verbose && r.pkg != "" {
		b := r.pkgOut[r.pkg]
		if b == nil {
			b = &strings.Builder{}
			r.pkgOut[r.pkg] = b
		}
		b.WriteString(s)
		return nil
	}
	_, err := io.WriteString(r.w, s)
	return err
}

// libtestRenderer renders libtest's JSON events as libtest's text.
type libtestRenderer struct {
	w        io.Writer
	failures []libtestEvent
}

func (r *libtestRenderer) line(b []byte) error {
	t := bytes.TrimSpace(b)
	var e libtestEvent
	if len(t) == 0 || t[0] != '{' || json.Unmarshal(t, &e) != nil || e.Type == "" {
		_, err := r.w.Write(b)
		return err
	}
	var s string
	switch {
	case e.Type == "suite" && e.Event == "started":
		r.failures = nil
		s = fmt.Sprintf("\nrunning %d tests\n", e.TestCount)
	case e.Type == "test" && e.Event == "ok":
		s = fmt.Sprintf("test %s ... ok\n", e.Name)
	case e.Type == "test" && (e.Event == "failed" || e.Event == "timeout"):
		r.failures = append(r.failures, e)
		s = fmt.Sprintf("test %s ... FAILED\n", e.Name)
	case e.Type == "test" && e.Event == "ignored":
		s = fmt.Sprintf("test %s ... ignored\n", e.Name)
	case e.Type == "suite" && (e.Event == "ok" || e.Event == "failed"):
		var sb strings.Builder
		if len(r.failures) > 0 {
			sb.WriteString("\nfailures:\n")
			for _, f := range r.failures {
				if f.Stdout != "" {
					fmt.Fprintf(&sb, "\n---- %s stdout ----\n%s", f.Name, f.Stdout)
				}
			}
			sb.WriteString("\nfailures:\n")
			for _, f := range r.failures {
				fmt.Fprintf(&sb, "    %s\n", f.Name)
			}
		}
		verdict := "ok"
		if e.Event == "failed" {
			verdict = "FAILED"
		}
		fmt.Fprintf(&sb, "\ntest result: %s. %d passed; %d failed; %d ignored; 0 measured; %d filtered out", verdict, e.Passed, e.Failed, e.Ignored, e.FilteredOut)
		if secs, ok := e.ExecTime.(float64); ok {
			fmt.Fprintf(&sb, "; finished in %.2fs", secs)
		}
		sb.WriteString("\n\n")
		s = sb.String()
	}
	if s == "" {
		return nil
	}
	_, err := io.WriteString(r.w, s)
	return err
}

// isFraming reports go test's own "=== RUN   TestX" (PAUSE, CONT, NAME)
// line for test: verbose output only.
func isFraming(line, test string) bool {
	for _, p := range []string{"=== RUN   ", "=== PAUSE ", "=== CONT  ", "=== NAME  "} {
		if line == p+test+"\n" {
			return true
		}
	}
	return false
}

// failText orders a failed test's held output as go test prints it without
// -v: what the test printed itself, then its "--- FAIL" line, then its log
// (indented) lines, which -json streams before the verdict line.
func failText(out []string, test string) string {
	var head, verdict, logs strings.Builder
	for _, l := range out {
		switch {
		case strings.HasPrefix(l, "--- FAIL: "+test+" "):
			verdict.WriteString(l)
		case strings.HasPrefix(l, "    "):
			logs.WriteString(l)
		default:
			head.WriteString(l)
		}
	}
	return head.String() + verdict.String() + logs.String()
}
