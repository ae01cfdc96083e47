package cmdutil

import (
	"os"
	"runtime"
	"syscall"
)

// LongLivedTimerSlack is the timer slack of statewright's long-lived
// servers (the decider, serve) on Linux.
const LongLivedTimerSlack = 1_000_000 // ns

// slackExecEnv marks a process WidenTimerSlack re-executed.
const slackExecEnv = "STATEWRIGHT_SLACK_EXEC"

// WidenTimerSlack runs a long-lived server with a timer slack of 1 ms
// instead of the usual 50 µs, re-executing the process once (same
// binary, argv and pid) when its slack is smaller. Call it before the
// command does anything it must not do twice (open a listener, a store).
//
// The Go runtime's monitor thread (sysmon) sleeps 20 µs, plus the
// thread's slack, between rounds while any P runs; only after 50 rounds
// in a row with nothing to do does it sleep longer. A process that goes
// idle puts it to sleep, and the next system call wakes it back to 20 µs,
// so a server that goes idle and busy many times a second keeps it near
// 20 µs + 50 µs: in the decider a dozen context switches per hook; in a
// serve replica at 50 sessions 0.76 monitor sleeps per decision, and 1.49
// per decision over two replicas sharing the cores, each idle more often
// (bench/postgres.txt). With 1 ms of slack it polls about once per
// millisecond. A thread's slack is inherited by the threads it starts,
// and sysmon starts before main, so only a process started with the slack
// has it everywhere. These servers wait on nothing that needs finer
// timers: their budgets and the stores' waits are in milliseconds or
// more. The processes such a server starts (an upstream MCP server, a
// sandboxed command) inherit the slack: their timers may fire up to 1 ms
// late. The environment marker guards against a loop where the kernel
// does not keep the value (the re-executed process removes it from its
// environment); any failure leaves the process running as it was.
func WidenTimerSlack() {
	const prSetTimerslack, prGetTimerslack = 29, 30
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	reexecuted := os.Getenv(slackExecEnv) != ""
	if reexecuted {
		// Not for the processes this one starts (they inherit the slack).
		os.Unsetenv(slackExecEnv)
	}
	cur, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prGetTimerslack, 0, 0)
	if e != 0 || cur >= LongLivedTimerSlack || reexecuted {
		return
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerslack, LongLivedTimerSlack, 0); e != 0 {
		return
	}
	env := append(os.Environ(), slackExecEnv+"=1")
	err := syscall.Exec("/proc/self/exe", os.Args, env)
	// Not re-executed: run as it is, with the old slack on this thread.
	_ = err
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerslack, cur, 0)
}
