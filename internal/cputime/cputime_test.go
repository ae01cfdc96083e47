package cputime

import (
	goruntime "runtime"
	"testing"
	"time"
)

// TestProcessGrows: busy work shows as CPU time, where it is measured.
func TestProcessGrows(t *testing.T) {
	if goruntime.GOOS == "windows" || goruntime.GOOS == "plan9" || goruntime.GOOS == "js" || goruntime.GOOS == "wasip1" {
		t.Skip("SKIPPED, not passed: no CPU time on this platform")
	}
	t0 := Process()
	x := 0
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
		x++
	}
	if d := Process() - t0; d <= 0 {
		t.Errorf("50 ms of busy work took %v of CPU time (x=%d)", d, x)
	}
}
