#!/usr/bin/env python3
# Generates the package's hand-written WebAssembly in Go's assembler
# syntax, both files:
#   python3 gen_wasm.py    # writes bytes_wasm.s and strings_wasm.s
# then run the differential tests under GOOS=js:
#   PATH="$(go env GOROOT)/lib/wasm:$PATH" GOOS=js GOARCH=wasm go test ./internal/scan/

LO = "$72340172838076673"      # 0x0101010101010101
HI = "$-9187201950435737472"   # 0x8080808080808080
M7 = "$9187201950435737471"    # 0x7f7f7f7f7f7f7f7f


def indent(text, n):
    return "".join("\t" * n + l[1:] + "\n" if l.startswith("\t") else l + "\n" for l in text.splitlines())


def v(off, masked):
    """v = (word at R0+off | R3) ^ R2: a zero byte where the byte matches."""
    s = f"\tGet R0\n\tI32WrapI64\n\tI64Load ${off}\n"
    if masked:
        s += "\tGet R3\n\tI64Or\n"
    return s + "\tGet R2\n\tI64Xor\n"


def rough(off, masked):
    """v - 0x01..01: bit 7 of a byte is set where v's byte is zero, and also
    where it is 0x81 or more (a non-ASCII byte) or just above a zero byte.
    OR-ed over a block, it rules out blocks with no match in few
    instructions; a block it does not rule out is checked exactly."""
    return v(off, masked) + f"\tI64Const {LO}\n\tI64Sub\n"


def exact(off, masked):
    """~(((v & 0x7f..) + 0x7f..) | v | 0x7f..): bit 7 of exactly the zero
    bytes of v (no carry crosses a byte)."""
    return v(off, masked) + f"""	Tee R5
	I64Const {M7}
	I64And
	I64Const {M7}
	I64Add
	Get R5
	I64Or
	I64Const {M7}
	I64Or
	I64Const $-1
	I64Xor
"""


def block_clear(masked):
    """Leaves 1 (i32) when no byte of the 32 at R0 can match."""
    s = rough(0, masked) + rough(8, masked) + "\tI64Or\n" + rough(16, masked) + "\tI64Or\n" + rough(24, masked) + "\tI64Or\n"
    return s + f"\tI64Const {HI}\n\tI64And\n\tI64Eqz\n"


ADVANCE32 = """	Get R0
	I64Const $32
	I64Add
	Set R0
	Get R1
	I64Const $32
	I64Sub
	Set R1
"""

ADVANCE1 = """	Get R0
	I64Const $1
	I64Add
	Set R0
	Get R1
	I64Const $1
	I64Sub
	Set R1
"""


def setup(c_off, mask_off):
    s = f"""	I64Load8U c+{c_off}(FP)
	Set R7
	Get R7
	I64Const {LO}
	I64Mul
	Set R2
"""
    if mask_off is not None:
        s += f"""	I64Load8U mask+{mask_off}(FP)
	Set R8
	Get R8
	I64Const {LO}
	I64Mul
	Set R3
"""
    else:
        s += "\tI64Const $0\n\tSet R8\n"
    return s


def byte_matches():
    """Leaves 1 (i32) when the byte at R0, OR R8, equals R7."""
    return "\tGet R0\n\tI32WrapI64\n\tI64Load8U $0\n\tGet R8\n\tI64Or\n\tGet R7\n\tI64Eq\n"


def index_fn(name, masked):
    args = "b []byte, c, mask byte" if masked else "b []byte, c byte"
    found = ""
    for off in (0, 8, 16, 24):
        found += exact(off, masked) + f"""	Tee R6
	I64Eqz
	I32Eqz
	If
		Get SP
		Get R0
		Get R4
		I64Sub
		I64Const ${off}
		I64Add
		Get R6
		I64Ctz
		I64Const $3
		I64ShrU
		I64Add
		I64Store ret+32(FP)
		RET
	End
"""
    return f"""// func {name}({args}) int
TEXT ·{name}(SB), NOSPLIT, $0-40
	MOVD b_base+0(FP), R0
	MOVD b_len+8(FP), R1
	Get R0
	Set R4
{setup(24, 25 if masked else None)}
	Block
		Loop
			// Fewer than 32 bytes left: the byte loop below.
			Get R1
			I64Const $32
			I64LtU
			BrIf $1
{indent(block_clear(masked), 2)}			I32Eqz
			If
{indent(found, 3)}			End
{indent(ADVANCE32, 2)}			Br $0
		End
	End

	Loop
		Get R1
		I64Eqz
		If
			Get SP
			I64Const $-1
			I64Store ret+32(FP)
			RET
		End
{indent(byte_matches(), 1)}		If
			Get SP
			Get R0
			Get R4
			I64Sub
			I64Store ret+32(FP)
			RET
		End
{indent(ADVANCE1, 1)}		Br $0
	End
	RET
"""


