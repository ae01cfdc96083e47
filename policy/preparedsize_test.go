package policy

import (
	"testing"
	"unsafe"
)

// TestPreparedSize holds prepared, which every decision zeroes on its
// stack, within the size the Go compiler (1.26, amd64) zeroes with a
// loop of vector stores (its repZeroThreshold); one word more and it is
// zeroed with REP STOSQ, which cost a denied decision tens of ns (bench/
// policy.txt, deny8). A field added past the limit fails here: make room
// (its flags share one word, as lazyFlat's states do) or take the cost
// knowingly and change the limit with a measurement.
func TestPreparedSize(t *testing.T) {
	const limit = 1408
	if n := unsafe.Sizeof(prepared{}); n > limit {
		t.Errorf("prepared is %d bytes, more than %d", n, limit)
	}
}
