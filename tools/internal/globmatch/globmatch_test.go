package globmatch

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/tools/internal/work"
	"github.com/bmatcuk/doublestar/v4"
)

// Compile expands braces up front; the expansion must match exactly
// the names doublestar.Match matches, on random patterns built from every
// piece of the syntax (nested and sequential braces, empty alternatives,
// classes holding ',' '{' '}', '*', '**', '?', '/') and random names.
func TestCompileGlobAgreesWithDoublestar(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "b", ".", "/", "*", "**", "?", "[ab]", "[!a]", "[,]", "[{]", "[}]", ","}
	var gen func(depth int) string
	gen = func(depth int) string {
		var b strings.Builder
		for range r.IntN(5) {
			if depth < 3 && r.IntN(4) == 0 {
				b.WriteByte('{')
				for k := range 1 + r.IntN(3) {
					if k > 0 {
						b.WriteByte(',')
					}
					b.WriteString(gen(depth + 1))
				}
				b.WriteByte('}')
				continue
			}
			p := pieces[r.IntN(len(pieces))]
			if p == "," && depth > 0 {
				p = "[,]" // a bare ',' inside braces separates alternatives
			}
			b.WriteString(p)
		}
		return b.String()
	}
	names := []string{""}
	for range 60 {
		var b strings.Builder
		for range r.IntN(7) {
			b.WriteString([]string{"a", "b", ".", "/", ",", "{", "}", "ab", "a/b"}[r.IntN(9)])
		}
		names = append(names, b.String())
	}
	n, quirks := 0, 0
	for range 3000 {
		p := gen(0)
		if !doublestar.ValidatePattern(p) {
			t.Fatalf("generated an invalid pattern %q", p)
		}
		g, err := Compile(p)
		if err != nil {
			if strings.Contains(err.Error(), "the limit is") {
				continue // a generated pattern past a limit (rare)
			}
			t.Fatalf("Compile(%q): %v", p, err)
		}
		alts := substitute(p)
		for _, name := range names {
			want := false
			for _, a := range alts {
				ok, _ := doublestar.Match(a, name)
				want = want || ok
			}
			if got := g.Match(name); got != want {
				t.Fatalf("Compile(%q).match(%q) = %v, doublestar.Match on its expansions says %v (alternatives %v)", p, name, got, want, altsOf(g))
			}
			if direct, _ := doublestar.Match(p, name); direct != want {
				if direct {
					t.Fatalf("doublestar.Match(%q, %q) is true, its expansions %v say false", p, name, alts)
				}
				quirks++ // a miss only: see substitute
			}
			if want {
				n++
			}
		}
	}
	if n < 1000 {
		t.Fatalf("only %d matches among the comparisons: the generator lost its reach", n)
	}
	t.Logf("%d matches; doublestar.Match on the unexpanded pattern differed %d times (its end-of-name quirk)", n, quirks)
}

// substitute expands braces the way doublestar.Match treats them (the
// first '{' replaced by each of its alternatives in turn, recursively),
// written independently of Compile. doublestar.Match itself differs
// from its own expansion in one corner: when the name runs out, the rest
// of the pattern counts as empty only if it is literally "*", "**", "/**"
// and the like, or starts with '{', so `a*{,b}` does not match "a" though
// its expansion `a*` does. A brace is a set of alternatives (bash, and
// glob's description), so Compile follows the expansion.
func substitute(p string) []string {
	open := -1
	for i := 0; i < len(p) && open < 0; i++ {
		switch p[i] {
		case '[':
			i += strings.IndexByte(p[i+1:], ']') + 1
		case '{':
			open = i
		}
	}
	if open < 0 {
		return []string{p}
	}
	var commas []int // top-level commas of the group, then its closing '}'
	for i, depth := open+1, 0; ; i++ {
		switch p[i] {
		case '[':
			i += strings.IndexByte(p[i+1:], ']') + 1
		case '{':
			depth++
		case ',':
			if depth == 0 {
				commas = append(commas, i)
			}
		case '}':
			if depth == 0 {
				var out []string
				start := open + 1
				for _, c := range append(commas, i) {
					out = append(out, substitute(p[:open]+p[start:c]+p[i+1:])...)
					start = c + 1
				}
				return out
			}
			depth--
		}
	}
}

func altsOf(g *Pattern) []string {
	var out []string
	for _, m := range g.alts {
		out = append(out, m.pattern)
	}
	return out
}

