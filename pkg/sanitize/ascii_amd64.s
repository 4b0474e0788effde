#include "textflag.h"

// PLAIN sets each byte of V to 0xff where it is plain ASCII (0x20–0x7e, tab, newline), else to 0. The
// constants are in X8 (0x1f), X9 (0x7f), X10 (tab) and X11 (newline) in every byte; T and U are scratch.
// PCMPGTB compares signed bytes, so a byte >= 0x80 is below 0x1f: not printable.
#define PLAIN(V, T, U) \
	MOVO    V, T   \
	PCMPGTB X8, T  \ // T = V > 0x1f
	MOVO    X9, U  \
	PCMPGTB V, U   \ // U = 0x7f > V
	PAND    U, T   \ // printable
	MOVO    V, U   \
	PCMPEQB X10, U \ // tab
	PCMPEQB X11, V \ // newline
	POR     U, V   \
	POR     T, V

// func plainASCII(p []byte) int
TEXT ·plainASCII(SB), NOSPLIT, $0-32
	MOVQ p_base+0(FP), SI
	MOVQ p_len+8(FP), BX
	XORQ AX, AX

	MOVQ       $0x1f1f1f1f1f1f1f1f, DX
	MOVQ       DX, X8
	PUNPCKLQDQ X8, X8
	MOVQ       $0x7f7f7f7f7f7f7f7f, DX
	MOVQ       DX, X9
	PUNPCKLQDQ X9, X9
	MOVQ       $0x0909090909090909, DX
	MOVQ       DX, X10
	PUNPCKLQDQ X10, X10
	MOVQ       $0x0a0a0a0a0a0a0a0a, DX
	MOVQ       DX, X11
	PUNPCKLQDQ X11, X11

	// 64 bytes at a time while they are all plain.
block64:
	LEAQ  64(AX), DX
	CMPQ  DX, BX
	JA    block16
	MOVOU (SI)(AX*1), X0
	MOVOU 16(SI)(AX*1), X1
	MOVOU 32(SI)(AX*1), X2
	MOVOU 48(SI)(AX*1), X3
	PLAIN(X0, X4, X5)
	PLAIN(X1, X6, X7)
	PLAIN(X2, X4, X5)
	PLAIN(X3, X6, X7)
	PAND     X1, X0
	PAND     X3, X2
	PAND     X2, X0
	PMOVMSKB X0, DX
	CMPL     DX, $0xffff
	JNE      block16 // the byte that is not is in these 64: 16 at a time finds it
	ADDQ     $64, AX
	JMP      block64

	// 16 bytes at a time, up to the first that is not plain.
block16:
	LEAQ     16(AX), DX
	CMPQ     DX, BX
	JA       tail
	MOVOU    (SI)(AX*1), X0
	PLAIN(X0, X4, X5)
	PMOVMSKB X0, DX
	XORL     $0xffff, DX
	JNZ      found
	ADDQ     $16, AX
	JMP      block16

found:
	BSFL DX, DX
	ADDQ DX, AX
	MOVQ AX, ret+24(FP)
	RET

	// Fewer than 16 bytes left: one at a time.
tail:
	CMPQ    AX, BX
	JAE     done
	MOVBLZX (SI)(AX*1), DX
	LEAL    -0x20(DX), CX
	CMPL    CX, $0x5f // 0x20–0x7e
	JB      next
	CMPL    DX, $0x09
	JEQ     next
	CMPL    DX, $0x0a
	JNE     done
next:
	INCQ AX
	JMP  tail

done:
	MOVQ AX, ret+24(FP)
	RET
