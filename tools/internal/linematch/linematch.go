package linematch

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/a3s-lab/code-wasm/internal/scan"
	"github.com/a3s-lab/code-wasm/tools/internal/work"
)

// binarySniff is how much of a file's start is looked at for a NUL byte.
const binarySniff = 8 << 10

// Matcher finds matching lines. A required literal of the pattern, when
// there is one, is searched first so lines without it are never handed to
// the regexp engine, and files without it are rejected in one pass.
type Matcher struct {
	re *regexp.Regexp
	// size is the regexp program's size as Go's parser estimates it (an
	// upper bound on its instructions): a run over n bytes costs about
	// n × size steps at most, what ScanFile adds to its work meter.
	size int
	lit  []byte // required literal, or nil
	fold bool   // lit is ASCII (lower case) and matched case-insensitively
	// anchor is the offset in lit of its rarest byte (byteRank), the one
	// scanned for: the fewer candidates, the fewer checks. near is what the
	// scan checks around each hit (setLiteral).
	anchor int
	near   scan.Near
	// search is what the scan looks for: m itself when it has a required
	// literal, or, for an alternation without one (TODO|FIXME), a matcher
	// per alternative, one of whose literals every match holds; nil: no
	// prefilter, every line goes to the regexp.
	search []*Matcher
	// decides: the pattern is the literal and its neighbour sets and
	// nothing more (`ErrUnexpectedEOF`, `[A-Z]{4,}_[A-Z]{4,}`), so an
	// occurrence that passes neighbours is a match without the regexp.
	decides bool
	// before and after, when not nil, hold every byte that can sit right
	// before / after the literal in a match (from the pattern pieces next
	// to it, e.g. [A-Z] in `[A-Z]{4,}_[A-Z]{4,}`): an occurrence of lit
	// without them cannot be part of a match, so its line is not handed to
	// the regexp engine.
	before, after []*byteSet
}

// byteSet is a set of byte values.
type byteSet [256]bool

// addRange adds the bytes runes lo..hi can start or end with: the ASCII
// ones themselves, and every byte >= 0x80 when the range has non-ASCII
// runes (their encodings, and U+FFFD for invalid UTF-8, use only those).
func (s *byteSet) addRange(lo, hi rune) {
	for r := max(lo, 0); r <= hi && r < utf8.RuneSelf; r++ {
		s[r] = true
	}
	if hi >= utf8.RuneSelf {
		for b := utf8.RuneSelf; b < len(s); b++ {
			s[b] = true
		}
	}
}

// maxEdge caps how many bytes on each side of the literal are checked.
const maxEdge = 8

// edgeSeq returns byte sets for the bytes every match of re starts with
// (or, with last, ends with), nearest the literal first: seq[k] holds every
// byte that can be k bytes in from that end. fixed reports that re always
// matches exactly len(seq) bytes, so what follows it can be appended. An
// empty seq means nothing is known; a non-empty one implies re never
// matches the empty string. exact reports more: any string of one byte
// from each set is itself a match of re (so a hit that passes the sets
// needs no regexp run).
func edgeSeq(re *syntax.Regexp, last bool) (seq []*byteSet, fixed, exact bool) {
	switch re.Op {
	case syntax.OpCapture:
		return edgeSeq(re.Sub[0], last)
	case syntax.OpPlus:
		s, _, e := edgeSeq(re.Sub[0], last)
		return s, false, e // one repetition is a match
	case syntax.OpRepeat:
		if re.Min >= 1 {
			s, _, e := edgeSeq(re.Sub[0], last)
			return s, false, e && re.Min == 1
		}
	case syntax.OpAlternate:
		var u byteSet
		for _, sub := range re.Sub {
			e, _, _ := edgeSeq(sub, last)
			if len(e) == 0 {
				return nil, false, false
			}
			for b, ok := range e[0] {
				u[b] = u[b] || ok
			}
		}
		return []*byteSet{&u}, false, false
	case syntax.OpCharClass:
		var s byteSet
		for i := 0; i+1 < len(re.Rune); i += 2 {
			s.addRange(re.Rune[i], re.Rune[i+1])
		}
		n := len(re.Rune)
		ascii := n > 0 && re.Rune[n-1] < utf8.RuneSelf // one byte, and the set is exact
		return []*byteSet{&s}, ascii, ascii
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 || slices.Contains(re.Rune, utf8.RuneError) {
			return nil, false, false // U+FFFD also matches one invalid byte
		}
		b := []byte(string(re.Rune))
		if last {
			slices.Reverse(b)
		}
		for _, c := range b[:min(len(b), maxEdge)] {
			var s byteSet
			s[c] = true
			seq = append(seq, &s)
		}
		return seq, len(b) <= maxEdge, len(b) <= maxEdge
	case syntax.OpConcat:
		pieces := slices.Clone(re.Sub)
		if last {
			slices.Reverse(pieces)
		}
		exact = true
		i := 0
		for ; i < len(pieces) && len(seq) < maxEdge; i++ {
			// x+ next to copies of x (how Simplify writes x{n,}), x one
			// byte wide: n bytes of x.
			if p := pieces[i]; p.Op == syntax.OpPlus {
				if s, f, e := edgeSeq(p.Sub[0], last); f && len(s) == 1 {
					j := i
					for ; j < len(pieces) && len(seq) < maxEdge && (j == i || pieces[j].Equal(p.Sub[0])); j++ {
						seq = append(seq, s[0])
					}
					return seq, false, exact && e && j == len(pieces)
				}
			}
			s, f, e := edgeSeq(pieces[i], last)
			seq = append(seq, s...)
			if !f || len(s) == 0 {
				return seq[:min(len(seq), maxEdge)], false, exact && e && i == len(pieces)-1 && len(seq) <= maxEdge
			}
			exact = exact && e
		}
		if len(seq) > maxEdge || i < len(pieces) {
			return seq[:min(len(seq), maxEdge)], false, false // cut short
		}
		return seq, true, exact && len(seq) > 0
	}
	return nil, false, false
}

