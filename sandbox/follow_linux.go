package sandbox

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Commands with a bubblewrap of their own follow the phase too
// (docs/sandbox.md, "Commands with a bubblewrap of their own").
//
// A test command the observer watches, a command of a phase whose network
// goes through the proxy, and the fallback when the phase's server cannot
// start run under a bubblewrap of their own, not the server's. Each is
// recorded in the session's commands directory in the server directory
// (hidden in every sandbox, as the servers' records): the bubblewrap's
// PID, its start time and the profile's phase. Whatever stops the
// session's server of a phase the run left (the hooks at every decision,
// the watcher, the session's end: StopServerUnless) kills these too:
// bubblewrap is their PID namespace's parent and runs with
// --die-with-parent, so its death takes PID 1 of the namespace, and with
// it every process the command left (a harness's background command, a
// setsid daemon). The launcher that waits for such a command also runs the
// profile's watcher for as long as it runs (Launch), so a transition made
// anywhere stops it as soon as the store has it, with or without a server.

// commandRecord is one per-command bubblewrap of a session.
type commandRecord struct {
	Phase string `json:"phase"`
	Start string `json:"start"`
}

// commandsDir is the directory of a session's per-command bubblewraps.
func commandsDir(srv, sess string) string { return filepath.Join(srv, sess+".cmds") }

// registerCommand records bubblewrap pid, running a command of phase for
// the session of callDir. unregister removes the record and reports
// whether it was still there: false when a stop (stopCommands) killed the
// command because the run left its phase.
func registerCommand(callDir, phase string, pid int) (unregister func() (stopped bool), err error) {
	srv, sess := sessionPaths(callDir)
	dir := commandsDir(srv, sess)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	b, _ := json.Marshal(commandRecord{Phase: phase, Start: procStart(pid)})
	name := filepath.Join(dir, strconv.Itoa(pid))
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, name); err != nil {
		_ = os.Remove(tmp)
		return nil, err
	}
	return func() bool {
		return !os.IsNotExist(os.Remove(name))
	}, nil
}

// stopCommands kills the session's per-command bubblewraps whose phase is
// not *keep (every one when keep is nil) and removes their records, and
// the records of commands that have ended.
func stopCommands(srv, sess string, keep *string) {
	dir := commandsDir(srv, sess)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return // none ran: the common case, one failed open
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 1 {
			continue
		}
		name := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(name)
		var rec commandRecord
		if err != nil || json.Unmarshal(b, &rec) != nil || rec.Start == "" {
			continue
		}
		if !alive(pid, rec.Start) {
			_ = os.Remove(name)
			continue
		}
		if keep != nil && rec.Phase == *keep {
			continue
		}
		// The record goes first: the launcher that waits for the command
		// then knows a stop killed it (unregister), whichever sees it end.
		_ = os.Remove(name)
		// bubblewrap's child is PID 1 of the command's namespace: killed
		// directly, it takes the namespace with it before it is reaped, so
		// nothing of the command runs once this returns. bubblewrap then
		// (and --die-with-parent, had the child been missed).
		procs := [][2]string{{e.Name(), rec.Start}}
		for _, c := range procChildren(pid) {
			if st := procStart(c); st != "" {
				_ = syscall.Kill(c, syscall.SIGKILL)
				procs = append(procs, [2]string{strconv.Itoa(c), st})
			}
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
		waitDead(procs)
	}
}

// procChildren returns the children of process pid's main thread
// (bubblewrap is single-threaded).
func procChildren(pid int) []int {
	s := strconv.Itoa(pid)
	b, err := os.ReadFile("/proc/" + s + "/task/" + s + "/children")
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if c, err := strconv.Atoi(f); err == nil && c > 1 {
			out = append(out, c)
		}
	}
	return out
}

// followPhase makes the command that bubblewrap pid runs for callDir
// follow the phase of p: it records it (registerCommand) and, when p has a
// watcher, makes sure one runs until done is called, so a transition made
// anywhere stops the command as soon as the store has it: while the
// session's server of the same phase lives, its keeper's watcher stops the
// session's commands too (StopServerUnless), so the launcher starts its own
// only when there is none, or once it is gone (checked every second). done
// reports whether a stop killed the command. Where it cannot record the
// command, the command still runs (no stop can find it then; nothing else
// changes): done reports false.
func followPhase(callDir string, p *Profile, pid int) (done func() (stopped bool)) {
	unregister, err := registerCommand(callDir, p.Phase, pid)
	if err != nil {
		return func() bool { return false }
	}
	quit, ended := make(chan struct{}), make(chan struct{})
	var w *exec.Cmd
	go func() {
		defer close(ended)
		if len(p.Watch) == 0 {
			return
		}
		srv, sess := sessionPaths(callDir)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for serverWatches(srv, sess, p.Phase) {
			select {
			case <-quit:
				return
			case <-tick.C:
			}
		}
		w = startWatch(p.Watch)
	}()
	return func() bool {
		close(quit)
		<-ended
		if w != nil {
			_ = w.Process.Kill()
			_ = w.Wait()
		}
		return !unregister()
	}
}

// serverWatches reports whether the session's server of phase runs, with
// the watcher its keeper runs beside it.
func serverWatches(srv, sess, phase string) bool {
	b, err := os.ReadFile(filepath.Join(srv, sess+".json"))
	var r serverRecord
	if err != nil || json.Unmarshal(b, &r) != nil {
		return false
	}
	return r.Phase == phase && alive(r.PID, r.Start)
}

// registerSelf records the launcher itself, about to become bubblewrap
// (execve keeps its PID and start time), as a command of p's phase: the
// hooks' next decision in another phase kills it. The record of a command
// that ended is removed by the next stop.
func registerSelf(callDir string, p *Profile) {
	_, _ = registerCommand(callDir, p.Phase, os.Getpid())
}
