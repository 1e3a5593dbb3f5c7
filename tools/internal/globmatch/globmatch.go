package globmatch

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/a3s-lab/code-wasm/tools/internal/work"
	"github.com/bmatcuk/doublestar/v4"
)

// Limits on a glob pattern (glob's pattern, grep's glob). doublestar
// matches {a,b} by trying each alternative against the rest of the name,
// so braces in sequence multiply its work on every name: {a,a} sixteen
// times took 30 ms per name and doubled with each pair, inside one
// uninterruptible call. Compile refuses patterns past these limits and
// expands the braces once, up front, so a name costs at most one
// brace-free match per alternative (each polynomial: doublestar keeps one
// backtrack point per '*' and '**'). Real patterns are far inside them:
// the longest found in this repository's node_modules was 29 bytes with
// braces one deep and 6 alternatives (`**/*.{js,cjs,ts,mjs,jsx,tsx}`); a
// long extension list over a few directories is about a hundred.
const (
	maxGlobBytes        = 1024
	maxBraceDepth       = 8
	maxGlobAlternatives = 1024
)

// Pattern is a checked glob pattern with its braces expanded.
type Pattern struct {
	alts []*nameMatch // one per distinct brace-free alternative
}

// Compile checks a valid doublestar pattern (doublestar.ValidatePattern)
// against the limits above and expands its braces. The error says which
// limit the pattern passes.
func Compile(pattern string) (*Pattern, error) {
	if len(pattern) > maxGlobBytes {
		return nil, fmt.Errorf("the pattern is %d bytes long; the limit is %d bytes", len(pattern), maxGlobBytes)
	}
	var s braceScan
	s.p = pattern
	n, _ := s.count(0, 0)
	if s.depth > maxBraceDepth {
		return nil, fmt.Errorf("the pattern nests braces %d deep; the limit is %d", s.depth, maxBraceDepth)
	}
	if n > maxGlobAlternatives {
		return nil, fmt.Errorf("the pattern's braces expand to more than %d alternatives (each {a,b} multiplies the alternatives of the braces in sequence with it); the limit is %d",
			maxGlobAlternatives, maxGlobAlternatives)
	}
	alts, _ := s.expand(0, 0)
	g := &Pattern{}
	seen := map[string]bool{}
	for _, a := range alts {
		if !seen[a] {
			seen[a] = true
			g.alts = append(g.alts, newNameMatch(a))
		}
	}
	return g, nil
}

// Match reports whether doublestar.Match matches name with one of the
// pattern's brace-free expansions: what doublestar.Match(pattern, name)
// says, but for one corner where doublestar is not its own expansion
// (`a*{,b}` does not match "a" there; substitute in globmatch_test.go).
func (g *Pattern) Match(name string) bool {
	for _, m := range g.alts {
		if m.match(name) {
			return true
		}
	}
	return false
}

// MatchIn is Match (base: name is a base name, which holds no '/') with the work metered per
// alternative, so the context is checked within one name's match: a
// brace-free match costs at most about (pattern bytes + 1) × (name bytes
// + 1) steps (doublestar keeps one backtrack point for '*' and one for
// '**'; the slowest found, `**/` and `*/` 500 times against a 4 KiB path
// of single-letter segments, took 53 ms natively), and there may be 1024
// alternatives.
func (g *Pattern) MatchIn(w *work.Meter, name string, base bool) (bool, error) {
	for _, m := range g.alts {
		if err := w.Add((len(m.pattern) + 1) * (len(name) + 1)); err != nil {
			return false, err
		}
		if base && m.matchBase(name) || !base && m.match(name) {
			return true, nil
		}
	}
	return false, nil
}

// braceScan reads a pattern's braces as doublestar does: a '{' opens
// alternatives separated by ',' up to its matching '}', a character class
// ([...], up to the first ']') and an escaped byte are literal text.
// doublestar replaces a brace group by each alternative in turn; the
// expansions here are what those replacements produce.
type braceScan struct {
	p     string
	depth int // deepest nesting seen
}

// skip returns the index after the literal unit at i: an escape pair, a
// character class, or one byte.
func (s *braceScan) skip(i int) int {
	switch s.p[i] {
	case '\\':
		return min(i+2, len(s.p))
	case '[':
		for j := i + 1; j < len(s.p); j++ {
			if s.p[j] == '\\' {
				j++
			} else if s.p[j] == ']' {
				return j + 1
			}
		}
		return len(s.p)
	}
	return i + 1
}

// count returns how many expansions the sequence at i has (capped just
// above maxGlobAlternatives) and the index where it ends: the end of the
// pattern, or, inside braces (depth > 0), a ',' or '}' of this level.
func (s *braceScan) count(i, depth int) (int, int) {
	s.depth = max(s.depth, depth)
	n := 1
	for i < len(s.p) {
		switch c := s.p[i]; {
		case c == '{':
			alts := 0
			for j := i + 1; ; {
				k, end := s.count(j, depth+1)
				alts = min(alts+k, maxGlobAlternatives+1)
				if end >= len(s.p) || s.p[end] == '}' {
					i = end + 1
					break
				}
				j = end + 1 // after the ','
			}
			n = min(n*alts, maxGlobAlternatives+1)
		case depth > 0 && (c == ',' || c == '}'):
			return n, i
		default:
			i = s.skip(i)
		}
	}
	return n, i
}

