package scan

import (
	"math/rand"
	"slices"
	"strings"
	"testing"
)

// reference is Suffix.Index written plainly.
func reference(ss []string, suffix string) []int32 {
	var out []int32
	for i, s := range ss {
		if strings.HasSuffix(s, suffix) {
			out = append(out, int32(i))
		}
	}
	return out
}

func checkSuffix(t *testing.T, ss []string, suffix string) {
	t.Helper()
	out := make([]int32, len(ss)+3)
	for i := range out {
		out[i] = -7 // beyond n, out must be left alone
	}
	n := NewSuffix(suffix).Index(ss, out)
	want := reference(ss, suffix)
	if got := out[:n]; !slices.Equal(got, want) {
		t.Fatalf("Index(%q) for suffix %q = %v; want %v", ss, suffix, got, want)
	}
	for _, v := range out[len(want):] {
		if v != -7 {
			t.Fatalf("Index(%q) for suffix %q wrote beyond its matches: %v", ss, suffix, out)
		}
	}
}

// TestSuffixIndex compares Suffix.Index with strings.HasSuffix: under
// GOOS=js that tests the WebAssembly (word and byte paths, suffixes of 0
// to 18 bytes, strings shorter and longer than 8).
func TestSuffixIndex(t *testing.T) {
	names := []string{"", "a", "go", ".go", "a.go", "main.go", "main_test.go", "x_test.go", "go.mod", "gogo", "a.GO",
		"éa.go", "\xff.go", "dir/x.go", "12345678", "012345678", "1234567.go", "abcdefgh.go", ".go.go.go", "\x00\x00"}
	suffixes := []string{"", "o", ".go", "go", "_test.go", "5678", "12345678", "012345678", "x012345678", "a.go.longer.than.8",
		".GO", "\xff.go", "\x00", "é", "a.go", ".mod"}
	cases := []struct {
		name string
		ss   []string
	}{
		{"none", nil},
		{"one", []string{"x.go"}},
		{"all", names},
		{"reversed", func() []string { s := slices.Clone(names); slices.Reverse(s); return s }()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, suf := range suffixes {
				checkSuffix(t, c.ss, suf)
			}
		})
	}
	t.Run("random", func(t *testing.T) {
		r := rand.New(rand.NewSource(1))
		alpha := "ab._/\xff"
		word := func(max int) string {
			b := make([]byte, r.Intn(max+1))
			for i := range b {
				b[i] = alpha[r.Intn(len(alpha))]
			}
			return string(b)
		}
		for range 2000 {
			ss := make([]string, r.Intn(12))
			for i := range ss {
				ss[i] = word(14)
			}
			checkSuffix(t, ss, word(10))
		}
	})
	t.Run("short out panics", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Error("Index with a short out did not panic")
			}
		}()
		NewSuffix("a").Index([]string{"a", "b"}, make([]int32, 1))
	})
}

func BenchmarkSuffixIndex(b *testing.B) {
	ss := make([]string, 4096)
	for i := range ss {
		ss[i] = strings.Repeat("x", i%17) + []string{".go", "_test.go", ".s", ".txt"}[i%4]
	}
	out := make([]int32, len(ss))
	for _, suf := range []string{".go", "_test.go", ".nomatch", "a_long_suffix.go"} {
		b.Run(suf, func(b *testing.B) {
			x := NewSuffix(suf)
			for i := 0; i < b.N; i++ {
				x.Index(ss, out)
			}
		})
	}
}

// TestNotPrintable compares NotPrintable with a plain loop: every single
// byte value in every position, under GOOS=js too.
func TestNotPrintable(t *testing.T) {
	ref := func(ss []string) int {
		for i, s := range ss {
			for j := 0; j < len(s); j++ {
				if s[j] < 0x20 || s[j] > 0x7e {
					return i
				}
			}
		}
		return -1
	}
	cases := [][]string{nil, {}, {""}, {"", ""}, {"a/b.go", "main.go"}, {"~ !", "é"}, {"x", "y\x7f"}, {"ok", "", "tab\t"}}
	for c := 0; c < 256; c++ {
		b := string([]byte{byte(c)})
		cases = append(cases, []string{b}, []string{"abc", "d" + b}, []string{"x" + b + "y", "\x00"})
	}
	for _, ss := range cases {
		if got, want := NotPrintable(ss), ref(ss); got != want {
			t.Errorf("NotPrintable(%q) = %d; want %d", ss, got, want)
		}
	}
}
