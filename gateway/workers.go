package gateway

import "time"

// workerIdle is how long a worker waits for its next call before it ends.
const workerIdle = 10 * time.Second

// workers runs the fast path's calls on goroutines kept between calls. A
// call's decision runs the store's transaction on the goroutine that asks
// for it, and SQLite's code (modernc.org/sqlite) needs a deep stack: a
// fresh goroutine per call grew its stack from the minimum, copying it
// several times, on every call (about a tenth of the gateway's CPU per call
// in BenchmarkCallProxied's profile). A goroutine that answered a call
// keeps its stack for the next one. Calls never queue behind one another:
// when no worker is idle, a new one starts.
type workers struct {
	jobs chan func() // unbuffered: a send succeeds only when a worker is idle
}

func newWorkers() *workers { return &workers{jobs: make(chan func())} }

// run runs f on an idle worker, or on a new one.
func (w *workers) run(f func()) {
	select {
	case w.jobs <- f:
	default:
		go w.loop(f)
	}
}

// loop runs f, then the calls handed to it, until it has been idle for
// workerIdle.
func (w *workers) loop(f func()) {
	t := time.NewTimer(workerIdle)
	defer t.Stop()
	for {
		f()
		t.Reset(workerIdle)
		select {
		case f = <-w.jobs:
		case <-t.C:
			return
		}
	}
}
