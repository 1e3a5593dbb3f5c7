package llm

import (
	"encoding/json"
	"fmt"
	"maps"
	"unicode/utf8"
)

// PartialJSON parses one JSON value fed in fragments, as a model streams
// tool-call arguments, and yields the best value the text so far stands
// for: open strings closed, open containers closed, a partial literal
// completed (t → true), a partial number cut back to its last valid
// prefix (1. → 1, a lone - dropped), and a key that has no value yet left
// out (the rules of the Vercel AI SDK's fix-JSON machine that upstream
// ports).
//
// It is incremental: each byte is scanned once and each finished value is
// built once, so feeding n bytes costs O(n) in total however small the
// fragments. Only Value walks what is still open (the containers on the
// stack, shallowly), so a caller that emits snapshots at a bounded rate
// pays for them at that rate, not per fragment.
//
// A complete document yields what encoding/json's Unmarshal into an any
// yields (numbers as json.Number, the same U+FFFD substitutions, the same
// 10,000-level nesting limit); a document it refuses is refused here too.
// The zero value is ready to use. It is not safe for concurrent use.
type PartialJSON struct {
	st    pstate
	stack []pframe
	root  any
	done  bool // root value complete
	off   int  // bytes consumed
	err   error

	// scalar in progress
	str     []byte // string bytes decoded so far (raw UTF-8 unsanitised)
	isKey   bool   // the string is an object key
	esc     int    // 0: none; 1: after '\'; 2..5: \u hex digits read + 2
	u       rune   // \u accumulator
	high    rune   // pending high surrogate, or -1
	num     []byte // number bytes so far
	numSt   nstate
	numOK   int // length of the longest prefix of num that is a number
	lit     string
	litN    int
	litVal  any
	pending bool // a scalar is in progress (string value, number, literal)
}

type pframe struct {
	obj    map[string]any
	arr    []any
	isObj  bool
	key    string
	hasKey bool // key read, its value pending
}

type pstate uint8

const (
	sValue    pstate = iota // a value must come
	sArrFirst               // a value or ']'
	sObjFirst               // a key or '}'
	sObjKey                 // a key must come
	sColon                  // ':' must come
	sAfter                  // ',' or the closing bracket
	sEnd                    // only whitespace
	sString
	sNumber
	sLiteral
)

type nstate uint8

const (
	nMinus nstate = iota
	nZero
	nInt
	nDot
	nFrac
	nE
	nESign
	nExp
)

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

// Feed consumes the next fragment. After an error every later call
// returns the same error; Value still yields what was read before it.
func (p *PartialJSON) Feed(frag string) error {
	if p.err != nil {
		return p.err
	}
	for i := 0; i < len(frag); i++ {
		if err := p.step(frag[i]); err != nil {
			p.err = err
			return err
		}
		p.off++
	}
	return nil
}

// End marks the end of input: a pending root number completes, and an
// incomplete document is an error.
func (p *PartialJSON) End() error {
	if p.err != nil {
		return p.err
	}
	if p.st == sNumber && len(p.stack) == 0 {
		if err := p.endNumber(' '); err != nil {
			p.err = err
			return err
		}
	}
	if !p.done {
		p.err = fmt.Errorf("unexpected end of JSON input after %d bytes", p.off)
	}
	return p.err
}

// Complete reports whether a whole top-level value has been read (a root
// number only once End was called).
func (p *PartialJSON) Complete() bool { return p.done }

// Len is the number of bytes consumed.
func (p *PartialJSON) Len() int { return p.off }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (p *PartialJSON) bad(c byte) error {
	return fmt.Errorf("invalid character %q at offset %d", c, p.off)
}

