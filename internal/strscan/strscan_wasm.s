// Test every change under GOOS=js: strscan_test.go compares
// SuffixIndex with strings.HasSuffix.

#include "textflag.h"

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
