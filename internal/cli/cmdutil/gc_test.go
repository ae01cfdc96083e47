package cmdutil

import (
	rtdebug "runtime/debug"
	"testing"
)

// TestTuneGC: the long-lived commands raise the collector's target unless the operator set
// GOGC.
func TestTuneGC(t *testing.T) {
	prev := rtdebug.SetGCPercent(100)
	defer rtdebug.SetGCPercent(prev)
	for _, tc := range []struct {
		gogc string
		want int
	}{{"", LongLivedGCPercent}, {"50", 100}} {
		t.Setenv("GOGC", tc.gogc)
		rtdebug.SetGCPercent(100)
		TuneGC()
		if got := rtdebug.SetGCPercent(100); got != tc.want {
			t.Errorf("GOGC=%q: GC percent %d, want %d", tc.gogc, got, tc.want)
		}
	}
}