// MaxProgram caps a pattern's regexp program (Go's estimate of its
// instructions, progSize). The regexp engine's work per byte grows with
// the program: a 2 MB line took 32 s for `(a|b|c|d|e|f|g|h){300}z` (903
// instructions) and 106 s for `[a-z]{1,1000}z` (2,002); Go itself accepts
// programs of millions. Real patterns are small: `func \(\w+ \*?\w+\)
// Close\(` is 23, an alternation of 300 identifiers 106 (Go shares their
// prefixes), `.{1000}` 1,002. Every run is also metered and cancellable
// (ScanFile), so the cap bounds the memory and the cost of one step, not
// the time a search may take.
const MaxProgram = 10_000

// ProgramSizeError is New's error for a pattern past MaxProgram.
type ProgramSizeError int

func (e ProgramSizeError) Error() string {
	return fmt.Sprintf("the pattern compiles to about %d regexp instructions; the limit is %d (a counted repeat such as {1,1000} copies what it repeats: bound it more tightly, or search for a simpler pattern and filter the lines)", int(e), MaxProgram)
}

// New compiles pattern (Go RE2 syntax; ignoreCase: as (?i)) into a
// Matcher. A pattern past MaxProgram is refused with a ProgramSizeError;
// an invalid one with the regexp package's error.
func New(pattern string, ignoreCase bool) (*Matcher, error) {
	flags := syntax.Perl
	expr := pattern
	if ignoreCase {
		flags |= syntax.FoldCase
		expr = "(?i)" + pattern
	}
	st, err := syntax.Parse(pattern, flags)
	if err != nil {
		if _, cerr := regexp.Compile(expr); cerr != nil {
			return nil, cerr // the regexp package's wording
		}
		return nil, err
	}
	size := progSize(st)
	if size > MaxProgram {
		return nil, ProgramSizeError(size)
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, err
	}
	m := &Matcher{re: re, size: size}
	st = st.Simplify()
	if req := literalOf(st); len(req.runes) > 0 {
		if m.useLiteral(req); m.lit != nil {
			m.search = []*Matcher{m}
		}
		return m, nil
	}
	// TODO|FIXME: every match holds one of the alternatives' literals.
	top := st
	for top.Op == syntax.OpCapture {
		top = top.Sub[0]
	}
	if top.Op == syntax.OpAlternate && len(top.Sub) <= maxAlternatives {
		decides := true
		for _, sub := range top.Sub {
			b := &Matcher{}
			if req := literalOf(sub); len(req.runes) > 0 {
				b.useLiteral(req)
			}
			if b.lit == nil {
				return &Matcher{re: re, size: size}, nil // an alternative without a literal: no prefilter
			}
			decides = decides && b.decides
			m.search = append(m.search, b)
		}
		m.decides = decides
	}
	return m, nil
}

