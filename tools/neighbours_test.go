package tools

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

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
				m, err := newLineMatcher(p, ignoreCase)
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
				m.scan([]byte(text), func(idx, _, _ int) { got = append(got, idx) })
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
			m, err := newLineMatcher(c.pattern, false)
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
