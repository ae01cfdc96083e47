//go:build linux

package outcome

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPhaseChangeElsewhereStopsTheSandbox is the outcome test of a
// transition made outside the agent's hooks: a command the harness runs in
// the background (Claude Code's run_in_background) keeps appending to a
// file of the project in a phase that may write it; a person moves the run
// to a phase that may not, with the CLI; no hook event follows. The
// background command must die and the file stop growing: the phase's
// sandbox server is stopped by its watcher, not at the agent's next call.
func TestPhaseChangeElsewhereStopsTheSandbox(t *testing.T) {
	w := sandboxedWorldAt(t, "proj")
	// A phase that lets commands run in the background (the bundled
	// templates grant Background nowhere), and a narrower one after it.
	w.write(filepath.Join(w.home, "bg.yaml"), `id: bg
initial: working
states:
  working:
    allowed_tools: [Read, Edit, Write, Bash, Background]
    on: {DONE: reviewing}
  reviewing:
    allowed_tools: [Read, Bash]
    on: {BACK: working, OK: done}
  done: {type: final}
`)
	w.cli("start", filepath.Join(w.home, "bg.yaml"), "--session", w.session, "--store", w.store)
	ticks := w.abs("ticks")
	id, in, denied := w.pre("Bash", map[string]any{"command": "for i in $(seq 600); do echo x >> ticks; sleep 0.05; done", "run_in_background": true})
	if denied != nil {
		t.Fatalf("the background writer was denied: %s", denied.reason)
	}
	line, _ := in["command"].(string)
	if !strings.Contains(line, " sandbox exec ") {
		t.Fatalf("the command was not routed through the sandbox: %s", line)
	}
	bg := exec.Command("bash", "-c", line)
	bg.Dir, bg.Env = w.project, w.env
	bg.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	must(t, bg.Start())
	done := make(chan int, 1)
	go func() {
		err := bg.Wait()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		done <- code
	}()
	defer func() { _ = syscall.Kill(-bg.Process.Pid, syscall.SIGKILL) }()
	for deadline := time.Now().Add(30 * time.Second); size(ticks) < 5; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the background writer never wrote")
		}
	}
	// Claude Code reports a background call as soon as it runs.
	w.hook("PostToolUse", map[string]any{"tool_name": "Bash", "tool_input": in, "tool_use_id": id,
		"tool_response": map[string]any{"stdout": "Command running in background"}})

	w.cli("transition", w.session, "DONE", "--store", w.store)
	if s, _ := w.state(); s != "reviewing" {
		t.Fatalf("state %s, want reviewing", s)
	}
	select {
	case code := <-done:
		if code == 0 {
			t.Errorf("the background command ended with 0")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the background command of working still runs after the run moved to reviewing")
	}
	n := size(ticks)
	time.Sleep(500 * time.Millisecond)
	if size(ticks) != n {
		t.Error("working's loop still writes the project in reviewing")
	}
}

func size(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return fi.Size()
}
