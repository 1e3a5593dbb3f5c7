package linematch

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/tools/internal/work"
)

// TestLineMatcherRandomLiterals: on random text, the rare-byte anchored
// literal search (any anchor position, with and without -i, literals at
// the very start and end of the data, overlapping occurrences) finds
// exactly the lines a per-line regexp match finds.
func TestLineMatcherRandomLiterals(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	const alphabet = "aAbBxXqQ_-(). \n\r\t0KkZ"
	for iter := 0; iter < 6000; iter++ {
		n := rng.IntN(120)
		var sb strings.Builder
		for i := 0; i < n; i++ {
			sb.WriteByte(alphabet[rng.IntN(len(alphabet))])
		}
		text := sb.String()
		// A literal from the text itself (so it usually occurs), or random.
		var lit string
		if n > 0 && rng.IntN(4) > 0 {
			i := rng.IntN(n)
			lit = text[i:min(n, i+1+rng.IntN(5))]
		} else {
			for k := 1 + rng.IntN(4); k > 0; k-- {
				lit += string(alphabet[rng.IntN(len(alphabet))])
			}
		}
		lit = strings.ReplaceAll(lit, "\n", "")
		if lit == "" {
			continue
		}
		icase := rng.IntN(2) == 0
		// The literal alone or with pieces around it, some of which make
		// the literal decide the match (no regexp run) and some not.
		forms := []string{"%s", "%s", "[ab]%s", "%s[^x]", `\w+%s`, `%s\s`, "[A-Z]{2,}%s[a-z]{2,}", "(%s)+",
			"x?%s", "^%s", "%s$", "(?:ab|b)%s", "[ab]+x%s", "%s[AB]{1,3}", "[[:upper:]]%s[[:punct:]]+", "%s[\r\n]",
			// alternations: each alternative's literal is searched for
			"%s|Zq", "(%s)|x[AB]", "Kk|%s|_-", "%s|[ab]", "(?:%s|QQ)x"}
		pat := fmt.Sprintf(forms[rng.IntN(len(forms))], regexp.QuoteMeta(lit))
		m, err := New(pat, icase)
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		m.Scan([]byte(text), func(idx, _, _ int) { got = append(got, idx) })
		var want []int
		for i, l := range strings.Split(text, "\n") {
			if m.re.MatchString(strings.TrimSuffix(l, "\r")) {
				want = append(want, i)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("pattern %q -i=%v over %q: lines %v, want %v (literal %q, anchor %d, fold %v, decides %v)", pat, icase, text, got, want, m.lit, m.anchor, m.fold, m.decides)
		}
	}
}

func TestLiteralAnchorIsRarestByte(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		icase   bool
		anchor  byte
	}{
		{"ErrUnexpectedEOF", false, 'U'},
		{`func \(x`, false, 'x'},
		{"unexpected eof", true, 'x'},
		{"e", false, 'e'},
	} {
		m, err := New(tc.pattern, tc.icase)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.lit[m.anchor]; got != tc.anchor {
			t.Errorf("%q -i=%v: anchored on %q, want %q (ranks: %q=%d, %q=%d)", tc.pattern, tc.icase, got, tc.anchor, got, byteRank[got], tc.anchor, byteRank[tc.anchor])
		}
	}
}