// progSize estimates the size of re's compiled program as Go's parser
// does before it accepts a pattern (regexp/syntax calcSize): an upper
// bound on its instructions, computed without compiling it.
func progSize(re *syntax.Regexp) int {
	sat := func(n int) int { return min(n, 1<<30) }
	var size int
	switch re.Op {
	case syntax.OpLiteral:
		size = len(re.Rune)
	case syntax.OpCapture, syntax.OpStar:
		size = 2 + progSize(re.Sub[0])
	case syntax.OpPlus, syntax.OpQuest:
		size = 1 + progSize(re.Sub[0])
	case syntax.OpConcat, syntax.OpAlternate:
		for _, sub := range re.Sub {
			size = sat(size + progSize(sub))
		}
		if re.Op == syntax.OpAlternate {
			size += len(re.Sub) - 1
		}
	case syntax.OpRepeat:
		sub := progSize(re.Sub[0])
		switch {
		case re.Max == -1 && re.Min == 0:
			size = 2 + sub
		case re.Max == -1:
			size = sat(1 + re.Min*sub)
		default:
			size = sat(re.Max*sub + re.Max - re.Min)
		}
	}
	return max(1, size)
}

// maxAlternatives caps the alternatives searched for one by one; each is
// a scan of the file (amortised: each alternative's next occurrence is
// kept until passed).
const maxAlternatives = 8

// useLiteral sets m up to search for req's literal (if it can: a
// case-insensitive literal must be ASCII-foldable) with its neighbour sets.
func (m *Matcher) useLiteral(req reqLiteral) {
	lit, fold := req.runes, req.fold
	m.before, m.after = req.before, req.after
	s := string(lit)
	switch {
	case !fold || !hasLetter(s):
		m.setLiteral([]byte(s), false)
	case asciiFoldable(s):
		m.setLiteral([]byte(strings.ToLower(s)), true)
	}
	// A line is matched without its "\n" and a CRLF line without its
	// "\r": a hit that takes in either is no proof.
	m.decides = m.lit != nil && req.decides && !strings.ContainsAny(s, "\r\n") &&
		!slices.ContainsFunc(append(slices.Clone(m.before), m.after...), func(b *byteSet) bool { return b['\n'] || b['\r'] })
}

// find returns the first occurrence of m's literal at or after pos whose
// neighbours can belong to a match, or -1.
func (m *Matcher) find(data []byte, pos int) int {
	for {
		at := m.index(data, pos)
		if at < 0 || m.neighbours(data, at) {
			return at
		}
		pos = at + 1
	}
}

// hasLetter reports whether s has a rune that case folding changes (ß
// has no upper case of its own, yet folds to ẞ).
func hasLetter(s string) bool {
	for _, r := range s {
		if unicode.SimpleFold(r) != r {
			return true
		}
	}
	return false
}

// asciiFoldable: ASCII only, and no letter with a non-ASCII case fold
// (k: KELVIN SIGN, s: LONG S).
func asciiFoldable(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		if s[i] >= utf8.RuneSelf || c == 'k' || c == 's' {
			return false
		}
	}
	return true
}

// requiredLiteral returns the longest literal every match must contain.
func requiredLiteral(re *syntax.Regexp) ([]rune, bool) {
	l := literalOf(re)
	return l.runes, l.fold
}

// reqLiteral is a literal every match contains, with what must surround it
// (nil: anything). decides reports that the literal with its surroundings
// is the whole pattern: an occurrence whose surroundings pass is a match.
type reqLiteral struct {
	runes         []rune
	fold          bool
	before, after []*byteSet
	decides       bool
}

func literalOf(re *syntax.Regexp) reqLiteral {
	switch re.Op {
	case syntax.OpLiteral:
		if slices.Contains(re.Rune, utf8.RuneError) {
			return reqLiteral{} // U+FFFD also matches an invalid byte, which a byte search would miss
		}
		return reqLiteral{runes: re.Rune, fold: re.Flags&syntax.FoldCase != 0, decides: true}
	case syntax.OpCapture, syntax.OpPlus:
		return literalOf(re.Sub[0]) // one repetition is a match
	case syntax.OpRepeat:
		if re.Min >= 1 {
			l := literalOf(re.Sub[0])
			l.decides = l.decides && re.Min == 1
			return l
		}
	case syntax.OpConcat:
		var best reqLiteral
		k := -1
		for i, s := range re.Sub {
			if l := literalOf(s); len(string(l.runes)) > len(string(best.runes)) {
				best, k = l, i
			}
		}
		// Neighbours are known only when the literal is a piece of this
		// concatenation itself, so the pieces next to it touch it.
		// The literal decides when at most one piece sits on each side of
		// it and that piece's sets are exact.
		best.decides = false
		if k >= 0 && re.Sub[k].Op == syntax.OpLiteral {
			beforeExact, afterExact := k == 0, k == len(re.Sub)-1
			if k > 0 {
				best.before, _, beforeExact = edgeSeq(re.Sub[k-1], true)
				beforeExact = beforeExact && k == 1
			}
			if k+1 < len(re.Sub) {
				best.after, _, afterExact = edgeSeq(re.Sub[k+1], false)
				afterExact = afterExact && k+2 == len(re.Sub)
			}
			best.decides = beforeExact && afterExact
		}
		return best
	}
	return reqLiteral{}
}

