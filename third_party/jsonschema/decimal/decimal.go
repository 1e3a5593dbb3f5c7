// Package decimal holds the JSON numbers of schemas and instances exactly,
// as decimal digits and a power of ten: what the validator compares
// (minimum, maximum, const, enum, uniqueItems) and divides (multipleOf).
// It replaces math/big's Rat (code-wasm's fork: math/big was about 65 KB
// of the wasm's gzip for these few operations).
package decimal

import (
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// Dec is ±digits × 10^exp, normalised: digits has no leading or trailing
// zeros (zero is the empty digits, never negative), so two equal numbers
// have equal fields.
type Dec struct {
	neg    bool
	digits string
	exp    int
}

// Parse reads a number as fmt.Sprint prints Go's numeric types and
// json.Number holds JSON's: [-]digits[.digits][(e|E)[±]digits].
func Parse(s string) (*Dec, bool) {
	d := &Dec{}
	if strings.HasPrefix(s, "-") {
		d.neg, s = true, s[1:]
	} else if strings.HasPrefix(s, "+") {
		s = s[1:]
	}
	mant, e, hasExp := strings.Cut(strings.ToLower(s), "e")
	if hasExp {
		n, err := strconv.Atoi(e)
		if err != nil || n > 1<<30 || n < -(1<<30) {
			return nil, false
		}
		d.exp = n
	}
	ip, fp, _ := strings.Cut(mant, ".")
	if ip == "" && fp == "" || !allDigits(ip) || !allDigits(fp) {
		return nil, false
	}
	d.exp -= len(fp)
	digits := strings.TrimLeft(ip+fp, "0")
	t := strings.TrimRight(digits, "0")
	d.exp += len(digits) - len(t)
	d.digits = t
	if t == "" {
		d.neg, d.exp = false, 0
	}
	return d, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Sign is -1, 0 or 1.
func (d *Dec) Sign() int {
	switch {
	case d.digits == "":
		return 0
	case d.neg:
		return -1
	}
	return 1
}

// Cmp is -1, 0 or 1 as d <, =, > e.
func (d *Dec) Cmp(e *Dec) int {
	if ds, es := d.Sign(), e.Sign(); ds != es || ds == 0 {
		return cmpInt(ds, es)
	}
	c := cmpAbs(d, e)
	if d.neg {
		return -c
	}
	return c
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// cmpAbs compares |d| and |e|, both nonzero: first by magnitude (the
// power of ten of the leading digit), then digit by digit.
func cmpAbs(d, e *Dec) int {
	if c := cmpInt(d.exp+len(d.digits), e.exp+len(e.digits)); c != 0 {
		return c
	}
	return strings.Compare(d.digits, e.digits) // same magnitude: a longer tail is larger
}

// IsInt reports whether d is an integer.
func (d *Dec) IsInt() bool { return d.exp >= 0 }

// Int returns d as an int when it is an integer that fits.
func (d *Dec) Int() (int, bool) {
	if !d.IsInt() || len(d.digits)+d.exp > 18 {
		return 0, false
	}
	n, err := strconv.Atoi(d.String())
	return n, err == nil
}

// MultipleOf reports whether d / m is an integer; m is not zero. With
// d = D×10^p and m = M×10^q (D, M without trailing zeros), it is
// D×10^(p-q) mod M == 0 when p >= q; when p < q it holds only for d = 0,
// since M×10^(q-p) is a multiple of 10 and D is not. A divisor of more
// than 19 digits is beyond the uint64 arithmetic here: d/m is then
// compared in float64.
func (d *Dec) MultipleOf(m *Dec) bool {
	if d.digits == "" {
		return true
	}
	if d.exp < m.exp {
		return false
	}
	mv, err := strconv.ParseUint(m.digits, 10, 64)
	if err != nil {
		q := d.Float64() / m.Float64()
		return !math.IsInf(q, 0) && q == math.Trunc(q)
	}
	var r uint64
	for i := 0; i < len(d.digits); i++ {
		r = mulAddMod(r, 10, uint64(d.digits[i]-'0'), mv)
	}
	// r × 10^(p-q) mod M, by squaring.
	for b, e := uint64(10)%mv, d.exp-m.exp; e > 0 && r != 0; e >>= 1 {
		if e&1 == 1 {
			r = mulAddMod(r, b, 0, mv)
		}
		b = mulAddMod(b, b, 0, mv)
	}
	return r == 0
}

// mulAddMod is (a×b + c) mod m for a, b, c < m.
func mulAddMod(a, b, c, m uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	lo, carry := bits.Add64(lo, c, 0)
	hi += carry
	_, r := bits.Div64(hi%m, lo, m)
	return r
}

// Float64 is the nearest float64 (±Inf beyond its range).
func (d *Dec) Float64() float64 {
	f, _ := strconv.ParseFloat(d.String(), 64)
	return f
}

// String is the canonical form: [-]digits[e±exp], "0" for zero. Equal
// numbers have equal strings (uniqueItems hashes it).
func (d *Dec) String() string {
	if d.digits == "" {
		return "0"
	}
	var b strings.Builder
	if d.neg {
		b.WriteByte('-')
	}
	b.WriteString(d.digits)
	if d.exp != 0 {
		if 0 < d.exp && d.exp <= 18 {
			b.WriteString(strings.Repeat("0", d.exp))
		} else {
			b.WriteByte('e')
			b.WriteString(strconv.Itoa(d.exp))
		}
	}
	return b.String()
}