func (p *PartialJSON) step(c byte) error {
	switch p.st {
	case sString:
		return p.stringByte(c)
	case sNumber:
		if p.numByte(c) {
			return nil
		}
		if err := p.endNumber(c); err != nil {
			return err
		}
		return p.step(c)
	case sLiteral:
		if c != p.lit[p.litN] {
			return p.bad(c)
		}
		p.litN++
		if p.litN == len(p.lit) {
			p.pending = false
			p.emit(p.litVal)
		}
		return nil
	}
	if isSpace(c) {
		return nil
	}
	switch p.st {
	case sValue, sArrFirst:
		if c == ']' && p.st == sArrFirst {
			p.close(false)
			return nil
		}
		return p.startValue(c)
	case sObjFirst, sObjKey:
		if c == '}' && p.st == sObjFirst {
			p.close(true)
			return nil
		}
		if c != '"' {
			return p.bad(c)
		}
		p.startString(true)
		return nil
	case sColon:
		if c != ':' {
			return p.bad(c)
		}
		p.st = sValue
		return nil
	case sAfter:
		top := &p.stack[len(p.stack)-1]
		switch {
		case c == ',' && top.isObj:
			p.st = sObjKey
		case c == ',':
			p.st = sValue
		case c == '}' && top.isObj, c == ']' && !top.isObj:
			p.close(top.isObj)
		default:
			return p.bad(c)
		}
		return nil
	}
	// sEnd
	return fmt.Errorf("invalid character %q after top-level value at offset %d", c, p.off)
}

func (p *PartialJSON) startValue(c byte) error {
	switch {
	case c == '{' || c == '[':
		if len(p.stack) == maxDepth {
			return fmt.Errorf("exceeded max depth at offset %d", p.off)
		}
		if c == '{' {
			p.stack = append(p.stack, pframe{obj: map[string]any{}, isObj: true})
			p.st = sObjFirst
		} else {
			p.stack = append(p.stack, pframe{arr: []any{}})
			p.st = sArrFirst
		}
	case c == '"':
		p.startString(false)
	case c == '-' || c >= '0' && c <= '9':
		p.num, p.numOK, p.pending, p.st = append(p.num[:0], c), 0, true, sNumber
		p.numSt = nMinus
		if c != '-' {
			p.numSt, p.numOK = nInt, 1
			if c == '0' {
				p.numSt = nZero
			}
		}
	case c == 't':
		p.lit, p.litVal = "true", true
	case c == 'f':
		p.lit, p.litVal = "false", false
	case c == 'n':
		p.lit, p.litVal = "null", nil
	default:
		return p.bad(c)
	}
	if c == 't' || c == 'f' || c == 'n' {
		p.litN, p.pending, p.st = 1, true, sLiteral
	}
	return nil
}

func (p *PartialJSON) startString(key bool) {
	p.str, p.isKey, p.esc, p.high, p.st = p.str[:0], key, 0, -1, sString
	p.pending = !key
}

func (p *PartialJSON) stringByte(c byte) error {
	switch {
	case p.esc == 1:
		p.esc = 0
		var r byte
		switch c {
		case '"', '\\', '/':
			r = c
		case 'b':
			r = '\b'
		case 'f':
			r = '\f'
		case 'n':
			r = '\n'
		case 'r':
			r = '\r'
		case 't':
			r = '\t'
		case 'u':
			p.esc, p.u = 2, 0
			return nil
		default:
			return fmt.Errorf("invalid escape %q in string at offset %d", c, p.off)
		}
		p.flushHigh()
		p.str = append(p.str, r)
	case p.esc >= 2:
		var d rune
		switch {
		case c >= '0' && c <= '9':
			d = rune(c - '0')
		case c >= 'a' && c <= 'f':
			d = rune(c-'a') + 10
		case c >= 'A' && c <= 'F':
			d = rune(c-'A') + 10
		default:
			return fmt.Errorf("invalid character %q in \\u escape at offset %d", c, p.off)
		}
		p.u = p.u<<4 | d
		if p.esc++; p.esc == 6 {
			p.esc = 0
			p.unicode(p.u)
		}
	case c == '\\':
		p.esc = 1
	case c == '"':
		p.flushHigh()
		s := sanitize(p.str)
		p.pending = false
		if p.isKey {
			top := &p.stack[len(p.stack)-1]
			top.key, top.hasKey, p.st = s, true, sColon
			return nil
		}
		p.emit(s)
	case c < 0x20:
		return fmt.Errorf("invalid control character %#x in string at offset %d", c, p.off)
	default:
		p.flushHigh()
		p.str = append(p.str, c)
	}
	return nil
}