// TestLiteralDecides: which patterns are settled by the literal search
// alone, without a regexp run per candidate line.
func TestLiteralDecides(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		icase   bool
		decides bool
	}{
		{"ErrUnexpectedEOF", false, true},
		{"unexpected eof", true, true},
		{`[A-Z]{4,}_[A-Z]{4,}`, false, true},
		{`\w+Error`, false, true},
		{`(Close)+`, false, true},
		{`func \(\w+ \*?\w+\) Close\(`, false, false}, // more than one piece each side
		{`foo\s`, false, false},                       // \s holds "\n" and "\r"
		{`foo[^x]`, false, false},                     // so does [^x]
		{`^foo`, false, false},
		{`foo$`, false, false},
		{`a\nb`, false, false},
		{`(?:ab|b)foo`, false, false},
		{`[éa]foo`, false, false}, // non-ASCII set: bytes only approximate it
		{`foo{2}`, false, true},   // "fo" then exactly "oo"
		{`foo{2,}`, false, true},  // "fo" then "o", "o+"
		{"\ufffdfoo", false, false},
		{"TODO|FIXME", false, true},
		{"todo|fixme", true, true},
		{`TODO|FIX\w+`, false, true},
		{`TODO|FIX\s`, false, false},
	} {
		m, err := New(tc.pattern, tc.icase)
		if err != nil {
			t.Fatal(err)
		}
		if m.decides != tc.decides {
			t.Errorf("%q -i=%v: decides = %v, want %v (literal %q)", tc.pattern, tc.icase, m.decides, tc.decides, m.lit)
		}
	}
}

// The literal prefilter with its neighbour bytes must find exactly the lines
// the regexp alone finds, line by line (the oracle: regexp.MatchString on
// every line without a CRLF's '\r', no prefilter).
func TestLineMatcherNeighboursAgreeWithRegexp(t *testing.T) {
	patterns := []string{
		`[A-Z]{4,}_[A-Z]{4,}`, `\w+_x`, `(a|b)_c`, `é_[à-ü]`, `[^a]_`, `\d+\.\d+`, `[a-z]+_id`,
		`x(_y)+`, `[A-Z]+_$`, `^_[a-z]`, `(?:ab|c)+_\S`, `[a-z]*_z`, `\bfoo_bar\b`, `(é|e)_(x|ü)`,
		`[\x{80}-\x{10FFFF}]_q`, `[[:upper:]]{2}-[[:digit:]]`, `(a+)(_)(b+)`, `k_s`,
		`ab\d{2}_(x|y)z`, `unexpected eof`, `q?xE`, `zzy`, `Az`, `[a-z]{3,}_[0-9]{2}`, `[A-Z]{2}_[A-Z]`, `xé{2}_`, `(ab){2}_`, `\pL{2}_\pL`,
	}
	text := strings.Join([]string{
		"ABCD_EFGH", "ABC_EFGH", "xABCD_EFGHx", "_ABCD", "ABCD_", "a_x", "ab_x", "_x", "b_c", "a_c", "c_c",
		"é_ü", "é_a", "e_x", "x_q", "é_q", "\xff_q", "q_q", "AB-1", "ab-1", "1.5", "x.5", "12.", "user_id",
		"User_ID", "x_y_y", "x_", "XY_", "XY_ ", "_a", " _a", "ab_\xff", "c_ ", "aa_z", "_z", "foo_bar",
		"xfoo_bar", "foo_bar9", "aa_bb", "k_s", "K_S", "ǅ_x", "é_x", "A_É", "", "_", "\r_a\r", "ABCD_EFGH\r",
		"XY_\r", "unexpected EOF", "UNEXPECTED eof", "unexpectedeof", "un unexpected eof x", "unexpected eo", "xe xE XE zzzy zZY", "aZ", "ab12_xz", "ab1_xz", "ab12_yz", "abc_12", "ab_12", "XAB_C", "A_B", "xéé_", "xé_", "abab_", "ab_", "ééé_é", "\xffé_é",
	}, "\n")
	for _, ignoreCase := range []bool{false, true} {
		for _, p := range patterns {
			t.Run(fmt.Sprintf("%s/i=%v", p, ignoreCase), func(t *testing.T) {
				m, err := New(p, ignoreCase)
				if err != nil {
					t.Fatal(err)
				}
				expr := p
				if ignoreCase {
					expr = "(?i)" + p
				}
				re := regexp.MustCompile(expr)
				var want, got []int
				for i, line := range strings.Split(text, "\n") {
					if re.MatchString(strings.TrimSuffix(line, "\r")) { // a CRLF line is matched without its '\r'
						want = append(want, i)
					}
				}
				m.Scan([]byte(text), func(idx, _, _ int) { got = append(got, idx) })
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("lines %v, regexp alone finds %v", got, want)
				}
			})
		}
	}
}

