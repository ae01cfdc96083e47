// Package person decides whether a process can stand for a person at the
// statewright CLI (approve, deactivate, pause, ...): it must not run inside
// a governed agent's process tree, and its terminal must not be one the
// agent's processes made (script, expect, a Python pty, systemd-run --pty).
//
// The agent is every process descended from a harness. Each hook records
// its harness (the nearest ancestor that is not a shell) in a registry next
// to the store (RegisterHarness); Check then refuses
//
//   - a process with a live registered harness among its ancestors (a
//     test file that execs `statewright approve --token …`, or runs it
//     under `script -qc`);
//   - a process whose ancestry was cut (a parent re-parented to init, as
//     setsid, nohup and double forks do) at a process that started after
//     the earliest live harness: the agent can detach, but not go back in
//     time;
//   - a terminal whose pseudo-terminal master is held by such a process,
//     or by a process in another PID namespace (a sandbox).
//
// This is the strongest check that needs no privilege. It cannot see a
// process the agent asks another service to start (cron, at, systemd-run
// without --pty) when the token channel is used: without the OS sandbox,
// which hides the operator token and the store, same-user secrecy does not
// hold (docs/threat-model.md). On systems without /proc the check only reports
// that it could not look.
package person

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/statewright-go/statewright/internal/rawfile"
)

// ErrAgent is returned (wrapped) when the process or its terminal belongs
// to a governed agent.
var ErrAgent = errors.New("this runs inside an agent's process tree")

// RegistryDir is where the hooks of the store at storePath record their
// harnesses: beside the store (for PostgreSQL, give the state directory).
func RegistryDir(storeDir string) string { return filepath.Join(storeDir, "harnesses") }

// shells are the wrappers a harness runs hooks through.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "fish": true, "ksh": true, "busybox": true}

// RegisterHarness records the calling hook's harness (the nearest ancestor
// that is not a shell) in dir, once per harness process. It is cheap (one
// stat when already recorded) and best effort: an error is returned for
// logging, never to deny.
func RegisterHarness(dir string) error { return RegisterHarnessOf(dir, os.Getpid()) }

// RegisterHarnessOf is RegisterHarness for the hook process hook (the
// local decider registers the harness of the thin client it answers).
func RegisterHarnessOf(dir string, hook int) error {
	p, err := readProc(hook)
	if err != nil {
		return err
	}
	pid := p.ppid
	for i := 0; i < 8 && pid > 1; i++ {
		p, err := readProc(pid)
		if err != nil {
			return err
		}
		if !shells[p.comm] {
			name := filepath.Join(dir, strconv.Itoa(p.pid)+"-"+strconv.FormatUint(p.start, 10))
			if _, err := os.Stat(name); err == nil {
				return nil
			}
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return err
			}
			return os.WriteFile(name, []byte(p.comm+"\n"), 0o600)
		}
		pid = p.ppid
	}
	return nil
}

// harness is a live registered harness process.
type harness struct {
	pid   int
	start uint64
	comm  string
}

// liveHarnesses returns the registered harnesses that still run (same pid
// and start time); stale entries are removed.
func liveHarnesses(dir string) []harness {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []harness
	for _, e := range ents {
		a, b, ok := strings.Cut(e.Name(), "-")
		pid, err1 := strconv.Atoi(a)
		start, err2 := strconv.ParseUint(b, 10, 64)
		if !ok || err1 != nil || err2 != nil {
			continue
		}
		p, err := readProc(pid)
		if err != nil || p.start != start {
			os.Remove(filepath.Join(dir, e.Name()))
			continue
		}
		out = append(out, harness{pid, start, p.comm})
	}
	return out
}

// Check reports whether the current process may act for a person: nil, or
// an error wrapping ErrAgent that says why not. tty is true when the
// person proves themselves by typing at the controlling terminal (then the
// terminal is checked too). registry is the harness registry directory.
func Check(registry string, tty bool) error {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		return nil // no /proc: nothing to look at (documented)
	}
	hs := liveHarnesses(registry)
	if len(hs) == 0 {
		return nil
	}
	if err := agentChain(os.Getpid(), hs, "this command"); err != nil {
		return err
	}
	if !tty {
		return nil
	}
	self, err := readProc(os.Getpid())
	if err != nil {
		return fmt.Errorf("%w: cannot read this process (%v)", ErrAgent, err)
	}
	pts, ok := ptsNumber(self.ttyNr)
	if !ok {
		return nil // a real console or serial line: no master to hold
	}
	holders, foreign := ptyHolders(pts)
	if foreign {
		return fmt.Errorf("%w: the terminal /dev/pts/%d is driven from another PID namespace (a sandbox)", ErrAgent, pts)
	}
	for _, h := range holders {
		if err := agentChain(h, hs, fmt.Sprintf("the terminal /dev/pts/%d (held by pid %d)", pts, h)); err != nil {
			return err
		}
	}
	return nil
}

