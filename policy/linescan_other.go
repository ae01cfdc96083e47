//go:build !amd64

package policy

// blockScan is set where plainBlocks reads 64 bytes a step (amd64 with
// AVX2 only).
var blockScan = false

// plainBlocks reads nothing here: plainWords reads eight bytes a step.
func plainBlocks(s string, j, nl, limit int) (k, nlOut int, endNL, carry bool) {
	return 0, nl, false, false
}
