#include "textflag.h"

// The constants, each byte of a 16-byte vector: 0x1f, 0x7f, tab, newline.
DATA consts<>+0(SB)/8, $0x1f1f1f1f1f1f1f1f
DATA consts<>+8(SB)/8, $0x1f1f1f1f1f1f1f1f
DATA consts<>+16(SB)/8, $0x7f7f7f7f7f7f7f7f
DATA consts<>+24(SB)/8, $0x7f7f7f7f7f7f7f7f
DATA consts<>+32(SB)/8, $0x0909090909090909
DATA consts<>+40(SB)/8, $0x0909090909090909
DATA consts<>+48(SB)/8, $0x0a0a0a0a0a0a0a0a
DATA consts<>+56(SB)/8, $0x0a0a0a0a0a0a0a0a
GLOBL consts<>(SB), RODATA|NOPTR, $64

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

	MOVOU consts<>+0(SB), X8
	MOVOU consts<>+16(SB), X9
	MOVOU consts<>+32(SB), X10
	MOVOU consts<>+48(SB), X11

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

// TEXT sets each byte of V to 0xff where it is printable ASCII or a tab, else to 0 (PLAIN without the
// newline: for ground's blocks a newline is an event). X8–X10 as for PLAIN; T and U are scratch.
#define TEXTBYTES(V, T, U) \
	MOVO    V, T   \
	PCMPGTB X8, T  \
	MOVO    X9, U  \
	PCMPGTB V, U   \
	PAND    U, T   \
	PCMPEQB X10, V \
	POR     T, V

// func eventMask(q []byte) uint64
TEXT ·eventMask(SB), NOSPLIT, $0-32
	MOVQ  q_base+0(FP), SI
	MOVOU consts<>+0(SB), X8
	MOVOU consts<>+16(SB), X9
	MOVOU consts<>+32(SB), X10
	MOVOU (SI), X0
	MOVOU 16(SI), X1
	MOVOU 32(SI), X2
	MOVOU 48(SI), X3
	TEXTBYTES(X0, X4, X5)
	TEXTBYTES(X1, X6, X7)
	TEXTBYTES(X2, X4, X5)
	TEXTBYTES(X3, X6, X7)
	PMOVMSKB X0, AX
	PMOVMSKB X1, BX
	PMOVMSKB X2, CX
	PMOVMSKB X3, DX
	SHLQ     $16, BX
	SHLQ     $32, CX
	SHLQ     $48, DX
	ORQ      BX, AX
	ORQ      DX, CX
	ORQ      CX, AX
	NOTQ     AX
	MOVQ     AX, ret+24(FP)
	RET
