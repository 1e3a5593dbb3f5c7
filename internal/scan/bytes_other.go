//go:build !wasm

package scan

import "bytes"

// IndexByte is bytes.IndexByte.
func IndexByte(b []byte, c byte) int { return bytes.IndexByte(b, c) }

// Count is bytes.Count(b, []byte{c}).
func Count(b []byte, c byte) int { return bytes.Count(b, []byte{c}) }

// indexFoldLetter: l is a lower-case ASCII letter. Two SIMD scans per
// chunk, the second bounded by the first's hit. Chunks start small and
// double, so a call costs about the distance to its hit even when one case
// is frequent and the other absent (scanning each case over all of b would
// make a loop of calls quadratic), and few calls on a long miss.
func indexFoldLetter(b []byte, l byte) int {
	u := l - 0x20
	for off, size := 0, 128; off < len(b); off, size = off+size, min(2*size, 64<<10) {
		chunk := b[off:min(off+size, len(b))]
		end := len(chunk)
		if i := bytes.IndexByte(chunk, l); i >= 0 {
			end = i
		}
		if j := bytes.IndexByte(chunk[:end], u); j >= 0 {
			return off + j
		}
		if end < len(chunk) {
			return off + end
		}
	}
	return -1
}

// indexNear: the SIMD scan for c (or IndexFold's), then the neighbour test
// per hit.
func indexNear(b []byte, from int, c, mask byte, pd, nd int, prev, next *[256]bool) int {
	for from < len(b) {
		var j int
		if mask != 0 {
			j = indexFoldLetter(b[from:], c)
		} else {
			j = bytes.IndexByte(b[from:], c)
		}
		if j < 0 {
			return -1
		}
		i := from + j
		if i >= pd && i+nd < len(b) && prev[b[i-pd]] && next[b[i+nd]] {
			return i
		}
		from = i + 1
	}
	return -1
}
