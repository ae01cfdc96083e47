//go:build linux

package outcome

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	bg := w.startBackground("python3 -c " + shellQuote(code))
	if !strings.Contains(bg.line, " sandbox exec ") {
		t.Fatalf("the command was not routed through the sandbox: %s", bg.line)
	}
	for deadline := time.Now().Add(30 * time.Second); !exists(started); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the background command never started")
		}
	}
	// Claude Code reports a background call as soon as it runs.
	bg.reported(w)
	select {
	case <-bg.done:
	case <-time.After(60 * time.Second):
		t.Fatal("the background command did not end")
	}
	if !strings.Contains(bg.out.String(), "planted") {
		t.Fatalf("the attack did not run to its end: %s", clip(bg.out.String()))
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

// TestForkHopperDiesWithItsCommand: code the agent runs in the sandbox
// (a phase that lets code run there, hooks of `init claude-code
// --sandbox`) leaves a process that forks and exits in a loop, in a
// session of its own, so that it is never the process a scan of /proc
// listed when the scan's SIGKILL lands. It must die when its command
// ends, before the command's sweep: afterwards it writes nothing, and the
// harness configuration it plants later (.mcp.json, a name that did not
// exist, which the sandbox cannot bind read-only) never appears, neither
// after the command nor after the session's end. Alone, and beside a
// command the harness runs in the background, which must run on
// undisturbed.
func TestForkHopperDiesWithItsCommand(t *testing.T) {
	for _, beside := range []bool{false, true} {
		t.Run(map[bool]string{false: "alone", true: "beside a background command"}[beside], func(t *testing.T) {
			w := sandboxedWorldAt(t, "proj")
			w.write(filepath.Join(w.home, "bg.yaml"), `id: bg
initial: working
states:
  working:
    allowed_tools: [Read, Edit, Write, Bash, Background]
    sandbox: {exec: true}
    on: {DONE: done}
  done: {type: final}
`)
			w.cli("start", filepath.Join(w.home, "bg.yaml"), "--session", w.session, "--store", w.store)
			mcp := filepath.Join(w.project, ".mcp.json")
			// The agent's program, as `go build` in this phase would make
			// it (built here with the test's Go cache, for time).
			build := exec.Command("go", "build", "-o", w.abs("hop"), "./testdata/hopper")
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("build the hopper: %v: %s", err, out)
			}
			var bg *background
			if beside {
				bg = w.startBackground("sleep 8; echo slept")
				bg.reported(w)
				time.Sleep(time.Second)
			}
			start := time.Now()
			r := w.bash("./hop")
			if !r.allowed || !strings.Contains(r.output, "left") {
				t.Fatalf("the hopper's command did not run: allowed %v: %s %s", r.allowed, r.reason, clip(r.output))
			}
			ticks := w.abs("ticks")
			if size(ticks) == 0 {
				t.Fatalf("the hopper never ran, so nothing was tested")
			}
			n := size(ticks)
			time.Sleep(time.Until(start.Add(5 * time.Second)))
			if m := size(ticks); m != n {
				t.Errorf("the hopper still runs after its command ended (%d -> %d bytes)", n, m)
			}
			if exists(mcp) {
				t.Errorf("%s was planted after the command ended", mcp)
			}
			if beside {
				select {
				case <-bg.done:
					if out := fmt.Sprint(bg.out.String(), bg.err); out != "slept\n<nil>" {
						t.Errorf("the background command was disturbed: %q", out)
					}
				case <-time.After(60 * time.Second):
					t.Errorf("the background command did not end")
				}
			}
			w.hook("SessionEnd", map[string]any{"reason": "exit"})
			if exists(mcp) {
				t.Errorf("%s is there after the session ended", mcp)
			}
			w.lawUnchanged()
		})
	}
}