// Each limit refuses the pattern with a message naming it, and a pattern
// just inside every limit compiles and matches quickly: the expansions'
// work is bounded by construction.
func TestCompileGlobLimits(t *testing.T) {
	nest := func(d int) string { // {a,{a,{a,...}}} d deep
		return strings.Repeat("{a,", d) + "b" + strings.Repeat("}", d)
	}
	refused := []struct {
		name, pattern, want string
	}{
		{"too long", strings.Repeat("a", maxGlobBytes+1), "the limit is 1024 bytes"},
		{"nested too deep", nest(maxBraceDepth + 1), "nests braces 9 deep; the limit is 8"},
		{"braces in sequence", strings.Repeat("{a,a}", 11) + "x", "more than 1024 alternatives"},
		{"nested and in sequence", strings.Repeat("{{a,b},{c,{d,e}}}", 5) + "x", "more than 1024 alternatives"},
		{"** plus braces", "**/" + strings.Repeat("{*a,*b}", 12) + "/x", "more than 1024 alternatives"},
		{"wide braces in sequence", strings.Repeat("{a,b,c,d,e,f,g,h}", 4), "more than 1024 alternatives"},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Compile(c.pattern); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Compile: %v; want an error saying %q", err, c.want)
			}
		})
	}
	accepted := []string{
		nest(maxBraceDepth),
		strings.Repeat("{a,a}", 10) + "x",            // 1024 alternatives (one distinct)
		"**/" + strings.Repeat("{*a,*b}", 10) + "/x", // 1024 distinct alternatives
		strings.Repeat("*{a,b}", 5) + strings.Repeat("*{a,*a}", 5) + "x",
		"{" + strings.Repeat("a*,", 300) + "b}",
	}
	name := strings.Repeat("a", 200) + "/" + strings.Repeat("ab", 100)
	for _, p := range accepted {
		t.Run(fmt.Sprintf("%.40s", p), func(t *testing.T) {
			g, err := Compile(p)
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			start := time.Now()
			want := g.Match(name)
			// A bound with room on a machine 3x as busy: doublestar on the
			// unexpanded sequential patterns takes minutes.
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("one match took %v", d)
			}
			// The metered match agrees, and stops inside one name's
			// alternatives once its context is done.
			if got, err := g.MatchIn(work.New(context.Background()), name, false); got != want || err != nil {
				t.Fatalf("matchIn = %v, %v; match = %v", got, err, want)
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if _, err := g.MatchIn(work.New(ctx), strings.Repeat("b", 4000), false); len(g.alts) >= 64 && err == nil {
				t.Fatalf("%d alternatives against a long name, context done: no error", len(g.alts))
			}
		})
	}
}

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
		g, err := Compile(p)
		if err != nil {
			t.Fatalf("Compile(%q): %v", p, err)
		}
		for _, n := range names {
			want, _ := doublestar.Match(p, n)
			if got := g.Match(n); got != want {
				t.Errorf("Compile(%q).match(%q) = %v, doublestar.Match says %v", p, n, got, want)
			}
		}
	}
}

// matchBase, and the suffix test glob does in line for "*<suffix>", must
// agree with doublestar.Match on every name without '/' (a walk's names).
func TestNameMatchBaseAgreesWithDoublestar(t *testing.T) {
	patterns := []string{"*.go", "*_test.go", "*", "*a", "*.", "*..", "Makefile", "x*y*z", "a*", "a*a", "*a*", ".*", "*.{go,s}", "?.go", "[a-c]*.go", `\*.go`, "é*", "*é"}
	names := []string{"", "a", "aa", ".", "..", "main.go", "main_test.go", "_test.go", ".go", "go.", "Makefile", "xyz", "xaybz", "xzy", "a.go", "b.s", "*.go", "é.go", "éx", "xé", "\xff.go", "a\xffa"}
	for _, p := range patterns {
		m := newNameMatch(p)
		for _, n := range names {
			want, _ := doublestar.Match(p, n)
			if got := m.matchBase(n); got != want {
				t.Errorf("matchBase(%q)(%q) = %v, doublestar.Match says %v", p, n, got, want)
			}
			if m.suffix && m.last != "" {
				if got := hasSuffix(n, m.last); got != want {
					t.Errorf("hasSuffix(%q, %q) = %v for pattern %q, doublestar.Match says %v", n, m.last, got, p, want)
				}
			}
		}
	}
}