def check():
    """Candidate address in R9: accept it (store its index, return) when
    pd <= i, i+nd < len(b), prev[b[i-pd]] and next[b[i+nd]]."""
    return """	Get R9
	Get R4
	I64Sub
	Get R10
	I64GeU
	Get R9
	Get R4
	I64Sub
	Get R11
	I64Add
	Get R12
	I64LtU
	I32And
	If
		Get R14
		Get R9
		Get R10
		I64Sub
		I32WrapI64
		I64Load8U $0
		I64Add
		I32WrapI64
		I32Load8U $0
		Get R15
		Get R9
		Get R11
		I64Add
		I32WrapI64
		I64Load8U $0
		I64Add
		I32WrapI64
		I32Load8U $0
		I32And
		If
			Get SP
			Get R9
			Get R4
			I64Sub
			I64Store ret+72(FP)
			RET
		End
	End
"""


def near_word(off, masked):
    """Walks the exact matches of the word at R0+off, lowest first."""
    return exact(off, masked) + f"""	Set R6
	Block
		Loop
			Get R6
			I64Eqz
			BrIf $1
			Get R0
			I64Const ${off}
			I64Add
			Get R6
			I64Ctz
			I64Const $3
			I64ShrU
			I64Add
			Set R9
			Get R6
			Get R6
			I64Const $1
			I64Sub
			I64And
			Set R6
""" + indent(check(), 2) + """			Br $0
		End
	End
"""


def near_fn(name, masked):
    words = "".join(near_word(off, masked) for off in (0, 8, 16, 24))
    return f"""// func {name}(b []byte, from int, c, mask byte, pd, nd int, prev, next *[256]bool) int
TEXT ·{name}(SB), NOSPLIT, $0-80
	MOVD b_base+0(FP), R4
	MOVD b_len+8(FP), R12
	MOVD from+24(FP), R5
	MOVD pd+40(FP), R10
	MOVD nd+48(FP), R11
	MOVD prev+56(FP), R14
	MOVD next+64(FP), R15
	Get R4
	Get R5
	I64Add
	Set R0
	Get R12
	Get R5
	I64Sub
	Set R1
{setup(32, 33 if masked else None)}
	Block
		Loop
			Get R1
			I64Const $32
			I64LtU
			BrIf $1
{indent(block_clear(masked), 2)}			I32Eqz
			If
{indent(words, 3)}			End
{indent(ADVANCE32, 2)}			Br $0
		End
	End

	Block
		Loop
			Get R1
			I64Eqz
			BrIf $1
{indent(byte_matches(), 2)}			If
				Get R0
				Set R9
{indent(check(), 3)}			End
{indent(ADVANCE1, 2)}			Br $0
		End
	End
	Get SP
	I64Const $-1
	I64Store ret+72(FP)
	RET
"""


def count_fn():
    cw = ""
    for i, off in enumerate((0, 8, 16, 24)):
        cw += exact(off, False) + "\tI64Popcnt\n" + ("\tI64Add\n" if i else "")
    return f"""// func countByte(b []byte, c byte) int
TEXT ·countByte(SB), NOSPLIT, $0-40
	MOVD b_base+0(FP), R0
	MOVD b_len+8(FP), R1
{setup(24, None)}	I64Const $0
	Set R6

	Block
		Loop
			Get R1
			I64Const $32
			I64LtU
			BrIf $1
{indent(cw, 2)}			Get R6
			I64Add
			Set R6
{indent(ADVANCE32, 2)}			Br $0
		End
	End

	Block
		Loop
			Get R1
			I64Eqz
			BrIf $1
{indent(byte_matches(), 2)}			I64ExtendI32U
			Get R6
			I64Add
			Set R6
{indent(ADVANCE1, 2)}			Br $0
		End
	End
	Get SP
	Get R6
	I64Store ret+32(FP)
	RET
"""


BYTES_HEADER = """// Code generated by gen_wasm.py; DO NOT EDIT. Test every change under
// GOOS=js: bytes_test.go compares these with package bytes.

#include "textflag.h"

// Registers (i64 locals): R0 next unread address, R1 bytes left, R2 c in
// every byte, R3 mask in every byte, R4 start address, R5/R6 scratch,
// R7 c, R8 mask; for indexNear* also R9 candidate address, R10 pd, R11 nd,
// R12 len(b), R14 prev, R15 next.
//
// A byte x matches when (x|mask)^c is zero. Blocks of 32 bytes (four
// words) are first ruled out roughly: (v - 0x01..01) over the words,
// OR-ed, AND 0x80..80 is zero only if no byte of v is zero (it also fires
// for non-ASCII bytes, which the exact test then clears). A block it does
// not rule out is tested word by word with the exact per-byte mask
// ~(((v & 0x7f..) + 0x7f..) | v | 0x7f..), whose lowest set bit is the
// first match (ctz/8).
"""

