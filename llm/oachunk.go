package llm

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// oaChunk is one OpenAI-compatible stream chunk: what the decoder reads.
type oaChunk struct {
	Choices []oaChoice      `json:"choices"`
	Usage   *oaUsage        `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

type oaChoice struct {
	Index        int     `json:"index"`
	Delta        oaDelta `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

type oaDelta struct {
	Content          *string       `json:"content"`
	ReasoningContent *string       `json:"reasoning_content"`
	Reasoning        *string       `json:"reasoning"`
	ToolCalls        []oaToolDelta `json:"tool_calls"`
}

type oaToolDelta struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type oaUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	PromptDetails    *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// decodeOAChunk decodes a chunk as json.Unmarshal would. Chunks of the
// usual shape take a hand-written path: encoding/json decoded a few
// hundred bytes at ~6 MB/s under js/wasm, a tenth of an agent turn's Go
// time. Anything the fast path is not sure of — an error field, a
// duplicate or differently-cased key, a type or number it does not take,
// bad UTF-8 or escapes, invalid JSON — goes to encoding/json, which then
// also words the error. A fuzz test holds the two to the same result.
func decodeOAChunk(data []byte) (oaChunk, error) {
	var ch oaChunk
	p := oaParser{b: data}
	if p.chunk(&ch) {
		return ch, nil
	}
	ch = oaChunk{}
	err := json.Unmarshal(data, &ch)
	return ch, err
}

// oaParser is a strict JSON reader over b; its methods report false as soon as the input leaves what it handles exactly as
// encoding/json does.
type oaParser struct {
	b []byte
	i int
}

func (p *oaParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *oaParser) peek() byte {
	p.ws()
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

func (p *oaParser) lit(s string) bool {
	if len(p.b)-p.i >= len(s) && string(p.b[p.i:p.i+len(s)]) == s { // compared in place, not copied
		p.i += len(s)
		return true
	}
	return false
}

// null consumes a null if one comes next.
func (p *oaParser) null() bool { return p.peek() == 'n' && p.lit("null") }

// object calls field for each key of an object (or accepts null, which
// leaves a struct as it was). Each key must be one of known, exactly and
// once; field decodes its value.
func (p *oaParser) object(known []string, field func(k int) bool) bool {
	if p.null() {
		return true
	}
	if p.peek() != '{' {
		return false
	}
	p.i++
	var seen uint32
	if p.peek() == '}' {
		p.i++
		return true
	}
	for {
		if p.peek() != '"' {
			return false
		}
		key, ok := p.str()
		if !ok {
			return false
		}
		if p.peek() != ':' {
			return false
		}
		p.i++
		k := -1
		for j, name := range known {
			if key == name {
				k = j
				break
			}
			if strings.EqualFold(key, name) {
				return false
			}
		}
		if k >= 0 {
			if seen&(1<<k) != 0 {
				return false
			}
			seen |= 1 << k
			if !field(k) {
				return false
			}
		} else if !p.skip(0) {
			return false
		}
		switch p.peek() {
		case ',':
			p.i++
		case '}':
			p.i++
			return true
		default:
			return false
		}
	}
}

// array calls elem for each element (null gives a nil slice: the caller's
// setNil).
func (p *oaParser) array(setNil func(), elem func() bool) bool {
	if p.null() {
		setNil()
		return true
	}
	if p.peek() != '[' {
		return false
	}
	p.i++
	if p.peek() == ']' {
		p.i++
		return true
	}
	for {
		if !elem() {
			return false
		}
		switch p.peek() {
		case ',':
			p.i++
		case ']':
			p.i++
			return true
		default:
			return false
		}
	}
}

// str reads a string whose every escape and byte encoding/json would
// decode to the same text (lone surrogates and bad UTF-8, which it
// replaces, go to the slow path).
func (p *oaParser) str() (string, bool) {
	if p.peek() != '"' {
		return "", false
	}
	p.i++
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			s := p.b[start:p.i]
			p.i++
			if !utf8.Valid(s) {
				return "", false
			}
			return string(s), true
		case c == '\\':
			return p.escaped(start)
		case c < 0x20:
			return "", false
		}
		p.i++
	}
	return "", false
}

func (p *oaParser) escaped(start int) (string, bool) {
	out := append([]byte(nil), p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			if !utf8.Valid(out) {
				return "", false
			}
			return string(out), true
		case c < 0x20:
			return "", false
		case c != '\\':
			out = append(out, c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.b) {
			return "", false
		}
		e := p.b[p.i+1]
		p.i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", false
			}
			if utf16.IsSurrogate(r) {
				if !p.lit(`\u`) {
					return "", false
				}
				r2, ok := p.hex4()
				if !ok {
					return "", false
				}
				r = utf16.DecodeRune(r, r2)
				if r == utf8.RuneError {
					return "", false
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", false
		}
	}
	return "", false
}

