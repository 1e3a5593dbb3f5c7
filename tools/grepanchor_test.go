package tools

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
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
		m, err := newLineMatcher(pat, icase)
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		m.scan([]byte(text), func(idx, _, _ int) { got = append(got, idx) })
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
		m, err := newLineMatcher(tc.pattern, tc.icase)
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
		m, err := newLineMatcher(tc.pattern, tc.icase)
		if err != nil {
			t.Fatal(err)
		}
		if m.decides != tc.decides {
			t.Errorf("%q -i=%v: decides = %v, want %v (literal %q)", tc.pattern, tc.icase, m.decides, tc.decides, m.lit)
		}
	}
}

// TestFoldLiteralWithoutUpperCase: ß has no upper case of its own
// (ToUpper gives ß) yet folds to ẞ, so with -i a literal of it must not be
// searched for as it is.
func TestFoldLiteralWithoutUpperCase(t *testing.T) {
	ws := newWS(t, map[string]string{"de.txt": "STRAẞE\nstraße\nstrasse\n"})
	for _, args := range []map[string]any{
		{"pattern": "ß", "-i": true, "output_mode": "count"},
		{"pattern": "(?i)ß", "output_mode": "count"},
		{"pattern": "(?i)[a-z]ß", "output_mode": "count"},
	} {
		res := run(t, ws, "grep", args)
		if !strings.Contains(res.Output, "de.txt: 2 matching line(s)") {
			t.Errorf("%v: %s", args, res.Output)
		}
	}
}

// TestGlobLiteralPrefixIsAFile: when the directory part of a pattern names
// a file, nothing is under it: no match, not an error, and `src/**`
// matches src itself as doublestar does.
func TestGlobLiteralPrefixIsAFile(t *testing.T) {
	ws := newWS(t, map[string]string{"src": "a file\n", "lib/a.go": "package a\n"})
	for _, tc := range []struct {
		pattern, want string
	}{
		{"src/*.go", "No files found matching pattern: src/*.go"},
		{"lib/a.go/*", "No files found matching pattern: lib/a.go/*"},
		{"src/**", "src\n"},
		{"nosuch/*.go", "No files found matching pattern: nosuch/*.go"},
	} {
		res := run(t, ws, "glob", map[string]any{"pattern": tc.pattern})
		if res.ExitCode != 0 || !strings.Contains(res.Output, tc.want) {
			t.Errorf("glob %s: exit %d, %q; want %q", tc.pattern, res.ExitCode, res.Output, tc.want)
		}
	}
}
