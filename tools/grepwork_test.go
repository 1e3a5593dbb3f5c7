package tools

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

// pacedLine feeds the regexp engine rune by rune; the answer must be
// Match's on every line, including invalid UTF-8, anchors, word boundaries
// and case folding, and matchLine must give it for long lines too (which
// take the paced path).
func TestPacedLineAgreesWithMatch(t *testing.T) {
	patterns := []string{`^a`, `b$`, `^$`, `\bab\b`, `\Bb`, `a.c`, `(?i)é+x`, `[^a-z]`, `\xff`, "\ufffd", `(a|bc)*d$`, `^.{3}$`, `\p{Greek}`, `x*`, `a{2,5}b`}
	pieces := []string{"a", "b", "c", "d", "x", " ", "é", "É", "\xff", "\xe2\x82", "α", "\ufffd", "-"}
	r := rand.New(rand.NewPCG(3, 4))
	var lines []string
	for range 400 {
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		lines = append(lines, b.String())
	}
	w := newWork(context.Background())
	for _, p := range patterns {
		for _, icase := range []bool{false, true} {
			m, err := newLineMatcher(p, icase)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range lines {
				want := m.re.Match([]byte(l))
				pl := pacedLine{b: []byte(l), w: w, every: 1 + r.IntN(3)}
				if got := m.re.MatchReader(&pl); got != want || pl.err != nil {
					t.Fatalf("%q (-i %v) on %q: paced %v (err %v), Match %v", p, icase, l, got, pl.err, want)
				}
			}
			// Long lines: matchLine takes the paced path.
			for _, tail := range []string{"", "abd", "\xffx", "é"} {
				long := []byte(strings.Repeat("ab c", workStep/4+1) + tail)
				if len(long)*m.size <= workStep {
					t.Fatalf("%q: a %d-byte line does not take the paced path", p, len(long))
				}
				got, err := m.matchLine(w, long)
				if want := m.re.Match(long); got != want || err != nil {
					t.Fatalf("%q (-i %v) on a long line ending %q: matchLine %v (err %v), Match %v", p, icase, tail, got, err, want)
				}
			}
		}
	}
}

// The program size limit: refused with the limit named, measured as Go's
// parser measures it, and patterns in real use far inside it.
func TestGrepProgramLimit(t *testing.T) {
	for _, c := range []struct {
		pattern string
		refused bool
	}{
		{`func \(\w+ \*?\w+\) Close\(`, false},
		{`[a-z]{1,1000}`, false},
		{`(\w+\s*){1,1000}`, false},
		{`.{1000}`, false},
		{`(a|b|c|d|e|f|g|h){1000}`, false},
		{strings.Repeat(`[a-z]{1,1000}`, 6), true},
		{`(\w+\s*){1,1000}(\w+\s*){1,1000}`, true},
		{`(ab|cd|ef|gh|ij){1000}`, true},
		{`(?i)(ab|cd|ef|gh|ij){1000}`, true},
		{strings.Repeat("x", maxGrepProgram+1), true},
	} {
		_, err := newLineMatcher(c.pattern, false)
		var big errProgramSize
		if got := err != nil && errors.As(err, &big); got != c.refused {
			t.Errorf("newLineMatcher(%.40q): %v; refused want %v", c.pattern, err, c.refused)
		}
		if c.refused && err != nil && !strings.Contains(err.Error(), "the limit is 10000") {
			t.Errorf("%.40q: the error does not name the limit: %v", c.pattern, err)
		}
	}
	res := run(t, newWS(t, map[string]string{"a.txt": "x\n"}), "grep", map[string]any{"pattern": strings.Repeat(`[a-z]{1,1000}`, 6)})
	if kindOf(res) != "invalid_argument" || !strings.Contains(res.Output, "grep: the pattern compiles to about") {
		t.Fatalf("grep with a huge program: %s %q", kindOf(res), res.Output)
	}
}