// unicode adds a \u escape's code unit, pairing surrogates as
// encoding/json does: only a high surrogate directly followed by a \u low
// surrogate is a pair; any other surrogate becomes U+FFFD.
func (p *PartialJSON) unicode(r rune) {
	if p.high >= 0 {
		if r >= 0xDC00 && r <= 0xDFFF {
			p.str = utf8.AppendRune(p.str, (p.high-0xD800)<<10|(r-0xDC00)+0x10000)
			p.high = -1
			return
		}
		p.flushHigh()
	}
	switch {
	case r >= 0xD800 && r <= 0xDBFF:
		p.high = r
	case r >= 0xDC00 && r <= 0xDFFF:
		p.str = utf8.AppendRune(p.str, utf8.RuneError)
	default:
		p.str = utf8.AppendRune(p.str, r)
	}
}

func (p *PartialJSON) flushHigh() {
	if p.high >= 0 {
		p.str = utf8.AppendRune(p.str, utf8.RuneError)
		p.high = -1
	}
}

// sanitize turns b into a string with each invalid UTF-8 byte replaced by
// U+FFFD, as encoding/json does.
func sanitize(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	out := make([]byte, 0, len(b)+8)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[:n]...)
		}
		b = b[n:]
	}
	return string(out)
}

// numByte advances the number grammar by c, reporting false when c does
// not continue the number.
func (p *PartialJSON) numByte(c byte) bool {
	digit := c >= '0' && c <= '9'
	switch p.numSt {
	case nMinus:
		if !digit {
			return false
		}
		p.numSt = nInt
		if c == '0' {
			p.numSt = nZero
		}
	case nZero, nInt:
		switch {
		case digit && p.numSt == nInt:
		case c == '.':
			p.numSt = nDot
		case c == 'e' || c == 'E':
			p.numSt = nE
		default:
			return false
		}
	case nDot, nFrac:
		if !digit {
			if p.numSt == nFrac && (c == 'e' || c == 'E') {
				p.numSt = nE
				break
			}
			return false
		}
		p.numSt = nFrac
	case nE:
		switch {
		case c == '+' || c == '-':
			p.numSt = nESign
		case digit:
			p.numSt = nExp
		default:
			return false
		}
	case nESign, nExp:
		if !digit {
			return false
		}
		p.numSt = nExp
	}
	p.num = append(p.num, c)
	switch p.numSt {
	case nZero, nInt, nFrac, nExp:
		p.numOK = len(p.num)
	}
	return true
}

// endNumber finishes the number at the byte c that does not continue it.
func (p *PartialJSON) endNumber(c byte) error {
	if p.numOK != len(p.num) {
		return p.bad(c)
	}
	p.pending = false
	p.emit(json.Number(p.num))
	return nil
}

func (p *PartialJSON) emit(v any) {
	if len(p.stack) == 0 {
		p.root, p.done, p.st = v, true, sEnd
		return
	}
	top := &p.stack[len(p.stack)-1]
	if top.isObj {
		top.obj[top.key] = v
		top.hasKey = false
	} else {
		top.arr = append(top.arr, v)
	}
	p.st = sAfter
}

func (p *PartialJSON) close(obj bool) {
	top := p.stack[len(p.stack)-1]
	p.stack = p.stack[:len(p.stack)-1]
	if obj {
		p.emit(top.obj)
	} else {
		p.emit(top.arr)
	}
}

// Value is the best value the input so far stands for, and false when it
// stands for none yet (nothing but whitespace, or a root scalar with no
// valid prefix). Containers that are complete are shared with later
// snapshots: treat the result as read-only.
func (p *PartialJSON) Value() (any, bool) {
	if p.done {
		return p.root, true
	}
	var child any
	has := false
	if p.pending {
		switch p.st {
		case sString:
			// leave out a rune whose bytes have not all arrived (a
			// pending high surrogate is left out too: its pair may follow)
			b := p.str
			for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
				if utf8.RuneStart(b[i]) {
					if !utf8.FullRune(b[i:]) {
						b = b[:i]
					}
					break
				}
			}
			child, has = sanitize(b), true
		case sNumber:
			if p.numOK > 0 {
				child, has = json.Number(p.num[:p.numOK]), true
			}
		case sLiteral:
			child, has = p.litVal, true
		}
	}
	for i := len(p.stack) - 1; i >= 0; i-- {
		f := &p.stack[i]
		if f.isObj {
			m := maps.Clone(f.obj)
			if has && f.hasKey {
				m[f.key] = child
			}
			child = m
		} else {
			a := make([]any, len(f.arr), len(f.arr)+1)
			copy(a, f.arr)
			if has {
				a = append(a, child)
			}
			child = a
		}
		has = true
	}
	return child, has
}
