// Package message stands in for golang.org/x/text/message in this fork:
// the validator's messages are formatted in English with fmt, numbers
// grouped by thousands as x/text's English printer groups them ("got
// 5,000, want 2,000"), and x/text's message, language, number and
// catalog packages and tables stay out of the wasm (README.code-wasm.md).
package message

import (
	"fmt"
	"strings"
)

// Printer formats the validator's messages (the type x/text's Printer
// was in the upstream API).
type Printer struct{}

// NewPrinter returns the English printer.
func NewPrinter() *Printer { return &Printer{} }

// Sprintf is fmt.Sprintf with integers and floats printed by %d and %v
// grouped by thousands.
func (*Printer) Sprintf(format string, a ...any) string {
	args := make([]any, len(a))
	for i, v := range a {
		switch v.(type) {
		case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
			args[i] = grouped{v}
		default:
			args[i] = v
		}
	}
	return fmt.Sprintf(format, args...)
}

// grouped prints a number with commas between groups of three digits
// for the verbs d and v, when fmt prints it as plain digits (with an
// optional sign and fraction); any other form or verb is fmt's own.
type grouped struct{ v any }

func (g grouped) Format(f fmt.State, verb rune) {
	s := fmt.Sprintf(fmt.FormatString(f, verb), g.v)
	if verb == 'd' || verb == 'v' {
		s = group(s)
	}
	f.Write([]byte(s))
}

func group(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	digits, frac, _ := strings.Cut(s, ".")
	if len(digits) <= 3 || strings.Trim(digits, "0123456789") != "" || strings.Trim(frac, "0123456789") != "" {
		return sign + s
	}
	var b strings.Builder
	b.WriteString(sign)
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if frac != "" || strings.Contains(s, ".") {
		b.WriteString("." + frac)
	}
	return b.String()
}
