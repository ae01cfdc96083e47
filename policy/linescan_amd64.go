package policy

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// blockScan is set where plainBlocks reads 64 bytes a step (AVX2;
// tests turn it off to compare).
var blockScan = cpu.X86.HasAVX2 && cpu.X86.HasPOPCNT

// plainBlocksAVX2 is plainBlocks' loop over the n bytes at p.
//
//go:noescape
func plainBlocksAVX2(p *byte, n, nl, limit int) (k, nlOut int, endNL, carry bool)

// plainBlocks is plainWords' reading of s[j:] 64 bytes a step, for as
// long as it can: see plainBlocksAVX2.
func plainBlocks(s string, j, nl, limit int) (k, nlOut int, endNL, carry bool) {
	if !blockScan || len(s)-j < 64 {
		return 0, nl, false, false
	}
	return plainBlocksAVX2(unsafe.StringData(s[j:]), len(s)-j, nl, limit)
}
