package kernel

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// FallibleSanitizer may be implemented by a SecurityProvider that can fail
// (a host provider that throws, answers badly or not within its timeout).
// TrySanitizeAll returns a slice of the same length, or an error. After a
// failure the kernel withholds that text and every string the same
// invocation still had to clean (arguments, output, error kind, metadata,
// deltas, reasons) without asking the provider again: a provider that
// never answers costs one timeout per call, not one per part.
type FallibleSanitizer interface {
	TrySanitizeAll(texts []string) ([]string, error)
}

// Withheld is what a text becomes when the security provider failed.
func Withheld(err error) string {
	return "[output withheld: the security provider failed: " + err.Error() + "]"
}

// cleaner is the security provider as one invocation (or one listing of
// pending confirmations) uses it. It remembers the first failure of a
// FallibleSanitizer and withholds from then on. Safe for concurrent use
// (deltas are cleaned on the tool's goroutine).
type cleaner struct {
	p      SecurityProvider
	mu     sync.Mutex
	failed error
}

func (c *cleaner) fail(err error) {
	c.mu.Lock()
	if c.failed == nil {
		c.failed = err
	}
	c.mu.Unlock()
}

func (c *cleaner) failure() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failed
}

// all cleans texts (none empty): each as it is, then every escaped
// representation inside it (unquoted).
func (c *cleaner) all(texts []string) []string {
	return c.unquoted(c.provide(texts), maxQuoteDepth)
}

// provide cleans texts (none empty) in one go: TrySanitizeAll,
// SanitizeAll, or one Sanitize each.
func (c *cleaner) provide(texts []string) []string {
	withhold := func(err error) []string {
		out := make([]string, len(texts))
		for i := range out {
			out[i] = Withheld(err)
		}
		return out
	}
	if f, ok := c.p.(FallibleSanitizer); ok {
		if err := c.failure(); err != nil {
			return withhold(err)
		}
		out, err := f.TrySanitizeAll(texts)
		if err == nil && len(out) != len(texts) {
			err = fmt.Errorf("it answered %d texts for %d", len(out), len(texts))
		}
		if err != nil {
			c.fail(err)
			return withhold(err)
		}
		return out
	}
	if b, ok := c.p.(BatchSanitizer); ok {
		if out := b.SanitizeAll(texts); len(out) == len(texts) {
			return out
		}
		// A provider that breaks its contract must not leak: clean one by one.
	}
	out := make([]string, len(texts))
	for i, t := range texts {
		out[i] = c.p.Sanitize(t)
	}
	return out
}

// str cleans one string.
func (c *cleaner) str(s string) string {
	if c == nil || c.p == nil || s == "" {
		return s
	}
	return c.all([]string{s})[0]
}

// value cleans every string (and map key) in v in one batch.
func (c *cleaner) value(v any) any {
	if c == nil || c.p == nil || v == nil {
		return v
	}
	var in []string
	mapStrings(v, func(s string) string {
		if s != "" {
			in = append(in, s)
		}
		return s
	})
	if len(in) == 0 {
		return v
	}
	out := c.all(in)
	i := 0
	return mapStrings(v, func(s string) string {
		if s == "" {
			return s
		}
		i++
		return out[i-1]
	})
}

// result cleans a result's output, error kind and metadata.
func (c *cleaner) result(res *Result) {
	if c == nil || c.p == nil {
		return
	}
	res.Output = c.str(res.Output)
	if res.ErrorKind != nil {
		res.ErrorKind.mapStrings(c.str)
	}
	if res.Metadata != nil {
		if m, ok := c.value(res.Metadata).(map[string]any); ok {
			res.Metadata = m
		}
	}
}

// args is the argument object as events and pending confirmations show it:
// cleaned by the security provider.
func (c *cleaner) args(args json.RawMessage) json.RawMessage {
	if c == nil || c.p == nil {
		return args
	}
	if r, ok := c.value(args).(json.RawMessage); ok {
		return r
	}
	return json.RawMessage(c.str(string(args)))
}

// maxQuoteDepth is how many levels of quoting the cleaner looks through: a
// JSON string inside a JSON string inside an output is two.
const maxQuoteDepth = 4

// unquoted cleans what texts carry escaped. The provider matches a secret
// as it is; a tool may emit it escaped, as a JSON string (a program's
// result in its output, a script result's own JSON text) or a Go-quoted
// one (%q in a message), where `"`, `\`, control and non-ASCII characters
// are spelled differently. So every double-quoted literal in a text that
// has an escape is decoded, the decoded text cleaned (itself, then its
// own literals, to depth levels), and a literal that cleaning changed is
// written back encoded the same way. All literals of one level go to the
// provider in one batch. If the provider fails, every text is withheld.
func (c *cleaner) unquoted(texts []string, depth int) []string {
	if depth == 0 {
		return texts
	}
	lits := make([][]quoted, len(texts))
	var vals []string
	for i, t := range texts {
		if strings.IndexByte(t, '\\') < 0 {
			continue
		}
		lits[i] = quotedLiterals(t)
		for _, l := range lits[i] {
			vals = append(vals, l.val)
		}
	}
	if len(vals) == 0 {
		return texts
	}
	clean := c.unquoted(c.provide(vals), depth-1)
	if err := c.failure(); err != nil {
		out := make([]string, len(texts))
		for i := range out {
			out[i] = Withheld(err)
		}
		return out
	}
	out := make([]string, len(texts))
	k := 0
	for i, t := range texts {
		var b strings.Builder
		last := 0
		for _, l := range lits[i] {
			v := clean[k]
			k++
			if v == l.val {
				continue
			}
			b.WriteString(t[last:l.start])
			b.WriteString(l.encode(v))
			last = l.end
		}
		if last == 0 {
			out[i] = t
			continue
		}
		b.WriteString(t[last:])
		out[i] = b.String()
	}
	return out
}

// quoted is one escaped string literal in a text: s[start:end] is what
// is between its quotes, and decodes to val as JSON or (goSyntax) only as
// a Go literal.
type quoted struct {
	start, end int
	val        string
	goSyntax   bool
}

// encode spells v as the literal's content was spelled.
func (q quoted) encode(v string) string {
	if q.goSyntax {
		s := strconv.Quote(v)
		return s[1 : len(s)-1]
	}
	var b strings.Builder
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	_ = e.Encode(v) // a string always encodes
	s := b.String()
	return s[1 : len(s)-2] // the quotes and the encoder's newline
}

// quotedLiterals finds the double-quoted literals of s that contain a
// backslash escape and decode as JSON or Go strings. A quote is a
// delimiter when an even number of backslashes precedes it; which
// delimiters open and which close is not known in free text (an odd quote
// in prose shifts the pairing), so the text between every two
// consecutive delimiters on a line is tried. The spans do not overlap,
// and the scan is linear.
func quotedLiterals(s string) []quoted {
	var out []quoted
	prev, slashes, esc := -1, 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			slashes++
			esc = true
			continue
		case c == '"' && slashes%2 == 0:
			if prev >= 0 && esc {
				lit := s[prev : i+1]
				var v string
				if json.Unmarshal([]byte(lit), &v) == nil {
					out = append(out, quoted{start: prev + 1, end: i, val: v})
				} else if v, err := strconv.Unquote(lit); err == nil {
					out = append(out, quoted{start: prev + 1, end: i, val: v, goSyntax: true})
				}
			}
			prev, esc = i, false
		case c < 0x20:
			prev, esc = -1, false // a literal never spans a raw control character
		}
		slashes = 0
	}
	return out
}
