//go:build linux

package outcome

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/statewright-go/statewright/store/postgres/pgtest"
)

// TestPhaseChangeElsewhereStopsTheSandbox is the outcome test of a
// transition made outside the agent's hooks: a command the harness runs in
// the background (Claude Code's run_in_background) keeps appending to a
// file of the project in a phase that may write it, and leaves a process
// of its own doing the same; a person moves the run to a phase that may
// not, with the CLI; no hook event follows. The command and its process
// must die, the files stop growing and the agent be told why, whichever
// sandbox the command runs in: the phase's server (stopped by its
// watcher), or a bubblewrap of its own (stopped by the watcher its
// launcher runs beside it): a test command the observer watches, a phase
// whose network goes through the proxy. On SQLite, and on PostgreSQL,
// whose watcher follows notifications instead of polling.
func TestPhaseChangeElsewhereStopsTheSandbox(t *testing.T) {
	for _, path := range []string{"server", "observed", "proxy", "observed beside a server"} {
		t.Run(path, func(t *testing.T) { phaseChangeElsewhere(t, sandboxedWorldAt(t, "proj"), path) })
	}
	t.Run("postgres", func(t *testing.T) {
		for _, path := range []string{"server", "observed"} {
			t.Run(path, func(t *testing.T) { phaseChangeElsewhere(t, sandboxedWorldStore(t, "proj", pgtest.Schema(t)), path) })
		}
	})
}

// phaseChangeElsewhere runs TestPhaseChangeElsewhereStopsTheSandbox's
// story in w, with the background command on path.
func phaseChangeElsewhere(t *testing.T, w *world, path string) {
	// A phase that lets commands run in the background (the bundled
	// templates grant Background nowhere), and a narrower one after it.
	domains := ""
	if path == "proxy" {
		// Its network goes through statewright's proxy: commands take a
		// bubblewrap of their own, the proxy beside them.
		domains = "\n    allowed_domains: [example.com]"
	}
	w.write(filepath.Join(w.home, "bg.yaml"), `id: bg
initial: working
states:
  working:
    allowed_tools: [Read, Edit, Write, Bash, Background]`+domains+`
    on: {DONE: reviewing}
  reviewing:
    allowed_tools: [Read, Bash]
    on: {BACK: working, OK: done}
  done: {type: final}
`)
	w.cli("start", filepath.Join(w.home, "bg.yaml"), "--session", w.session, "--store", w.store)
	ticks, bgTicks := w.abs("ticks"), w.abs("bg-ticks")
	loop := func(p string) string { return "while :; do echo x >> " + shellQuote(p) + "; sleep 0.05; done" }
	command := "(" + loop(bgTicks) + ") & " + loop(ticks)
	var env []string
	if strings.HasPrefix(path, "observed") {
		// A plain test command, which the launcher runs watched: the
		// runner here is a go of the test's that writes instead of testing.
		fake := w.abs(".bin") // in the project: the rest of /tmp is not visible inside
		w.write(filepath.Join(fake, "go"), "#!/bin/sh\n"+command+"\n")
		must(t, os.Chmod(filepath.Join(fake, "go"), 0o755))
		env = []string{"PATH=" + fake + ":" + os.Getenv("PATH")}
		command = "go test ./..."
	}
	if path == "observed beside a server" {
		// A command first: the phase's server runs, and its keeper's
		// watcher stops the observed command too (its launcher starts no
		// watcher of its own then).
		if r := w.bash("true"); !r.allowed {
			t.Fatalf("true was denied: %s", r.reason)
		}
	}
	bg := w.startBackground(command, env...)
	if !strings.Contains(bg.line, " sandbox exec ") {
		t.Fatalf("the command was not routed through the sandbox: %s", bg.line)
	}
	for deadline := time.Now().Add(60 * time.Second); size(ticks) < 5 || size(bgTicks) < 5; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the background writer never wrote; its output:\n%s", bg.out.String())
		}
	}
	// Which sandbox it runs in: a server is recorded only on that path.
	servers, _ := filepath.Glob(filepath.Join(w.home, ".cache", "statewright", "sandbox", "srv", "*.json"))
	if (len(servers) > 0) != (path == "server" || path == "observed beside a server") {
		t.Fatalf("servers %v on the %s path", servers, path)
	}
	// Claude Code reports a background call as soon as it runs.
	bg.reported(w)

	w.cli("transition", w.session, "DONE", "--store", w.store)
	if s, _ := w.state(); s != "reviewing" {
		t.Fatalf("state %s, want reviewing", s)
	}
	select {
	case <-bg.done:
		if bg.exitCode() == 0 {
			t.Errorf("the background command ended with 0")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the background command of working still runs after the run moved to reviewing")
	}
	n, m := size(ticks), size(bgTicks)
	time.Sleep(500 * time.Millisecond)
	if size(ticks) != n || size(bgTicks) != m {
		t.Error("working's loops still write the project in reviewing")
	}
	if !strings.Contains(bg.out.String(), "the phase's sandbox stopped while the command ran") {
		t.Errorf("the agent is not told why its command died; its output:\n%s", bg.out.String())
	}
}

func size(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return fi.Size()
}
