//go:build !wasm

package strscan

import "strings"

func (x *Suffix) index(ss []string, out []int32) int {
	n := 0
	for i, s := range ss {
		if strings.HasSuffix(s, x.s) {
			out[n] = int32(i)
			n++
		}
	}
	return n
}
