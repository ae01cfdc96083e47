// Package testrun runs a planned test command so that it also writes its
// structured report, shows the agent the output it would have seen
// anyway, and returns the evidence the report holds.
//
// It is the I/O half of package testreport. A caller that starts processes
// its own way (the sandbox launcher, under bubblewrap) uses Prepare and
// Finish around its own start; Run does all three with os/exec.
package testrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/statewright-go/statewright/testreport"
)

// Wrapped is one test command prepared to write its report.
type Wrapped struct {
	// Plan is the command's plan.
	Plan testreport.Plan
	// Argv and Env are what to run: Env are NAME=value entries to add to
	// the command's environment. Without a report (NoReport), Argv is the
	// command unchanged.
	Argv []string
	Env  []string
	// NoReport is why the command runs without a report ("" when it has one).
	NoReport string
	// Script is the shell command line to run instead (PrepareScript only).
	Script string

	dir    string // the temporary directory holding the report
	report string // the report's path
	in     testreport.Instrumented
	stdout *reportTee
}

// Prepare instruments argv (planned as p) to write its report into a new
// directory under tmpDir ("" for os.TempDir). The caller runs w.Argv with
// w.Env added, wiring the command's stdout through w.Stdout, and then
// calls w.Finish. Without a report format, w runs the command unchanged
// and Finish says why no test passed.
func Prepare(p testreport.Plan, tmpDir string) (*Wrapped, error) {
	return PrepareIn(p, tmpDir, tmpDir)
}

// PrepareIn is Prepare with the report's directory chosen by who writes
// it: under private (where the command cannot write: the sandbox
// launcher's call directory) when the runner writes its report to stdout,
// which the caller keeps; under shared (where the command can write) when
// the runner writes a file itself.
func PrepareIn(p testreport.Plan, private, shared string) (*Wrapped, error) {
	w := &Wrapped{Plan: p}
	if p.Format == "" {
		w.NoReport = p.NoReport
		return w, nil
	}
	tmpDir := shared
	if p.Format.OnStdout() {
		tmpDir = private
	}
	dir, err := os.MkdirTemp(tmpDir, "statewright-testrun-")
	if err != nil {
		return nil, fmt.Errorf("testrun: %w", err)
	}
	w.dir, w.report = dir, filepath.Join(dir, "report")
	in, err := p.Instrument(w.report)
	if err != nil {
		os.RemoveAll(dir)
		w.dir, w.report, w.NoReport = "", "", err.Error()
		return w, nil
	}
	w.in, w.Argv, w.Env = in, in.Argv, in.Env
	return w, nil
}

// Stdout returns the writer the command's stdout goes to: agentOut
// itself, or, when the report is on stdout, a tee that keeps the report
// and shows agentOut the rendered text. Close it after the command exits.
func (w *Wrapped) Stdout(agentOut io.Writer) io.WriteCloser {
	if !w.in.ReportOnStdout || w.dir == "" {
		return nopCloser{agentOut}
	}
	f, err := os.Create(w.report)
	if err != nil {
		return nopCloser{agentOut}
	}
	view := io.WriteCloser(nopCloser{agentOut})
	if w.in.Render {
		view = testreport.NewRenderer(w.Plan.Format, agentOut, w.Plan.Verbose)
	}
	w.stdout = &reportTee{file: f, view: view}
	return w.stdout
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// reportTee writes everything to the report file and to the agent's view.
type reportTee struct {
	file *os.File
	view io.WriteCloser
	size int64
}

func (t *reportTee) Write(p []byte) (int, error) {
	if t.size < testreport.MaxReportSize {
		n, _ := t.file.Write(p)
		t.size += int64(n)
	}
	return t.view.Write(p)
}

func (t *reportTee) Close() error {
	return errors.Join(t.view.Close(), t.file.Close())
}

// Finish reads the report after the command exited with exitCode, removes
// the temporary directory, and returns the evidence.
func (w *Wrapped) Finish(exitCode int) testreport.Evidence {
	if w.dir == "" {
		why := w.NoReport
		if why == "" {
			why = "no structured report"
		}
		return w.Plan.Evidence(exitCode, testreport.Counts{}, errors.New(why))
	}
	defer os.RemoveAll(w.dir)
	if w.stdout != nil {
		w.stdout.Close()
	}
	b, err := readReport(w.report)
	if err != nil {
		return w.Plan.Evidence(exitCode, testreport.Counts{}, err)
	}
	c, err := testreport.Parse(w.Plan.Format, b)
	return w.Plan.Evidence(exitCode, c, err)
}

func readReport(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, errors.New("the runner wrote no report")
		}
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, testreport.MaxReportSize+1))
	if err != nil {
		return nil, err
	}
	return b, nil
}

// Options says how Run starts the command.
type Options struct {
	// Dir is the working directory ("" for the current one).
	Dir string
	// Env is the command's environment (nil for os.Environ()).
	Env []string
	// Stdin, Stdout and Stderr are the command's streams.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// TmpDir holds the report's temporary directory ("" for os.TempDir).
	TmpDir string
}

// Run runs p's command with os/exec: the command writes its report,
// the agent's streams get what they would have got without it, and the
// evidence comes back with the command's exit code. err is set only when
// the command could not be started.
func Run(ctx context.Context, p testreport.Plan, o Options) (testreport.Evidence, int, error) {
	w, err := Prepare(p, o.TmpDir)
	if err != nil {
		return testreport.Evidence{}, -1, err
	}
	run := p.Argv()
	if w.Argv != nil {
		run = w.Argv
	}
	if len(run) == 0 {
		return testreport.Evidence{}, -1, errors.New("testrun: empty command")
	}
	cmd := exec.CommandContext(ctx, run[0], run[1:]...)
	cmd.Dir = o.Dir
	env := o.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(append([]string(nil), env...), w.Env...)
	cmd.Stdin = o.Stdin
	out := w.Stdout(o.Stdout)
	cmd.Stdout, cmd.Stderr = out, o.Stderr
	runErr := cmd.Run()
	out.Close()
	code := 0
	var exitErr *exec.ExitError
	switch {
	case runErr == nil:
	case errors.As(runErr, &exitErr):
		code = exitErr.ExitCode()
		if code < 0 {
			code = 128 + 9 // killed by a signal
		}
	default:
		w.Finish(127)
		return testreport.Evidence{}, 127, fmt.Errorf("testrun: %w", runErr)
	}
	return w.Finish(code), code, nil
}

// SharedWriter returns a writer that serialises writes to w, for a
// command whose stdout and stderr both go to w: exec copies each stream in
// its own goroutine, and a bytes.Buffer written from two at once loses
// data.
func SharedWriter(w io.Writer) io.Writer { return &sharedWriter{w: w} }

type sharedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *sharedWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
