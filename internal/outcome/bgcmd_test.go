//go:build linux

package outcome

import (
	"os/exec"
	"strings"
	"sync"
	"syscall"
)

// background is a command the harness runs in the background (Claude
// Code's run_in_background): decided by the installed PreToolUse hook and
// started, as the harness would, with its rewritten command line.
type background struct {
	id   string         // the call's tool_use_id
	in   map[string]any // the input the harness runs (rewritten by the hook)
	line string         // the command line the harness's shell runs
	cmd  *exec.Cmd
	out  lockedBuffer  // stdout and stderr, one pipe, as the harness shows them
	done chan struct{} // closed when the command ended
	err  error         // cmd.Wait's error, once done is closed
}

// startBackground decides command through the hook as a background call
// and starts the command line the hook answered, in the project, with the
// world's environment plus env; the test fails at once when it is denied.
// Its process group is killed when the test ends.
func (w *world) startBackground(command string, env ...string) *background {
	w.t.Helper()
	id, in, denied := w.pre("Bash", map[string]any{"command": command, "run_in_background": true})
	if denied != nil {
		w.t.Fatalf("the background command was denied: %s", denied.reason)
	}
	b := &background{id: id, in: in, done: make(chan struct{})}
	b.line, _ = in["command"].(string)
	b.cmd = exec.Command("bash", "-c", b.line)
	b.cmd.Dir, b.cmd.Env = w.project, append(append([]string(nil), w.env...), env...)
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	b.cmd.Stdout, b.cmd.Stderr = &b.out, &b.out
	must(w.t, b.cmd.Start())
	w.t.Cleanup(func() { _ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL) })
	go func() { b.err = b.cmd.Wait(); close(b.done) }()
	return b
}

// reported sends the PostToolUse Claude Code sends for a background call
// as soon as it runs.
func (b *background) reported(w *world) {
	w.t.Helper()
	w.hook("PostToolUse", map[string]any{"tool_name": "Bash", "tool_input": b.in, "tool_use_id": b.id,
		"tool_response": map[string]any{"stdout": "Command running in background"}})
}

// exitCode is the command's exit status once it ended (0 for an error
// that is not an exit status).
func (b *background) exitCode() int {
	if ee, ok := b.err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return 0
}

// lockedBuffer is a strings.Builder that the command's stdout and stderr
// copiers may write at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

// Write appends p.
func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns what was written so far.
func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
