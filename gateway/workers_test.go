package gateway

import (
	"testing"
	"time"
)

// TestWorkersDoNotQueue: a call handed to the workers runs at once even
// while every worker is busy, and an idle worker takes the next call.
func TestWorkersDoNotQueue(t *testing.T) {
	w := newWorkers()
	release := make(chan struct{})
	started := make(chan int, 3)
	w.run(func() { started <- 1; <-release })
	<-started
	// The first worker is busy: the second call must not wait for it.
	w.run(func() { started <- 2 })
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("a call waited for a busy worker")
	}
	close(release)
	// Both workers are idle or ending: a third call runs too.
	w.run(func() { started <- 3 })
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("a call handed to an idle worker did not run")
	}
}