BYTES_PARTS = [
    index_fn("indexByte", False) + "\n",
    index_fn("indexMask", True) + "\n",
    count_fn() + "\n",
    near_fn("indexNearByte", False) + "\n",
    near_fn("indexNearMask", True),
]

STRINGS_HEADER = """// Code generated by gen_wasm.py; DO NOT EDIT. Test every change under
// GOOS=js: strings_test.go compares Suffix.Index with strings.HasSuffix
// and NotPrintable with a Go loop.

#include "textflag.h"
"""

STRINGS_BODY = """
// Registers (i64 locals): R0 address of the current string header, R1
// strings left, R2 next out address, R3 suffix address, R4 suffix length,
// R5 w, R6 m, R7 string address, R8 string length, R9 index, R10 bytes
// left to compare, R12 matches.

// func suffixIndexWord(ss []string, suffix string, out []int32, w, m uint64) int
TEXT ·suffixIndexWord(SB), NOSPLIT, $0-88
	MOVD ss_base+0(FP), R0
	MOVD ss_len+8(FP), R1
	MOVD suffix_base+24(FP), R3
	MOVD suffix_len+32(FP), R4
	MOVD out_base+40(FP), R2
	MOVD w+64(FP), R5
	MOVD m+72(FP), R6
	I64Const $0
	Set R9
	I64Const $0
	Set R12

	Block
		Loop
			Get R1
			I64Eqz
			BrIf $1

			Get R0
			I32WrapI64
			I64Load $0
			Set R7
			Get R0
			I32WrapI64
			I64Load $8
			Set R8

			// Block $0: leaving it by a branch skips the string.
			Block
				// Shorter than the suffix: no.
				Get R8
				Get R4
				I64LtU
				BrIf $0

				// A suffix of 1 to 8 bytes, a string of 8 or more: one load.
				Get R6
				I64Eqz
				I32Eqz
				Get R8
				I64Const $8
				I64GeU
				I32And
				If
					Get R7
					Get R8
					I64Add
					I64Const $8
					I64Sub
					I32WrapI64
					I64Load $0
					Get R6
					I64And
					Get R5
					I64Ne
					BrIf $1
				Else
					// Byte by byte: s[len-k] against suffix[L-k], k = L..1.
					Get R4
					Set R10
					Block
						Loop
							Get R10
							I64Eqz
							BrIf $1
							Get R7
							Get R8
							I64Add
							Get R10
							I64Sub
							I32WrapI64
							I64Load8U $0
							Get R3
							Get R4
							I64Add
							Get R10
							I64Sub
							I32WrapI64
							I64Load8U $0
							I64Ne
							BrIf $3
							Get R10
							I64Const $1
							I64Sub
							Set R10
							Br $0
						End
					End
				End

				// A match: out[n] = index.
				Get R2
				I32WrapI64
				Get R9
				I64Store32 $0
				Get R2
				I64Const $4
				I64Add
				Set R2
				Get R12
				I64Const $1
				I64Add
				Set R12
			End

			Get R0
			I64Const $16
			I64Add
			Set R0
			Get R9
			I64Const $1
			I64Add
			Set R9
			Get R1
			I64Const $1
			I64Sub
			Set R1
			Br $0
		End
	End

	Get SP
	Get R12
	I64Store ret+80(FP)
	RET

// A byte c is printable ASCII when c-0x20, unsigned, is at most 0x5e.
// Registers: R0 address of the current string header, R1 strings left,
// R2 index, R3 next byte address, R4 end address.

// func notPrintable(ss []string) int
TEXT ·notPrintable(SB), NOSPLIT, $0-32
	MOVD ss_base+0(FP), R0
	MOVD ss_len+8(FP), R1
	I64Const $0
	Set R2

	Block
		Loop
			Get R1
			I64Eqz
			BrIf $1

			Get R0
			I32WrapI64
			I64Load $0
			Tee R3
			Get R0
			I32WrapI64
			I64Load $8
			I64Add
			Set R4

			Block
				Loop
					Get R3
					Get R4
					I64GeU
					BrIf $1
					Get R3
					I32WrapI64
					I64Load8U $0
					I64Const $32
					I64Sub
					I64Const $94
					I64GtU
					If
						Get SP
						Get R2
						I64Store ret+24(FP)
						RET
					End
					Get R3
					I64Const $1
					I64Add
					Set R3
					Br $0
				End
			End

			Get R0
			I64Const $16
			I64Add
			Set R0
			Get R2
			I64Const $1
			I64Add
			Set R2
			Get R1
			I64Const $1
			I64Sub
			Set R1
			Br $0
		End
	End

	Get SP
	I64Const $-1
	I64Store ret+24(FP)
	RET
"""


def write(name, text):
    with open(name, "w") as f:
        f.write(text)


write("bytes_wasm.s", BYTES_HEADER + "\n" + "".join(BYTES_PARTS))
write("strings_wasm.s", STRINGS_HEADER + STRINGS_BODY)
