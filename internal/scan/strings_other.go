//go:build !wasm

package scan

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

func notPrintable(ss []string) int {
	for i, s := range ss {
		for j := 0; j < len(s); j++ {
			if c := s[j]; c < 0x20 || c > 0x7e {
				return i
			}
		}
	}
	return -1
}