// The neighbour sets are what make the prefilter useful: check they are
// found for the patterns that have them.
func TestLineMatcherFindsNeighbours(t *testing.T) {
	cases := []struct {
		pattern             string
		before, after       string // bytes that must be in the nearest set; "" = no set
		notBefore           string
		beforeLen, afterLen int // how many bytes each side is checked
	}{
		{`[A-Z]{4,}_[A-Z]{4,}`, "AZ", "AZ", "a_\n", 4, 4},
		{`\w+_x`, "az09_", "", " \n", 1, 0},
		{`(a|b)_c`, "ab", "", "c", 1, 0},
		{`a*_b`, "", "", "", 0, 0},
		{`\b_x`, "", "", "", 0, 0},
		{`\d{2}__(x|y)z`, "09", "xy", "ab", 2, 1},
		{`[a-z]{20,}_`, "az", "", "AZ", 8, 0},
	}
	for _, c := range cases {
		t.Run(c.pattern, func(t *testing.T) {
			m, err := New(c.pattern, false)
			if err != nil {
				t.Fatal(err)
			}
			if len(m.before) != c.beforeLen || len(m.after) != c.afterLen {
				t.Fatalf("checks %d byte(s) before and %d after, want %d and %d", len(m.before), len(m.after), c.beforeLen, c.afterLen)
			}
			for i := 0; i < len(c.before); i++ {
				if !m.before[0][c.before[i]] {
					t.Errorf("before lacks %q", c.before[i])
				}
			}
			for i := 0; i < len(c.notBefore); i++ {
				if m.before[0][c.notBefore[i]] {
					t.Errorf("before has %q", c.notBefore[i])
				}
			}
			for i := 0; i < len(c.after); i++ {
				if !m.after[0][c.after[i]] {
					t.Errorf("after lacks %q", c.after[i])
				}
			}
		})
	}
}

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
	w := work.New(context.Background())
	for _, p := range patterns {
		for _, icase := range []bool{false, true} {
			m, err := New(p, icase)
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
				long := []byte(strings.Repeat("ab c", work.Step/4+1) + tail)
				if len(long)*m.size <= work.Step {
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
func TestProgramLimit(t *testing.T) {
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
		{strings.Repeat("x", MaxProgram+1), true},
	} {
		_, err := New(c.pattern, false)
		var big ProgramSizeError
		if got := err != nil && errors.As(err, &big); got != c.refused {
			t.Errorf("New(%.40q): %v; refused want %v", c.pattern, err, c.refused)
		}
		if c.refused && err != nil && !strings.Contains(err.Error(), "the limit is 10000") {
			t.Errorf("%.40q: the error does not name the limit: %v", c.pattern, err)
		}
	}
}

// TestLineMatcherAgreesWithPerLine: the literal prefilter and the case
// folding search find exactly the lines a per-line regexp match finds.
func TestLineMatcherAgreesWithPerLine(t *testing.T) {
	text := "Alpha beta\nALPHA\nxalphax\n\nK kelvin \u212a\nſ long s\nend alpha"
	for _, p := range []struct {
		pat string
		i   bool
	}{{"alpha", false}, {"alpha", true}, {"ALP", true}, {"k", true}, {"s", true}, {"^$", false}, {"a$", false}, {"(al)+pha", true}, {"x.*x", false}, {"beta|end", false}, {"a{2,}", false}, {"", false}} {
		m, err := New(p.pat, p.i)
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		m.Scan([]byte(text), func(idx, _, _ int) { got = append(got, idx) })
		var want []int
		for i, l := range strings.Split(text, "\n") {
			if m.re.MatchString(l) {
				want = append(want, i)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) || m.Scan([]byte(text), nil) != len(want) {
			t.Fatalf("%q i=%v: got %v want %v (lit %q fold %v)", p.pat, p.i, got, want, m.lit, m.fold)
		}
	}
}