// setLiteral makes lit the required literal, picks its anchor and what
// the byte scan checks around each anchor hit: the literal's own first and
// last bytes, or, where the literal ends at the anchor, the first byte the
// pattern allows next to it (m.before, m.after; set them first).
func (m *Matcher) setLiteral(lit []byte, fold bool) {
	m.lit, m.fold, m.anchor = lit, fold, 0
	rank := func(c byte) uint8 {
		if fold && c >= 'a' && c <= 'z' {
			return max(byteRank[c], byteRank[c-0x20]) // both cases are hits
		}
		return byteRank[c]
	}
	for i := range lit {
		if rank(lit[i]) < rank(lit[m.anchor]) {
			m.anchor = i
		}
	}
	one := func(c byte) *[256]bool {
		var s [256]bool
		s[c] = true
		if fold && c >= 'a' && c <= 'z' {
			s[c-0x20] = true
		}
		return &s
	}
	n, a := len(lit), m.anchor
	m.near = scan.Near{}
	switch {
	case a > 0:
		m.near.Prev, m.near.PrevDist = one(lit[0]), a
	case len(m.before) > 0:
		m.near.Prev, m.near.PrevDist = (*[256]bool)(m.before[0]), 1
	}
	switch {
	case a < n-1:
		m.near.Next, m.near.NextDist = one(lit[n-1]), n-1-a
	case len(m.after) > 0:
		m.near.Next, m.near.NextDist = (*[256]bool)(m.after[0]), 1
	}
}

// index returns the offset of the first occurrence of the literal in data
// at or after from, or -1. It scans for the anchor byte, with m.near
// ruling out most hits in the scan itself, and checks the literal around
// the rest.
func (m *Matcher) index(data []byte, from int) int {
	n, a := len(m.lit), m.anchor
	for from+n <= len(data) {
		j := scan.IndexNear(data, from+a, m.lit[a], m.fold, &m.near)
		if j < 0 {
			return -1
		}
		at := j - a
		if at+n > len(data) {
			return -1 // an anchor hit too near the end for the literal
		}
		// Up to two bytes, the scan has checked the whole literal.
		if n <= 2 || m.fold && equalFoldLower(data[at:at+n], m.lit) || !m.fold && string(data[at:at+n]) == string(m.lit) {
			return at
		}
		from = at + 1
	}
	return -1
}

