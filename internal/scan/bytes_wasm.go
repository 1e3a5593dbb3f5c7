//go:build wasm

package scan

// IndexByte is bytes.IndexByte.
func IndexByte(b []byte, c byte) int { return indexByte(b, c) }

// Count is bytes.Count(b, []byte{c}).
func Count(b []byte, c byte) int { return countByte(b, c) }

// indexFoldLetter: l is a lower-case ASCII letter; setting bit 0x20 maps
// both cases, and only them, onto it.
func indexFoldLetter(b []byte, l byte) int { return indexMask(b, l, 0x20) }

// indexByte returns the index of the first byte of b equal to c, or -1
// (bytes_wasm.s).
//
//go:noescape
func indexByte(b []byte, c byte) int

// indexMask returns the index of the first byte x of b with x|mask == c,
// or -1 (bytes_wasm.s).
//
//go:noescape
func indexMask(b []byte, c, mask byte) int

// countByte returns how many bytes of b equal c (bytes_wasm.s).
//
//go:noescape
func countByte(b []byte, c byte) int

// indexNear is IndexNear with the fold turned into a mask and both sides
// always tested.
func indexNear(b []byte, from int, c, mask byte, pd, nd int, prev, next *[256]bool) int {
	if mask == 0 {
		return indexNearByte(b, from, c, mask, pd, nd, prev, next)
	}
	return indexNearMask(b, from, c, mask, pd, nd, prev, next)
}

// indexNearByte is indexNear without a mask (bytes_wasm.s).
//
//go:noescape
func indexNearByte(b []byte, from int, c, mask byte, pd, nd int, prev, next *[256]bool) int

// indexNearMask is indexNear with one (bytes_wasm.s).
//
//go:noescape
func indexNearMask(b []byte, from int, c, mask byte, pd, nd int, prev, next *[256]bool) int
