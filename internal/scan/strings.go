package scan

// Suffix finds the strings that end with one suffix. Make it once with
// NewSuffix and use it for many slices.
type Suffix struct {
	s    string
	w, m uint64 // under GOARCH=wasm: suffixWord's
}

// NewSuffix returns the finder of strings ending with s.
func NewSuffix(s string) *Suffix {
	x := &Suffix{s: s}
	x.w, x.m = suffixWord(s)
	return x
}

// Index writes to out the index of every string of ss that ends with the
// suffix, in order, and returns how many it wrote. out must be at least as
// long as ss (it panics otherwise).
func (x *Suffix) Index(ss []string, out []int32) int {
	if len(out) < len(ss) {
		panic("scan: Suffix.Index: out is shorter than ss")
	}
	return x.index(ss, out)
}

// suffixWord packs a suffix of 1 to 8 bytes into the top bytes of a
// little-endian word (its last byte in the top byte), with the mask of
// those bytes: a string s of 8 bytes or more ends with the suffix when the
// 8-byte load of its last 8 bytes, masked, equals w. m is 0 for an empty
// suffix or one longer than 8 bytes (compared byte by byte).
func suffixWord(suffix string) (w, m uint64) {
	if len(suffix) == 0 || len(suffix) > 8 {
		return 0, 0
	}
	for j := 0; j < len(suffix); j++ {
		shift := 8 * uint(7-j)
		w |= uint64(suffix[len(suffix)-1-j]) << shift
		m |= 0xff << shift
	}
	return w, m
}

// NotPrintable returns the index of the first string of ss holding a byte
// outside printable ASCII (0x20 to 0x7e), or -1 when every byte of every
// string is printable ASCII (glob prints such paths as they are).
func NotPrintable(ss []string) int { return notPrintable(ss) }
