//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOwnBubblewrapFollowsPhase is the outcome test of the commands that
// run with a bubblewrap of their own instead of the phase's server: a test
// command the observer watches, a phase whose network goes through the
// proxy, and the fallback when the server cannot start (with a watcher,
// the launcher waits; without one, it becomes bubblewrap). Each keeps
// appending to a file of the project in a phase that may write it, with a
// background process left in its sandbox; a stop of the session's
// sandboxes for a narrower phase (what the hooks and the watcher call)
// must kill both: the file stops growing, and where the launcher waits,
// the agent is told why.
func TestOwnBubblewrapFollowsPhase(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script string
		prep   func(*Profile)
		broken bool // the server cannot start
		told   bool // the launcher waits and says why the command died
	}{
		{name: "observed", script: "#observe\n", told: true},
		{name: "proxy", prep: func(p *Profile) { p.Proxy = &NetPolicy{Allow: []string{"example.test"}} }, told: true},
		{name: "fallback with a watcher", broken: true, told: true,
			prep: func(p *Profile) { p.Watch = []string{"/bin/sleep", "600"} }},
		{name: "fallback", broken: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newServerFixture(t)
			ticks := filepath.Join(f.proj, "ticks")
			bgTicks := filepath.Join(f.proj, "bg-ticks")
			loop := func(p string) string { return "while :; do echo x >> " + Quote(p) + "; sleep 0.05; done" }
			script := tc.script + "(" + loop(bgTicks) + ") &\n" + loop(ticks)
			c, outer := f.callWith("implementing", true, script, tc.prep)
			if tc.broken {
				breakServer(t, c)
			}
			cmd := exec.Command("/bin/bash", "-c", outer)
			cmd.Dir = f.proj
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			defer func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }()
			waitFor(t, func() bool { return fileSize(ticks) > 4 && fileSize(bgTicks) > 4 })
			if _, err := os.Stat(filepath.Join(ServerDir(f.root), filepath.Base(f.sess)+".json")); err == nil {
				t.Fatal("a server runs: the command did not take its own bubblewrap")
			}

			// Another decision of the same phase leaves it running.
			same := "implementing"
			StopServerUnless(f.root, f.session, &same)
			if !stillGrows(ticks) {
				t.Fatal("a stop for the same phase killed the command")
			}

			planning := "planning"
			StopServerUnless(f.root, f.session, &planning)
			select {
			case err := <-done:
				if code, _ := ExitStatus(err); code != 128+int(syscall.SIGKILL) {
					t.Errorf("the command ended with %d, want 137", code)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the command of the wider phase still runs after the stop")
			}
			if stillGrows(ticks) || stillGrows(bgTicks) {
				t.Error("the wider phase's loops still write the project")
			}
			if told := strings.Contains(stderr.String(), stoppedMessage); told != tc.told {
				t.Errorf("told %v, want %v; stderr:\n%s", told, tc.told, stderr.String())
			}
			if ents, _ := os.ReadDir(commandsDir(ServerDir(f.root), filepath.Base(f.sess))); len(ents) != 0 {
				t.Errorf("records left: %v", ents)
			}
		})
	}
}

// TestOwnBubblewrapStopsAtSessionEnd: the session's end (StopServer) kills
// a command with a bubblewrap of its own, as it kills the server; a
// command of another session is left alone, and so is a record whose
// process has ended (it is only removed).
func TestOwnBubblewrapStopsAtSessionEnd(t *testing.T) {
	f := newServerFixture(t)
	other := &serverFixture{t: t, a: f.a, exe: f.exe, root: f.root, proj: filepath.Join(f.proj, "sub"), session: f.session + "-other"}
	other.sess = SessionDir(other.root, other.session)
	t.Cleanup(func() { StopServer(other.root, other.session) })
	start := func(f *serverFixture, ticks string) chan error {
		c, outer := f.callWith("implementing", true, "while :; do echo x >> "+Quote(ticks)+"; sleep 0.05; done", nil)
		breakServer(t, c)
		cmd := exec.Command("/bin/bash", "-c", outer)
		cmd.Dir = f.proj
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		waitFor(t, func() bool { return fileSize(ticks) > 4 })
		return done
	}
	mine, theirs := filepath.Join(f.proj, "ticks"), filepath.Join(other.proj, "ticks")
	done := start(f, mine)
	start(other, theirs)
	// A stale record: a process that has ended.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(commandsDir(ServerDir(f.root), filepath.Base(f.sess)), strconv.Itoa(dead.Process.Pid))
	write(t, stale, `{"phase":"implementing","start":"1"}`)

	StopServer(f.root, f.session)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the command still runs after the session's end")
	}
	if stillGrows(mine) {
		t.Error("the ended session's command still writes")
	}
	if !stillGrows(theirs) {
		t.Error("another session's command was stopped")
	}
	if _, err := os.Stat(stale); err == nil {
		t.Error("the stale record was left")
	}
}
