package testrun

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/statewright-go/statewright/sandbox"
	"github.com/statewright-go/statewright/testreport"
)

// The call protocol of the hook path without the sandbox launcher. A hook
// that lets a plain test command through (IsTestCommand) marks the call's
// directory (MarkCall: the project root, outside the agent's reach in the
// per-session directory the sandbox package lays out) and rewrites the
// command to `statewright testrun --call DIR -c COMMAND` (Command), with
// the harness's input-rewriting answer (Claude Code's updatedInput, the
// plugins' replaced args). RunCall plans the command with the environment
// it really runs with, makes the runner also write its report, shows the
// agent the output it would have seen, and writes the evidence into DIR.
// PostToolUse reads it (ReadCall) and hands it to the runtime
// (runtime.ToolResult.TestReport), then removes the directory.
//
// Under the OS sandbox the launcher is the one place that runs commands:
// the hook marks the call the same way, and the launcher (`statewright
// sandbox exec`) asks Observe for the instrumented script and the stdout
// watcher, running bubblewrap where RunCall runs bash.

const (
	markFile     = "testrun.json"
	evidenceFile = "test-evidence.json"
)

// mark is the content of testrun.json.
type mark struct {
	// ProjectDir is the project root (the runner's config files are read
	// from it and the directories between it and the working directory).
	ProjectDir string `json:"project_dir"`
	// Command is the agent's command as it asked for it.
	Command string `json:"command"`
}

// IsTestCommand reports whether script is one plain test command that
// RunCall can make write a structured report (see PrepareScript). It reads
// no file: the plan is made again when the command runs.
func IsTestCommand(script string) bool {
	words, assigns, ok := plainCommand(script)
	if !ok {
		return false
	}
	_, _, ok = findRunner(words, assigns, testreport.Project{})
	return ok
}

// MarkCall creates the call's directory afresh (whatever an earlier
// command left there is removed) and records the project root and the
// agent's command in it.
func MarkCall(callDir, projectDir, command string) error {
	if err := os.RemoveAll(callDir); err != nil {
		return fmt.Errorf("testrun: %w", err)
	}
	if err := os.MkdirAll(callDir, 0o700); err != nil {
		return fmt.Errorf("testrun: %w", err)
	}
	return Mark(callDir, projectDir, command)
}

// Mark keeps a call off the phase's sandbox server (sandbox.Call.Unserve)
// and records the project root and the agent's command in a call's
// directory that its caller has just created afresh (the sandbox's
// sandbox.PrepareCall), for the launcher's Observe.
func Mark(callDir, projectDir, command string) error {
	// The observer runs beside the command, outside: never in the phase's
	// sandbox server.
	if err := (sandbox.Call{Dir: callDir}).Unserve(); err != nil {
		return err
	}
	b, err := json.Marshal(mark{ProjectDir: projectDir, Command: command})
	if err != nil {
		return fmt.Errorf("testrun: %w", err)
	}
	if err := os.WriteFile(filepath.Join(callDir, markFile), b, 0o600); err != nil {
		return fmt.Errorf("testrun: %w", err)
	}
	return nil
}

// Command returns the shell command a harness's shell runs instead of
// script: bin (statewright's absolute path) running it through testrun.
func Command(bin, callDir, script string) string {
	return sandbox.Quote(bin) + " testrun --call " + sandbox.Quote(callDir) + " -c " + sandbox.Quote(script)
}

// RunCall runs script (with bash -c, in the current directory, with the
// current environment) for the marked call in callDir and returns the exit
// status to exit with. A call directory without a mark runs the script
// unchanged and records nothing. No OS sandbox runs the command, so its
// evidence says so (testreport.ChannelUnsandboxed).
func RunCall(callDir, script string, stdin io.Reader, stdout, stderr io.Writer) int {
	var w *Wrapped
	if m, ok := readMark(callDir); ok {
		w, _ = prepareCall(script, m, os.Environ(), callDir, callDir)
	}
	run := script
	if w != nil {
		run = w.Script
	}
	cmd := exec.Command("/bin/bash", "-c", run)
	cmd.Stdin, cmd.Stderr = stdin, stderr
	cmd.Stdout = stdout
	var out io.WriteCloser
	if w != nil {
		out = w.Stdout(stdout)
		cmd.Stdout = out
	}
	err := cmd.Run()
	if out != nil {
		out.Close()
	}
	code, ok := sandbox.ExitStatus(err)
	if !ok {
		fmt.Fprintln(stderr, "statewright testrun:", err)
		code = 127
	}
	if w != nil {
		ev := w.Finish(code)
		ev.Channel = testreport.ChannelUnsandboxed
		if b, err := json.Marshal(ev); err == nil {
			_ = os.WriteFile(filepath.Join(callDir, evidenceFile), b, 0o600)
		}
	}
	return code
}

// Observe is the sandbox launcher's observer (sandbox.ObserveFunc) for a
// call MarkCall marked: the launcher runs the instrumented script under
// the call's profile, keeps a report on stdout outside the sandbox (in the
// call's directory, which the command cannot write) and records the
// evidence in result.json, where PostToolUse finds it (sandbox.ReadResult).
// A runner that writes a report file writes it in the call's writable
// directory, and its evidence says the channel could be forged. nil when
// the call is not marked or script is no plain test command.
func Observe(c sandbox.Call, script string, env []string) sandbox.Observer {
	m, ok := readMark(c.Dir)
	if !ok {
		return nil
	}
	w, err := prepareCall(script, m, env, c.Dir, c.RW)
	if err != nil || w == nil {
		return nil
	}
	return observer{w}
}

type observer struct{ w *Wrapped }

func (o observer) Script() string                      { return o.w.Script }
func (o observer) Stdout(out io.Writer) io.WriteCloser { return o.w.Stdout(out) }
func (o observer) Finish(code int) any {
	ev := o.w.Finish(code)
	ev.Channel = testreport.ChannelFile
	if o.w.Plan.Format.OnStdout() {
		ev.Channel = testreport.ChannelStream
	}
	return ev
}

func readMark(callDir string) (mark, bool) {
	var m mark
	b, err := os.ReadFile(filepath.Join(callDir, markFile))
	if err != nil || json.Unmarshal(b, &m) != nil {
		return mark{}, false
	}
	return m, true
}

// prepareCall plans script in the working directory against the marked
// project root, with env, the report in private or shared (PrepareIn).
func prepareCall(script string, m mark, env []string, private, shared string) (*Wrapped, error) {
	proj := testreport.Project{}
	if m.ProjectDir != "" {
		proj.FS = os.DirFS(m.ProjectDir)
		if cwd, err := os.Getwd(); err == nil {
			if rel, err := filepath.Rel(m.ProjectDir, cwd); err == nil && !strings.HasPrefix(rel, "..") {
				proj.Dir = filepath.ToSlash(rel)
			}
		}
	}
	w, ok, err := PrepareScriptIn(script, env, proj, private, shared)
	if err != nil || !ok {
		return nil, err
	}
	return w, nil
}

// ReadCall returns the agent's command the call in callDir was marked with
// ("" and false when it was not marked) and the evidence RunCall wrote for
// it (nil when the command did not run through RunCall, or wrote none).
func ReadCall(callDir string) (command string, ev *testreport.Evidence, marked bool) {
	m, ok := readMark(callDir)
	if !ok {
		return "", nil, false
	}
	b, err := os.ReadFile(filepath.Join(callDir, evidenceFile))
	if err != nil {
		return m.Command, nil, true
	}
	var e testreport.Evidence
	if json.Unmarshal(b, &e) != nil {
		return m.Command, nil, true
	}
	return m.Command, &e, true
}
