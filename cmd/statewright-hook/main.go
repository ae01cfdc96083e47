// Command statewright-hook is the thin hook client: the command `statewright
// init` writes into every harness's hooks. It links almost nothing, so it
// starts about as fast as any Go program can. It hands the hook's input to
// the local decider (a long-lived `statewright decider serve` of the same
// install, over a unix socket the agent cannot reach) and returns the
// decider's answer as its own: output, error output, exit code.
//
// When no decider answers in time, it execs the full statewright binary
// beside it with the same arguments and input, within the same deadline,
// and starts a decider for the next hook: it never lets a call through
// because the decider is missing, hung, stale or fake. Anything but a hook
// call (help, a version query) goes straight to the full binary.
//
//	statewright-hook hook HARNESS EVENT [flags]   (as statewright hook ...)
//
// See docs/hooks.md for the protocol and its guarantees.
package main

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/statewright-go/statewright/internal/buildinfo"
	"github.com/statewright-go/statewright/internal/hookwire"
)

func main() {
	start := time.Now()
	args := os.Args[1:]
	if len(args) == 1 && (args[0] == "--version" || args[0] == "version") {
		os.Stdout.WriteString(buildinfo.Get().String() + "\n") // the release's stamp
		return
	}
	bin := fullBinary()
	if !isHookCall(args) {
		execFull(bin, args, nil, false)
	}
	deadline, ok := deadlineOf(args)
	if !ok {
		// A bad --deadline: the full binary answers it, failing closed.
		execFull(bin, args, nil, false)
	}
	input, err := io.ReadAll(io.LimitReader(os.Stdin, hookwire.MaxInputBytes+1))
	if err == nil && len(input) <= hookwire.MaxInputBytes {
		if a := askDecider(bin, args, input, start, deadline); a != nil {
			os.Stdout.Write(a.Stdout)
			io.WriteString(os.Stderr, a.Stderr)
			os.Exit(a.Exit)
		}
	}
	// No decider answered in time: decide in process, within what is left
	// of the deadline.
	left := deadline - time.Since(start)
	execFull(bin, append(args, "--deadline", max(left, time.Millisecond).String()), input, true)
}

// fullBinary is the full statewright binary: beside this one, where init
// found both (an install the agent cannot write, docs/threat-model.md).
func fullBinary() string {
	name := "statewright"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	self, err := os.Executable()
	if err != nil {
		return name // exec fails: exit 127, which the gate's wrapper denies
	}
	if r, err := filepath.EvalSymlinks(self); err == nil {
		self = r
	}
	return filepath.Join(filepath.Dir(self), name)
}

// isHookCall reports whether args are "hook HARNESS EVENT ..." (not a
// request for help).
func isHookCall(args []string) bool {
	return len(args) >= 3 && args[0] == "hook" && args[2] != "-h" && args[2] != "--help"
}

// deadlineOf returns the hook's --deadline (the last one given), or the
// default; ok is false when a value does not parse.
func deadlineOf(args []string) (d time.Duration, ok bool) {
	d = hookwire.DefaultDeadline
	for i := 3; i < len(args); i++ {
		v, found := "", false
		switch a := args[i]; {
		case a == "--deadline" && i+1 < len(args):
			v, found = args[i+1], true
			i++
		case len(a) > 11 && a[:11] == "--deadline=":
			v, found = a[11:], true
		}
		if found {
			x, err := time.ParseDuration(v)
			if err != nil || x <= 0 {
				return 0, false
			}
			d = x
		}
	}
	return d, true
}

// Timing of one hook, from its deadline D: the decider must answer by
// D - reserve, which leaves the full binary the reserve to decide in
// process; the decider's own budget ends a margin earlier, so its answer
// (a deny when it ran out of time) arrives before the client gives up.
func reserveFor(d time.Duration) time.Duration {
	return min(max(d/4, 250*time.Millisecond), 2*time.Second, d/2)
}

func marginFor(d time.Duration) time.Duration {
	return min(max(d/50, 20*time.Millisecond), 200*time.Millisecond)
}

// handshakeFor bounds the connection and the decider's hello: a decider
// that does not greet in this time is taken as hung.
func handshakeFor(d time.Duration) time.Duration {
	return min(max(d/10, 100*time.Millisecond), 500*time.Millisecond)
}