func (p *oaParser) hex4() (rune, bool) {
	if p.i+4 > len(p.b) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(p.b[p.i:p.i+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(v), true
}

// strPtr decodes into a *string field: null sets nil.
func (p *oaParser) strPtr(dst **string) bool {
	if p.null() {
		*dst = nil
		return true
	}
	s, ok := p.str()
	if ok {
		*dst = &s
	}
	return ok
}

// strVal decodes into a string field: null leaves it.
func (p *oaParser) strVal(dst *string) bool {
	if p.null() {
		return true
	}
	s, ok := p.str()
	if ok {
		*dst = s
	}
	return ok
}

// integer decodes into an int field: null leaves it; only a plain integer
// in int's range is taken.
func (p *oaParser) integer(dst *int) bool {
	if p.null() {
		return true
	}
	start := p.i
	if p.i < len(p.b) && p.b[p.i] == '-' {
		p.i++
	}
	digits := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	if p.i == digits || (p.b[digits] == '0' && p.i-digits > 1) {
		return false
	}
	if p.i < len(p.b) {
		switch p.b[p.i] {
		case '.', 'e', 'E':
			return false
		}
	}
	v, err := strconv.ParseInt(string(p.b[start:p.i]), 10, strconv.IntSize)
	if err != nil {
		return false
	}
	*dst = int(v)
	return true
}

// skip passes over one valid JSON value of any kind.
func (p *oaParser) skip(depth int) bool {
	if depth > 200 {
		return false
	}
	switch c := p.peek(); {
	case c == '"':
		_, ok := p.str()
		return ok
	case c == '{':
		p.i++
		if p.peek() == '}' {
			p.i++
			return true
		}
		for {
			if _, ok := p.str(); !ok {
				return false
			}
			if p.peek() != ':' {
				return false
			}
			p.i++
			if !p.skip(depth + 1) {
				return false
			}
			switch p.peek() {
			case ',':
				p.i++
			case '}':
				p.i++
				return true
			default:
				return false
			}
		}
	case c == '[':
		return p.array(func() {}, func() bool { return p.skip(depth + 1) })
	case c == 't':
		return p.lit("true")
	case c == 'f':
		return p.lit("false")
	case c == 'n':
		return p.lit("null")
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	return false
}

// number passes over a number of JSON's grammar.
func (p *oaParser) number() bool {
	if p.b[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.i < len(p.b) && p.b[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		return false
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return false
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return false
		}
	}
	return true
}

func (p *oaParser) chunk(ch *oaChunk) bool {
	if p.peek() != '{' { // a top-level null leaves the chunk empty too, but rarely comes
		return false
	}
	ok := p.object([]string{"choices", "usage", "error"}, func(k int) bool {
		switch k {
		case 0:
			empty := true
			ok := p.array(func() { ch.Choices, empty = nil, false }, func() bool {
				empty = false
				ch.Choices = append(ch.Choices, oaChoice{})
				return p.choice(&ch.Choices[len(ch.Choices)-1])
			})
			if ok && empty { // [] decodes to an empty, non-nil slice
				ch.Choices = []oaChoice{}
			}
			return ok
		case 1:
			if p.null() {
				ch.Usage = nil
				return true
			}
			ch.Usage = &oaUsage{}
			return p.usage(ch.Usage)
		}
		return false // an error field: the slow path keeps its raw bytes
	})
	p.ws()
	return ok && p.i == len(p.b)
}

func (p *oaParser) choice(c *oaChoice) bool {
	return p.object([]string{"index", "delta", "finish_reason"}, func(k int) bool {
		switch k {
		case 0:
			return p.integer(&c.Index)
		case 1:
			return p.delta(&c.Delta)
		default:
			return p.strPtr(&c.FinishReason)
		}
	})
}

func (p *oaParser) delta(d *oaDelta) bool {
	return p.object([]string{"content", "reasoning_content", "reasoning", "tool_calls"}, func(k int) bool {
		switch k {
		case 0:
			return p.strPtr(&d.Content)
		case 1:
			return p.strPtr(&d.ReasoningContent)
		case 2:
			return p.strPtr(&d.Reasoning)
		}
		empty := true
		ok := p.array(func() { d.ToolCalls = nil; empty = false }, func() bool {
			empty = false
			d.ToolCalls = append(d.ToolCalls, oaToolDelta{})
			return p.toolDelta(&d.ToolCalls[len(d.ToolCalls)-1])
		})
		if ok && empty {
			d.ToolCalls = []oaToolDelta{}
		}
		return ok
	})
}

func (p *oaParser) toolDelta(t *oaToolDelta) bool {
	return p.object([]string{"index", "id", "function"}, func(k int) bool {
		switch k {
		case 0:
			if p.null() {
				t.Index = nil
				return true
			}
			var n int
			if !p.integer(&n) {
				return false
			}
			t.Index = &n
			return true
		case 1:
			return p.strVal(&t.ID)
		}
		return p.object([]string{"name", "arguments"}, func(k int) bool {
			if k == 0 {
				return p.strVal(&t.Function.Name)
			}
			return p.strVal(&t.Function.Arguments)
		})
	})
}

func (p *oaParser) usage(u *oaUsage) bool {
	return p.object([]string{"prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details"}, func(k int) bool {
		switch k {
		case 0:
			return p.integer(&u.PromptTokens)
		case 1:
			return p.integer(&u.CompletionTokens)
		case 2:
			return p.integer(&u.TotalTokens)
		}
		if p.null() {
			u.PromptDetails = nil
			return true
		}
		u.PromptDetails = &struct {
			CachedTokens int `json:"cached_tokens"`
		}{}
		return p.object([]string{"cached_tokens"}, func(int) bool { return p.integer(&u.PromptDetails.CachedTokens) })
	})
}
