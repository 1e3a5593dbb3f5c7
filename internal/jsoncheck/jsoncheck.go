package jsoncheck

import (
	"fmt"

	"github.com/a3s-lab/code-wasm/internal/scan"
)

// MaxDepth is how deep objects and arrays may nest in one JSON document
// crossing from JS into Go (a call's envelope {name, args} counts as one
// level). The npm package refuses deeper values before they cross
// (npm/src/options.mjs MAX_DEPTH), naming the path.
const MaxDepth = 100

// Error describes what Check found, in terms a JS caller can act on.
type Error struct {
	Offset int    // byte offset in the document
	Msg    string // what is wrong
}

func (e *Error) Error() string { return fmt.Sprintf("%s (at byte %d of the JSON)", e.Msg, e.Offset) }

// Check reports the first string that is not well-formed UTF-16 (an
// unpaired surrogate escape) or the first place nesting passes MaxDepth.
func Check(raw []byte) error {
	depth := 0
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '{', '[':
			if depth++; depth > MaxDepth {
				return &Error{i, fmt.Sprintf("objects and arrays nest more than %d levels deep; the limit is %d", MaxDepth, MaxDepth)}
			}
		case '}', ']':
			depth--
		case '"':
			end, err := checkString(raw, i+1)
			if err != nil {
				return err
			}
			i = end
		}
	}
	return nil
}

// checkString scans the string whose contents start at i and returns the
// index of its closing quote (or len(raw)). The bytes between escapes are
// skipped with scan.IndexByte (memchr; in wasm assembly under js/wasm):
// a 100 MB file's content crosses as one string.
func checkString(raw []byte, i int) (int, error) {
	pendingHigh := -1 // offset of a high surrogate escape awaiting its low half
	quote := -1       // the next '"' at or after i, once looked for
	for i < len(raw) {
		if quote < i {
			if quote = scan.IndexByte(raw[i:], '"'); quote < 0 {
				quote = len(raw)
			} else {
				quote += i
			}
		}
		b := scan.IndexByte(raw[i:quote], '\\')
		if b < 0 {
			if pendingHigh >= 0 {
				return 0, lone(raw, pendingHigh) // text or the end follows it
			}
			return quote, nil
		}
		if b > 0 && pendingHigh >= 0 {
			return 0, lone(raw, pendingHigh)
		}
		i += b // at the backslash
		if i+6 <= len(raw) && raw[i+1] == 'u' {
			u, ok := hex4(raw[i+2 : i+6])
			switch {
			case ok && u >= 0xD800 && u <= 0xDBFF:
				if pendingHigh >= 0 {
					return 0, lone(raw, pendingHigh)
				}
				pendingHigh = i
			case ok && u >= 0xDC00 && u <= 0xDFFF:
				if pendingHigh < 0 {
					return 0, lone(raw, i)
				}
				pendingHigh = -1
			case pendingHigh >= 0:
				return 0, lone(raw, pendingHigh)
			}
			i += 6
			continue
		}
		if pendingHigh >= 0 {
			return 0, lone(raw, pendingHigh)
		}
		i += 2 // the escape and the escaped byte (perhaps the quote: looked for again)
	}
	if pendingHigh >= 0 {
		return 0, lone(raw, pendingHigh)
	}
	return len(raw), nil
}

func lone(raw []byte, at int) error {
	return &Error{at, fmt.Sprintf("a string holds a lone surrogate (%s), so it is not well-formed UTF-16 and would reach Go as U+FFFD", raw[at:at+6])}
}

func hex4(b []byte) (rune, bool) {
	var r rune
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
