package scan

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// foldIndex is IndexFold's specification, byte by byte.
func foldIndex(b []byte, c byte) int {
	l := c | 0x20
	letter := l >= 'a' && l <= 'z'
	for i, x := range b {
		if x == c || letter && x|0x20 == l {
			return i
		}
	}
	return -1
}

// check compares every scan with package bytes (or foldIndex) on every
// suffix of b starting in the first 9 bytes (so each word alignment is
// seen) and for each needle.
func checkBytes(t *testing.T, name string, b []byte, needles []byte) {
	t.Helper()
	for start := 0; start < min(len(b)+1, 9); start++ {
		s := b[start:]
		for _, c := range needles {
			if got, want := IndexByte(s, c), bytes.IndexByte(s, c); got != want {
				t.Fatalf("%s: IndexByte(b[%d:] (%d bytes), %#x) = %d, want %d", name, start, len(s), c, got, want)
			}
			if got, want := Count(s, c), bytes.Count(s, []byte{c}); got != want {
				t.Fatalf("%s: Count(b[%d:] (%d bytes), %#x) = %d, want %d", name, start, len(s), c, got, want)
			}
			if got, want := IndexFold(s, c), foldIndex(s, c); got != want {
				t.Fatalf("%s: IndexFold(b[%d:] (%d bytes), %q) = %d, want %d", name, start, len(s), c, got, want)
			}
		}
	}
}

func TestAgainstBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	cases := []struct {
		name     string
		alphabet string
	}{
		{"two letters", "aA"},
		{"letters and case neighbours", "xX@`[{_\x7f"},
		{"high bytes", "\x00\x80\xff\xfe\x7f\x01"},
		{"text", "the quick brown fox JUMPS over\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for n := 0; n <= 200; n++ {
				for rep := 0; rep < 3; rep++ {
					b := make([]byte, n)
					for i := range b {
						b[i] = tc.alphabet[rng.IntN(len(tc.alphabet))]
					}
					checkBytes(t, tc.name, b, []byte(tc.alphabet+"zZ\x00"))
				}
			}
		})
	}
	t.Run("one match at each position", func(t *testing.T) {
		for n := 1; n <= 100; n++ {
			for at := 0; at < n; at++ {
				b := bytes.Repeat([]byte{'.'}, n)
				b[at] = 'Q'
				checkBytes(t, "single", b, []byte("Qq.\x00"))
				b[at] = 0xff
				checkBytes(t, "single high", b, []byte{0xff, 0x7f, 0xfe})
			}
		}
	})
	t.Run("every byte value", func(t *testing.T) {
		b := append(bytes.Repeat(all, 3), all[:77]...)
		rng.Shuffle(len(b), func(i, j int) { b[i], b[j] = b[j], b[i] })
		checkBytes(t, "all", b, all)
	})
	t.Run("large", func(t *testing.T) {
		b := make([]byte, 1<<16)
		for i := range b {
			b[i] = byte('a' + rng.IntN(26))
		}
		checkBytes(t, "large", b, []byte("qQ!\n"))
		b[len(b)-1] = '!'
		checkBytes(t, "large, last", b, []byte("!"))
	})
}

func FuzzScans(f *testing.F) {
	f.Add([]byte("hello, World\n"), byte('w'))
	f.Add(bytes.Repeat([]byte{0x80}, 70), byte(0))
	f.Fuzz(func(t *testing.T, b []byte, c byte) {
		checkBytes(t, "fuzz", b, []byte{c, c ^ 0x20, 0, '\n'})
	})
}

func BenchmarkScan(b *testing.B) {
	buf := bytes.Repeat([]byte("func (b *Buffer) Write(p []byte) (n int, err error) {\n"), 1<<14)
	b.SetBytes(int64(len(buf)))
	b.Run("IndexByte/absent", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			IndexByte(buf, '#')
		}
	})
	b.Run("IndexFold/absent", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			IndexFold(buf, 'q')
		}
	})
	b.Run("Count/newline", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			Count(buf, '\n')
		}
	})
	b.Run("bytes.IndexByte/absent", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			bytes.IndexByte(buf, '#')
		}
	})
	b.Run("bytes.Count/newline", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			bytes.Count(buf, []byte{'\n'})
		}
	})
}

// nearIndex is IndexNear's specification, byte by byte.
func nearIndex(b []byte, from int, c byte, fold bool, n *Near) int {
	for i := from; i < len(b); i++ {
		x := b[i]
		if !(x == c || fold && c|0x20 >= 'a' && c|0x20 <= 'z' && x|0x20 == c|0x20) {
			continue
		}
		if n != nil && n.Prev != nil && n.PrevDist > 0 && (i < n.PrevDist || !n.Prev[b[i-n.PrevDist]]) {
			continue
		}
		if n != nil && n.Next != nil && n.NextDist > 0 && (i+n.NextDist >= len(b) || !n.Next[b[i+n.NextDist]]) {
			continue
		}
		return i
	}
	return -1
}

func setOf(s string) *[256]bool {
	var t [256]bool
	for i := 0; i < len(s); i++ {
		t[s[i]] = true
	}
	return &t
}

func TestIndexNear(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const alphabet = "AZaz_-x\n\x00\xff"
	nears := []*Near{
		nil,
		{},
		{Prev: setOf("AZ"), PrevDist: 1},
		{Next: setOf("AZ"), NextDist: 1},
		{Prev: setOf("AZaz"), PrevDist: 1, Next: setOf("AZ"), NextDist: 1},
		{Prev: setOf("_"), PrevDist: 3, Next: setOf("x\xff"), NextDist: 5},
		{Prev: setOf(""), PrevDist: 1},  // nothing accepted
		{Prev: setOf("A"), PrevDist: 0}, // distance 0: anything
	}
	for iter := 0; iter < 4000; iter++ {
		b := make([]byte, rng.IntN(140))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		from := rng.IntN(len(b) + 1)
		c := alphabet[rng.IntN(len(alphabet))]
		fold := rng.IntN(2) == 0
		n := nears[rng.IntN(len(nears))]
		if got, want := IndexNear(b, from, c, fold, n), nearIndex(b, from, c, fold, n); got != want {
			t.Fatalf("IndexNear(%q, from %d, %q, fold %v, %+v) = %d, want %d", b, from, c, fold, n, got, want)
		}
	}
}
