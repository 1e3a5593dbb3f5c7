package tools

import (
	"testing"

	"github.com/bmatcuk/doublestar/v4"
)

// A compiled glob (braces expanded, each alternative on the fast path
// where it can be) must agree with doublestar.Match, its oracle, on every
// pattern and name: the fast path is an optimisation, not a new syntax.
func TestNameMatcherAgreesWithDoublestar(t *testing.T) {
	patterns := []string{
		"*.go", "*_test.go", "Makefile", "*", "x*y*z", "a*a", "*a*", "go.*", ".*", "*.",
		"ab*ba", "a**b", "*.{go,s}", "?.go", "[a-c]*.go", `\*.go`, "*,x", "!x*", "é*", "*.GO",
	}
	names := []string{
		"", "a", "aa", "aba", "main.go", "main_test.go", "_test.go", ".go", "go.mod", "go.", ".",
		"Makefile", "makefile", "xyz", "xaybz", "xzy", "ab", "aba", "abba", "abxba", "abxb",
		"a.go", "b.s", "x.GO", "*.go", "\xff.go", "é.go", "éx", ",x", "!xy", "a/b.go", "dir/",
	}
	for _, p := range patterns {
		g, err := compileGlob(p)
		if err != nil {
			t.Fatalf("compileGlob(%q): %v", p, err)
		}
		for _, n := range names {
			want, _ := doublestar.Match(p, n)
			if got := g.match(n); got != want {
				t.Errorf("compileGlob(%q).match(%q) = %v, doublestar.Match says %v", p, n, got, want)
			}
		}
	}
}
