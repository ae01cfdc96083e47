package decidercmd

import (
	"os"
	"runtime"
	"syscall"
)

// deciderSlack is the timer slack the decider runs with.
const deciderSlack = 1_000_000 // ns

// widenTimerSlack runs the decider with a timer slack of 1 ms instead of
// the usual 50 µs, re-executing it once when its slack is smaller. The
// Go runtime's monitor thread (sysmon) polls every 20 µs, plus the
// slack, for about 50 rounds after each wake-up, and every hook wakes
// it: a dozen of the decider's context switches per hook. With 1 ms of
// slack it polls about once per millisecond. A thread's slack is
// inherited by the threads it starts, and sysmon starts before main, so
// only a process started with the slack has it everywhere. The decider
// waits on nothing that needs finer timers (its budgets are in seconds).
// STATEWRIGHT_DECIDER_SLACK_EXEC guards against a loop where the kernel
// does not keep the value.
func widenTimerSlack() {
	const prSetTimerslack, prGetTimerslack = 29, 30
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cur, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prGetTimerslack, 0, 0)
	if e != 0 || cur >= deciderSlack || os.Getenv("STATEWRIGHT_DECIDER_SLACK_EXEC") != "" {
		return
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerslack, deciderSlack, 0); e != 0 {
		return
	}
	env := append(os.Environ(), "STATEWRIGHT_DECIDER_SLACK_EXEC=1")
	err := syscall.Exec("/proc/self/exe", os.Args, env)
	// Not re-executed: run as it is, with the old slack on this thread.
	_ = err
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerslack, cur, 0)
}