// agentChain walks pid's ancestry: a registered harness among them, or a
// cut in it after the first harness started, makes it the agent's.
func agentChain(pid int, hs []harness, what string) error {
	var earliest uint64
	for i, h := range hs {
		if i == 0 || h.start < earliest {
			earliest = h.start
		}
	}
	for i := 0; i < 256 && pid > 1; i++ {
		p, err := readProc(pid)
		if err != nil {
			return nil // gone or not ours to read: not provably the agent's
		}
		for _, h := range hs {
			if h.pid == p.pid && h.start == p.start {
				return fmt.Errorf("%w: %s runs under %s (pid %d), a harness governed by statewright", ErrAgent, what, h.comm, h.pid)
			}
		}
		if p.ppid == 1 && p.start > earliest {
			return fmt.Errorf("%w: %s descends from %s (pid %d), which was detached from its parent after the agent started", ErrAgent, what, p.comm, p.pid)
		}
		pid = p.ppid
	}
	return nil
}

// proc is what /proc/PID/stat says about a process.
type proc struct {
	pid, ppid int
	comm      string
	ttyNr     uint64
	start     uint64 // clock ticks after boot
}

func readProc(pid int) (proc, error) {
	// A stat line is well under 1 KiB (a 64-byte name and 50 numbers).
	b, err := rawfile.Read("/proc/"+strconv.Itoa(pid)+"/stat", 0, 1024)
	if err != nil {
		return proc{}, err
	}
	s := string(b)
	open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || close < open {
		return proc{}, fmt.Errorf("bad /proc/%d/stat", pid)
	}
	f := strings.Fields(s[close+1:])
	// f[0] is field 3 (state): ppid is field 4, tty_nr 7, starttime 22.
	if len(f) < 20 {
		return proc{}, fmt.Errorf("short /proc/%d/stat", pid)
	}
	p := proc{pid: pid, comm: s[open+1 : close]}
	p.ppid, _ = strconv.Atoi(f[1])
	p.ttyNr, _ = strconv.ParseUint(f[4], 10, 64)
	p.start, _ = strconv.ParseUint(f[19], 10, 64)
	return p, nil
}

// ptsNumber returns the pseudo-terminal number of a tty_nr (Unix98 ptys
// have majors 136 to 143).
func ptsNumber(ttyNr uint64) (int, bool) {
	major := (ttyNr >> 8) & 0xfff
	minor := (ttyNr & 0xff) | ((ttyNr >> 12) & 0xfff00)
	if major < 136 || major > 143 {
		return 0, false
	}
	return int((major-136)*256 + minor), true
}

// ptyHolders returns the processes that hold the master side of
// /dev/pts/N open (read from /proc/*/fdinfo's tty-index), among those this
// user may inspect. foreign is true when a holder lives in another PID
// namespace than this process.
func ptyHolders(n int) (holders []int, foreign bool) {
	myNS, _ := os.Readlink("/proc/self/ns/pid")
	ents, _ := os.ReadDir("/proc")
	want := "tty-index:\t" + strconv.Itoa(n) + "\n"
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		dir := "/proc/" + e.Name()
		fds, err := os.ReadDir(dir + "/fd")
		if err != nil {
			continue
		}
		for _, fd := range fds {
			t, err := os.Readlink(dir + "/fd/" + fd.Name())
			if err != nil || (t != "/dev/ptmx" && t != "/dev/pts/ptmx") {
				continue
			}
			info, err := os.ReadFile(dir + "/fdinfo/" + fd.Name())
			if err != nil || !strings.Contains(string(info)+"\n", want) {
				continue
			}
			holders = append(holders, pid)
			if ns, _ := os.Readlink(dir + "/ns/pid"); myNS != "" && ns != "" && ns != myNS {
				foreign = true
			}
			break
		}
	}
	return holders, foreign
}
