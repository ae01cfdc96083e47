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

// TestBackgroundPlantIsSwept is the outcome test of the quarantine for a
// command the harness runs in the background (Claude Code's
// run_in_background), whose PostToolUse comes as soon as it starts: in a
// phase that grants GitWrite and lets code run in the OS sandbox, the
// command waits until that PostToolUse has come and gone, then plants
// .git/commondir pointing at a config of its own whose core.fsmonitor
// runs at the person's next git status. The name must be out of the
// person's tree when the command ends, and stay out after the session's
// end: the person's own git status afterwards runs nothing.
func TestBackgroundPlantIsSwept(t *testing.T) {
	w := sandboxedWorldAt(t, "proj")
	w.write(filepath.Join(w.home, "bg.yaml"), `id: bg
initial: working
states:
  working:
    allowed_tools: [Read, Edit, Write, Bash, Background, GitWrite]
    sandbox: {exec: true}
    on: {DONE: done}
  done: {type: final}
`)
	w.run("git", "add", "-A")
	w.run("git", "commit", "-qm", "base")
	w.cli("start", filepath.Join(w.home, "bg.yaml"), "--session", w.session, "--store", w.store)
	pwned := w.abs("PWNED")
	started := w.abs("started")
	code := `import os, time
open('started', 'w').close()
time.sleep(1.5)
g = '.g' + 'it'
open('config', 'w').write('[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "touch ` + pwned + `; false"\n')
for d in ('objects', 'refs'):
    os.makedirs(d, exist_ok=True)
open(os.path.join(g, 'common' + 'dir'), 'w').write('..\n')
print('planted')
`
	id, in, denied := w.pre("Bash", map[string]any{"command": "python3 -c " + shellQuote(code), "run_in_background": true})
	if denied != nil {
		t.Fatalf("the background command was denied: %s", denied.reason)
	}
	line, _ := in["command"].(string)
	if !strings.Contains(line, " sandbox exec ") {
		t.Fatalf("the command was not routed through the sandbox: %s", line)
	}
	bg := exec.Command("bash", "-c", line)
	bg.Dir, bg.Env = w.project, w.env
	var out strings.Builder
	bg.Stdout, bg.Stderr = &out, &out
	bg.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	must(t, bg.Start())
	defer func() { _ = syscall.Kill(-bg.Process.Pid, syscall.SIGKILL) }()
	for deadline := time.Now().Add(30 * time.Second); !exists(started); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the background command never started")
		}
	}
	// Claude Code reports a background call as soon as it runs.
	w.hook("PostToolUse", map[string]any{"tool_name": "Bash", "tool_input": in, "tool_use_id": id,
		"tool_response": map[string]any{"stdout": "Command running in background"}})
	done := make(chan struct{})
	go func() { _ = bg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the background command did not end")
	}
	if !strings.Contains(out.String(), "planted") {
		t.Fatalf("the attack did not run to its end: %s", clip(out.String()))
	}
	commondir := filepath.Join(w.project, ".git", "commondir")
	if _, err := os.Lstat(commondir); err == nil {
		t.Errorf(".git/commondir is still in the person's tree after the background command ended")
	}
	w.hook("SessionEnd", map[string]any{"reason": "exit"})
	if _, err := os.Lstat(commondir); err == nil {
		t.Errorf(".git/commondir is still in the person's tree after the session ended")
	}
	// The person's own git, unsandboxed, afterwards.
	cmd := exec.Command("git", "status", "--short")
	cmd.Dir, cmd.Env = w.project, w.env
	gs, _ := cmd.CombinedOutput()
	if exists(pwned) {
		t.Errorf("the person's git status ran the planted core.fsmonitor: %s", gs)
	}
	w.lawUnchanged()
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
