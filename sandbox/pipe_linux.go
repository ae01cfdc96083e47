package sandbox

import (
	"errors"
	"runtime"
	"syscall"
	"time"
)

// Direct exec of literal pipelines (docs/sandbox.md). A call whose command
// is a pipeline of simple commands of literal words (shell.LiteralPipeline,
// decided by the hook and recorded in profile.json) is run by the server
// without the inner `bash -c`: each element's program found and its
// environment made as for one literal command (directCommand: what bash's
// subshell for the element gives it is the same), connected by pipes as
// bash connects them. bash would start every element even when one cannot
// be executed, and print its error: so no element runs until every
// element's execve has succeeded (the exec gate: each is forked traced,
// stops at its exec before running any instruction of its own, and is
// detached only when all are); when one fails, those stopped are killed and
// the command goes to `bash -c` as before, which prints its own error and
// gives its own status.

// directElem is one element of a pipeline the server runs directly.
type directElem struct {
	path string
	argv []string
	env  []string
	// redirs are its redirections (a list's, runList); ops the same
	// with their files opened, applied after the pipes as bash applies
	// them.
	redirs []Redir
	ops    []fdOp
}

// pipelineCommands returns the programs bash -c would execute for the
// pipeline's elements, with their environments; ok is false whenever
// directCommand is unsure of one.
func pipelineCommands(pipeline [][]string, env []string, cwd string) ([]directElem, bool) {
	elems := make([]directElem, len(pipeline))
	for i, argv := range pipeline {
		path, penv, ok := directCommand(argv, env, cwd)
		if !ok {
			return nil, false
		}
		elems[i] = directElem{path: path, argv: argv, env: penv}
	}
	return elems, true
}

// gateHook, when set (by tests), sees the elements' PIDs once every one
// has been forked and before any is detached.
var gateHook func(pids []int)

// gateWait bounds the wait for an element to reach its stop at exec (it
// is there within microseconds; a process of the phase can kill it
// meanwhile).
const gateWait = time.Second

// startPipeline forks the elements in cwd, stdin (stdio[0]) to the first,
// each one's stdout to the next one's stdin through a pipe, the last one's
// to stdio[1], stderr (stdio[2]) to every one, each in a session of its
// own. It returns their PIDs, running, when every element's execve
// succeeded; ok is false (and nothing of the command ran) otherwise.
// Called with s.mu held: the reaper hands their exits to their waiters
// only once the caller has registered them.
func (s *server) startPipeline(elems []directElem, cwd string, stdio []uintptr) (pids []int, ok bool) {
	// The tracer is the thread that forked: the forks and the detaches
	// are made from one thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// pipes[i] connects element i to element i+1 (close-on-exec: the
	// commands of other calls forked meanwhile do not inherit them).
	pipes := make([][2]int, len(elems)-1)
	defer func() {
		for _, p := range pipes {
			if p[0] > 0 {
				syscall.Close(p[0])
				syscall.Close(p[1])
			}
		}
	}()
	for i := range pipes {
		if err := syscall.Pipe2(pipes[i][:], syscall.O_CLOEXEC); err != nil {
			return nil, false
		}
	}
	for i, e := range elems {
		in, out := stdio[0], stdio[1]
		if i > 0 {
			in = uintptr(pipes[i-1][0])
		}
		if i < len(pipes) {
			out = uintptr(pipes[i][1])
		}
		files := applyOps([3]uintptr{in, out, stdio[2]}, e.ops)
		pid, err := syscall.ForkExec(e.path, e.argv, &syscall.ProcAttr{
			Dir: cwd, Env: e.env, Files: files[:],
			Sys: &syscall.SysProcAttr{Setsid: true, Ptrace: true},
		})
		if err != nil {
			// Those forked are stopped at their exec, before any of
			// their own instructions: killed, they never ran (the
			// reaper collects them; they have no waiter).
			for _, p := range pids {
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
			return nil, false
		}
		pids = append(pids, pid)
	}
	if gateHook != nil {
		gateHook(pids)
	}
	// Every execve succeeded: start them. A detach succeeds once the
	// element is in its stop (ESRCH before it; the reaper passes over
	// the stop's report).
	for _, pid := range pids {
		wait := 20 * time.Microsecond
		for deadline := time.Now().Add(gateWait); ; {
			err := syscall.PtraceDetach(pid)
			if err == nil || !errors.Is(err, syscall.ESRCH) || time.Now().After(deadline) {
				break // else killed meanwhile: its exit goes to its waiter
			}
			// Not stopped yet (a loaded machine has not run it since
			// the fork): wait for the reaper to see a stop, or a while
			// (the reaper may be waiting for s.mu), without spinning.
			t := time.NewTimer(wait)
			select {
			case <-s.stops:
			case <-t.C:
			}
			t.Stop()
			wait = min(2*wait, 2*time.Millisecond)
		}
	}
	return pids, true
}
