//go:build wasm

package scan

func (x *Suffix) index(ss []string, out []int32) int {
	return suffixIndexWord(ss, x.s, out, x.w, x.m)
}

// suffixIndexWord is Suffix.Index with suffixWord's w and m
// (strings_wasm.s).
//
//go:noescape
func suffixIndexWord(ss []string, suffix string, out []int32, w, m uint64) int

// notPrintable is NotPrintable (strings_wasm.s).
//
//go:noescape
func notPrintable(ss []string) int
