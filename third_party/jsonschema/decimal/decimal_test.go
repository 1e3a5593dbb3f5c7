package decimal

import (
	"fmt"
	"math"
	"math/big"
	"math/rand"
	"strconv"
	"testing"
)

// numbers spells random numbers the ways fmt.Sprint and json.Number do:
// integers, fractions, exponents (e and E, signed), leading and trailing
// zeros, negative zero, and Go floats printed by %v.
func numbers(r *rand.Rand, n int) []string {
	out := []string{"0", "-0", "0.0", "1", "1.0", "-1", "10", "100e-2", "0.0075", "0.0001", "1e308",
		"0.123456789", "1e-400", "-1E+400", "12345678901234567890123", "0.5", "2.5e1", "25"}
	digits := func(k int) string {
		b := make([]byte, k)
		for i := range b {
			b[i] = byte('0' + r.Intn(10))
		}
		return string(b)
	}
	for len(out) < n {
		var s string
		switch r.Intn(4) {
		case 0:
			s = digits(1 + r.Intn(6))
		case 1:
			s = digits(1+r.Intn(4)) + "." + digits(1+r.Intn(5))
		case 2:
			s = digits(1+r.Intn(3)) + "e" + strconv.Itoa(r.Intn(60)-30)
		default:
			s = fmt.Sprint(r.NormFloat64() * math.Pow(10, float64(r.Intn(40)-20)))
		}
		if r.Intn(3) == 0 && s[0] != '-' {
			s = "-" + s
		}
		out = append(out, s)
	}
	return out
}

func rat(t *testing.T, s string) *big.Rat {
	t.Helper()
	q, ok := new(big.Rat).SetString(s)
	if !ok {
		t.Fatalf("big.Rat cannot read %q", s)
	}
	return q
}

// Every operation the validator uses agrees with math/big's Rat, the
// library's own number type before the fork.
func TestDecAgreesWithBigRat(t *testing.T) {
	r := rand.New(rand.NewSource(34))
	nums := numbers(r, 400)
	for _, a := range nums {
		d, ok := Parse(a)
		if !ok {
			t.Fatalf("Parse(%q) failed", a)
		}
		qa := rat(t, a)
		if d.IsInt() != qa.IsInt() {
			t.Errorf("%q: IsInt %v, big %v", a, d.IsInt(), qa.IsInt())
		}
		if f, _ := qa.Float64(); d.Float64() != f {
			t.Errorf("%q: Float64 %v, big %v", a, d.Float64(), f)
		}
		if d.Sign() != qa.Sign() {
			t.Errorf("%q: Sign %d, big %d", a, d.Sign(), qa.Sign())
		}
		if qa.IsInt() && qa.Num().IsInt64() && math.MinInt <= qa.Num().Int64() {
			if n, ok := d.Int(); ok && int64(n) != qa.Num().Int64() {
				t.Errorf("%q: Int %d, big %d", a, n, qa.Num().Int64())
			}
		}
		for _, b := range nums {
			e, _ := Parse(b)
			qb := rat(t, b)
			if got, want := d.Cmp(e), qa.Cmp(qb); got != want {
				t.Errorf("Cmp(%q, %q) = %d, big %d", a, b, got, want)
			}
			if (d.String() == e.String()) != (qa.Cmp(qb) == 0) {
				t.Errorf("String(%q) = %q, String(%q) = %q: equal strings must mean equal numbers", a, d, b, e)
			}
			if qb.Sign() != 0 && len(e.digits) <= 19 {
				if got, want := d.MultipleOf(e), new(big.Rat).Quo(qa, qb).IsInt(); got != want {
					t.Errorf("%q multipleOf %q = %v, big %v", a, b, got, want)
				}
			}
		}
	}
}

// The multipleOf cases of the JSON-Schema suite whose float arithmetic
// goes wrong, and a divisor beyond uint64.
func TestMultipleOf(t *testing.T) {
	for _, c := range []struct {
		x, m string
		want bool
	}{
		{"0.0075", "0.0001", true}, {"0.00751", "0.0001", false}, {"1e308", "0.123456789", false},
		{"4.5", "1.5", true}, {"35", "1.5", false}, {"19.99", "0.01", true}, {"0", "7", true},
		{"12391239123", "123456789012345678901", false}, {"123456789012345678901", "123456789012345678901", true},
		{"1e30", "1e-30", true}, {"1e-30", "1e30", false}, {"-6", "3", true},
	} {
		x, _ := Parse(c.x)
		m, _ := Parse(c.m)
		if got := x.MultipleOf(m); got != c.want {
			t.Errorf("%s multipleOf %s = %v, want %v", c.x, c.m, got, c.want)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, s := range []string{"", "-", ".", "e5", "1e", "1.2.3", "0x10", "1/3", "1e99999999999", "NaN", "+Inf"} {
		if _, ok := Parse(s); ok {
			t.Errorf("Parse(%q) succeeded", s)
		}
	}
}
