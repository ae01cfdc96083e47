#include "textflag.h"

// func plainBlocksAVX2(p *byte, n, nl, limit int) (k, nlOut int, endNL, carry bool)
//
// plainBlocks' loop: 64 bytes a step while nl <= limit and a whole block
// is left. Each block's backslashes, quotes, n and u bytes are found as
// 64-bit masks; the escaped bytes follow from the backslashes and the
// escape carried in (simdjson's odd backslash sequences). A block with an
// unescaped quote or an escaped u is not read (k stops before it).
TEXT ·plainBlocksAVX2(SB), NOSPLIT, $0-50
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), DX
	MOVQ nl+16(FP), R12
	MOVQ limit+24(FP), R13
	XORQ BX, BX // k
	XORQ R14, R14 // carry: the byte at k is escaped (0 or 1)
	XORQ R15, R15 // endNL
	MOVQ $0x5c, AX
	VMOVQ AX, X8
	VPBROADCASTB X8, Y8 // '\\'
	MOVQ $0x22, AX
	VMOVQ AX, X9
	VPBROADCASTB X9, Y9 // '"'
	MOVQ $0x6e, AX
	VMOVQ AX, X10
	VPBROADCASTB X10, Y10 // 'n'
	MOVQ $0x75, AX
	VMOVQ AX, X11
	VPBROADCASTB X11, Y11 // 'u'
	MOVQ $0xAAAAAAAAAAAAAAAA, R11 // the odd bits

loop:
	CMPQ R12, R13
	JGT  done
	LEAQ 64(BX), AX
	CMPQ AX, DX
	JGT  done
	VMOVDQU (SI)(BX*1), Y0
	VMOVDQU 32(SI)(BX*1), Y1

	// R8: backslashes
	VPCMPEQB  Y0, Y8, Y2
	VPCMPEQB  Y1, Y8, Y3
	VPMOVMSKB Y2, R8
	VPMOVMSKB Y3, AX
	SHLQ      $32, AX
	ORQ       AX, R8

	// R9: quotes
	VPCMPEQB  Y0, Y9, Y2
	VPCMPEQB  Y1, Y9, Y3
	VPMOVMSKB Y2, R9
	VPMOVMSKB Y3, AX
	SHLQ      $32, AX
	ORQ       AX, R9

	// R10: n bytes
	VPCMPEQB  Y0, Y10, Y2
	VPCMPEQB  Y1, Y10, Y3
	VPMOVMSKB Y2, R10
	VPMOVMSKB Y3, AX
	SHLQ      $32, AX
	ORQ       AX, R10

	// DI: u bytes
	VPCMPEQB  Y0, Y11, Y2
	VPCMPEQB  Y1, Y11, Y3
	VPMOVMSKB Y2, DI
	VPMOVMSKB Y3, AX
	SHLQ      $32, AX
	ORQ       AX, DI

	// AX: potential escapes (backslashes not escaped themselves)
	MOVQ R14, AX
	NOTQ AX
	ANDQ R8, AX
	// CX: escape and terminal code
	MOVQ AX, CX
	SHLQ $1, CX
	ORQ  R11, CX
	SUBQ AX, CX
	XORQ R11, CX
	// AX: escaped bytes
	MOVQ R8, AX
	ORQ  R14, AX
	XORQ CX, AX
	// CX: the carry out (an escape at the block's last byte)
	ANDQ R8, CX
	SHRQ $63, CX

	// An unescaped quote or an escaped u: stop before the block.
	MOVQ  AX, R8
	NOTQ  R8
	ANDQ  R9, R8
	JNE   done
	ANDQ  AX, DI
	JNE   done

	// The escaped n bytes are newlines.
	ANDQ    AX, R10
	POPCNTQ R10, R9
	ADDQ    R9, R12
	SHRQ    $63, R10
	MOVQ    R10, R15
	MOVQ    CX, R14
	ADDQ    $64, BX
	JMP     loop

done:
	VZEROUPPER
	MOVQ BX, k+32(FP)
	MOVQ R12, nlOut+40(FP)
	MOVB R15, endNL+48(FP)
	MOVB R14, carry+49(FP)
	RET