// equalFoldLower reports whether b equals lower, an ASCII lower-case
// string, ignoring ASCII case (the literal has no letter with a non-ASCII
// fold: asciiFoldable).
func equalFoldLower(b, lower []byte) bool {
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// neighbours reports whether the bytes around the literal found at at can
// belong to a match (see Matcher.before).
func (m *Matcher) neighbours(data []byte, at int) bool {
	for k, set := range m.before {
		if at-1-k < 0 || !set[data[at-1-k]] {
			return false
		}
	}
	end := at + len(m.lit)
	for k, set := range m.after {
		if end+k >= len(data) || !set[data[end+k]] {
			return false
		}
	}
	return true
}

// Scan reports each matching line (0-based index, byte start and end
// without its "\n") to fn in order and returns how many lines matched. With
// fn == nil it only counts, and no line numbers or match text are built.
func (m *Matcher) Scan(data []byte, fn func(idx, ls, le int)) int {
	n, _, _ := m.ScanFile(nil, data, fn, false)
	return n
}

// matchLine runs the regexp over one line, adding its cost to w. A line
// that could cost more than a work step on its own (long, or a large
// program) is read through pacedLine, which checks w's context as the
// engine goes; the error is the context's, and the answer is then void.
func (m *Matcher) matchLine(w *work.Meter, line []byte) (bool, error) {
	cost := len(line) * m.size
	if w == nil || cost <= work.Step {
		return m.re.Match(line), w.Add(cost)
	}
	r := pacedLine{b: line, w: w, every: max(1, work.Step/m.size)}
	ok := m.re.MatchReader(&r)
	return ok, r.err
}

// FirstMatch is the byte span of the first match in line (nil when there
// is none), read through pacedLine so a long line stays cancellable; the
// error is w's context's. grep uses it to show a long line around its match.
func (m *Matcher) FirstMatch(w *work.Meter, line []byte) ([]int, error) {
	r := pacedLine{b: line, w: w, every: max(1, work.Step/max(1, m.size))}
	loc := m.re.FindReaderIndex(&r)
	return loc, r.err
}

// pacedLine hands a line to the regexp engine rune by rune
// (regexp.MatchReader), checking the context every `every` runes (about a
// work step of the engine's): under js/wasm that is also where the host
// gets its turns. Once the context is done it ends the input, so the
// engine stops within a step. Runes are decoded as regexp decodes a
// []byte (an invalid byte is U+FFFD of width 1), so the answer is the
// same as Match's.
type pacedLine struct {
	b     []byte
	i     int
	w     *work.Meter
	every int
	n     int
	err   error
}

func (r *pacedLine) ReadRune() (rune, int, error) {
	if r.n++; r.n >= r.every {
		r.n = 0
		if r.err == nil {
			r.err = r.w.Poll()
		}
	}
	if r.err != nil || r.i >= len(r.b) {
		return 0, 0, io.EOF
	}
	if c := r.b[r.i]; c < utf8.RuneSelf {
		r.i++
		return rune(c), 1, nil
	}
	c, n := utf8.DecodeRune(r.b[r.i:])
	r.i += n
	return c, n, nil
}

// isBinary: a NUL byte in the first 8 KiB.
func isBinary(data []byte) bool {
	return scan.IndexByte(data[:min(len(data), binarySniff)], 0) >= 0
}

// ScanFile is Scan, but with skipBinary a binary file reports no match
// and binary == true. With a required literal the binary check is made at
// the literal's first occurrence, not up front: a file without it has no
// match either way, and most files of a search have none, so they are never
// sniffed.
//
// The regexp runs add their cost to w (nil: none); once w's context is
// done the scan stops and returns its error.
func (m *Matcher) ScanFile(w *work.Meter, data []byte, fn func(idx, ls, le int), skipBinary bool) (count int, binary bool, err error) {
	if skipBinary && m.search == nil && isBinary(data) {
		return 0, true, nil
	}
	lineNo, numbered := 0, 0 // line index of byte offset `numbered`
	hit := func(ls, le int) {
		count++
		if fn != nil {
			lineNo += scan.Count(data[numbered:ls], '\n')
			numbered = ls
			fn(lineNo, ls, le)
		}
	}
	if m.search != nil {
		// The earliest occurrence of any searched literal (one, or each
		// alternative's), whose neighbours can belong to a match; each
		// one's next occurrence is kept until the scan passes it (-2: not
		// looked for yet, -1: no more).
		var buf [maxAlternatives]int
		next := buf[:len(m.search)]
		for i := range next {
			next[i] = -2
		}
		for pos := 0; pos < len(data); {
			at := -1
			for i, b := range m.search {
				if next[i] != -1 && next[i] < pos {
					next[i] = b.find(data, pos)
				}
				if next[i] >= 0 && (at < 0 || next[i] < at) {
					at = next[i]
				}
			}
			if at < 0 {
				break
			}
			if skipBinary {
				if isBinary(data) {
					return 0, true, nil
				}
				skipBinary = false
			}
			// pos is a line start: 0, or just after the last line handed on.
			ls := pos + bytes.LastIndexByte(data[pos:at], '\n') + 1
			le := len(data)
			if j := scan.IndexByte(data[at:], '\n'); j >= 0 {
				le = at + j
			}
			ok := m.decides
			if !ok {
				if ok, err = m.matchLine(w, trimCR(data[ls:le])); err != nil {
					return count, false, err
				}
			}
			if ok {
				hit(ls, le)
			}
			pos = le + 1
		}
		return count, false, nil
	}
	for ls := 0; ls < len(data); {
		le := len(data)
		if j := scan.IndexByte(data[ls:], '\n'); j >= 0 {
			le = ls + j
		}
		ok, err := m.matchLine(w, trimCR(data[ls:le]))
		if err != nil {
			return count, false, err
		}
		if ok {
			hit(ls, le)
		}
		ls = le + 1
	}
	return count, false, nil
}

// trimCR drops the '\r' of a CRLF line ending, so a line is matched as it
// is shown (without it) and `$` matches before "\r\n", as ripgrep --crlf.
func trimCR(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\r' {
		return line[:n-1]
	}
	return line
}
