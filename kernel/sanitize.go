package kernel

import (
	"encoding/json"
	"fmt"
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

// all cleans texts (none empty) in one go: TrySanitizeAll, SanitizeAll, or
// one Sanitize each.
func (c *cleaner) all(texts []string) []string {
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
	if _, ok := c.p.(FallibleSanitizer); ok {
		return c.all([]string{s})[0]
	}
	return c.p.Sanitize(s)
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