// expand returns the brace-free expansions of the sequence at i and where
// it ends (as count). Call it only on a pattern count has passed: every
// list it builds is at most the pattern's number of expansions.
func (s *braceScan) expand(i, depth int) ([]string, int) {
	out := []string{""}
	lit := i // start of the pending literal text
	flush := func(end int) {
		for k := range out {
			out[k] += s.p[lit:end]
		}
	}
	for i < len(s.p) {
		switch c := s.p[i]; {
		case c == '{':
			flush(i)
			var alts []string
			for j := i + 1; ; {
				a, end := s.expand(j, depth+1)
				alts = append(alts, a...)
				if end >= len(s.p) || s.p[end] == '}' {
					i = end + 1
					break
				}
				j = end + 1
			}
			next := make([]string, 0, len(out)*len(alts))
			for _, o := range out {
				for _, a := range alts {
					next = append(next, o+a)
				}
			}
			out, lit = slices.Clip(next), i
		case depth > 0 && (c == ',' || c == '}'):
			flush(i)
			return out, i
		default:
			i = s.skip(i)
		}
	}
	flush(min(i, len(s.p)))
	return out, i
}

// BaseName returns the name pattern of "**/<name pattern>" (no '/'
// after the "**/", and not "**" itself), which matches at any depth: such a
// pattern matches a path exactly when the name pattern matches its base
// name. nil for any other pattern. The pattern has passed Compile, and
// so has its tail.
func BaseName(pattern string) *Pattern {
	rest, ok := strings.CutPrefix(pattern, "**/")
	if !ok || strings.ContainsAny(rest, "/\\") {
		return nil
	}
	g, err := Compile(rest)
	if err != nil || slices.ContainsFunc(g.alts, func(m *nameMatch) bool { return m.pattern == "**" }) {
		return nil
	}
	return g
}

// Suffix returns the literal of a pattern that is "*" + literal and
// nothing else (`*.go`: the names ending in ".go"); "" for any other.
func (g *Pattern) Suffix() string {
	if len(g.alts) == 1 && g.alts[0].suffix {
		return g.alts[0].last
	}
	return ""
}

// nameMatch matches names as doublestar.Match(pattern, name) does.
// Patterns whose only wildcard is '*' between ASCII literals (`*.go`,
// `*_test.go`, `Makefile`, `x*y*z`), the common case, are matched with
// prefix, suffix and substring tests instead of doublestar's rune-by-rune
// matcher, which dominated walking a large tree (see RATIONALE.md);
// anything else goes to doublestar. The prefix and suffix are compared
// byte by byte in line: under js/wasm a call to the runtime's memequal per
// name (two per name) was a quarter of a glob.
type nameMatch struct {
	pattern     string
	simple      bool     // only '*' wildcards, ASCII
	stars       bool     // at least one '*' (else: an exact name)
	suffix      bool     // "*" + last: the commonest pattern, tested first
	first, last string   // the literals before the first '*' and after the last
	mid         []string // the literals between
}

func newNameMatch(pattern string) *nameMatch {
	m := &nameMatch{pattern: pattern, simple: !strings.Contains(pattern, "**")}
	for i := 0; i < len(pattern) && m.simple; i++ {
		c := pattern[i]
		m.simple = c < utf8.RuneSelf && c != '/' && !strings.ContainsRune("?[]{}\\,!", rune(c))
	}
	if !m.simple {
		return m
	}
	parts := strings.Split(pattern, "*")
	m.stars = len(parts) > 1
	m.first, m.last, m.mid = parts[0], parts[len(parts)-1], parts[1:max(1, len(parts)-1)]
	m.suffix = len(parts) == 2 && m.first == ""
	return m
}

// match is doublestar.Match(pattern, name) for any name.
func (m *nameMatch) match(name string) bool {
	return m.matchBase(name) && (!m.simple || strings.IndexByte(name, '/') < 0)
}

// matchBase is match for a base name, which holds no '/' (a walk's
// Entry.Name): '*' cannot have crossed one, so that test is left out.
func (m *nameMatch) matchBase(name string) bool {
	if m.suffix {
		return hasSuffix(name, m.last)
	}
	return m.matchOther(name)
}

func (m *nameMatch) matchOther(name string) bool {
	if !m.simple {
		ok, _ := doublestar.Match(m.pattern, name)
		return ok
	}
	if !m.stars {
		return name == m.pattern
	}
	first, last := m.first, m.last
	if len(name) < len(first)+len(last) || !hasSuffix(name, last) {
		return false
	}
	for i := 0; i < len(first); i++ {
		if name[i] != first[i] {
			return false
		}
	}
	s := name[len(first) : len(name)-len(last)]
	for _, part := range m.mid {
		i := strings.Index(s, part)
		if i < 0 {
			return false
		}
		s = s[i+len(part):]
	}
	return true
}

// hasSuffix is strings.HasSuffix comparing in line from the end, where
// names differ most (`.go`, `.s`, `_test.go`).
func hasSuffix(s, suffix string) bool {
	if len(s) < len(suffix) {
		return false
	}
	s = s[len(s)-len(suffix):]
	for i := len(suffix) - 1; i >= 0; i-- {
		if s[i] != suffix[i] {
			return false
		}
	}
	return true
}
