package digest

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"testing"
)

// Every length up to three blocks (each padding case: the length field in
// the last block or in one more), then random sizes, against crypto/sha256.
func TestSum256MatchesCryptoSHA256(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	check := func(b []byte) {
		t.Helper()
		if got, want := sum256(b), sha256.Sum256(b); got != want {
			t.Fatalf("len %d: Sum256 %x, crypto/sha256 %x", len(b), got, want)
		}
	}
	for n := 0; n <= 192; n++ {
		check(buf[:n])
	}
	for range 200 {
		n := r.IntN(len(buf))
		off := r.IntN(len(buf) - n + 1)
		check(buf[off : off+n])
	}
	check(buf)
	// A published vector: FIPS 180-2's "abc".
	if got := Sum256([]byte("abc")); got != [32]byte{0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22, 0x23, 0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad} {
		t.Fatalf("abc: %x", got)
	}
	// Its two-block example (the length field spills into a second block).
	if got := fmt.Sprintf("%x", Sum256([]byte("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"))); got != "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" {
		t.Fatalf("two-block example: %s", got)
	}
}

func BenchmarkSum256(b *testing.B) {
	buf := make([]byte, 64<<10)
	b.SetBytes(int64(len(buf)))
	b.Run("digest", func(b *testing.B) {
		for b.Loop() {
			sum256(buf)
		}
	})
	b.Run("crypto", func(b *testing.B) {
		for b.Loop() {
			sha256.Sum256(buf)
		}
	})
}
