package tools

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"regexp/syntax"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/a3s-lab/code-wasm/internal/scan"
	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/bmatcuk/doublestar/v4"
)

const (
	maxGrepContext = 100
	binarySniff    = 8 << 10
)

// Grep is the `grep` tool: a regular-expression search over workspace
// files (REFERENCE.md §2.5).
type Grep struct{ ws *workspace.Workspace }

func (*Grep) Name() string { return "grep" }
func (*Grep) Description() string {
	return "Search file contents with a regular expression (Go RE2 syntax: no backreferences or lookaround; matched line by line, so a pattern never spans lines). " +
		"path limits the search to a directory or one file (default: the whole workspace). glob filters files: a glob without '/' (e.g. `*.go`, `*.{ts,tsx}`) " +
		"matches the file's base name, a glob with '/' (e.g. `src/**/*.go`) matches the path relative to path. Binary files (a NUL byte in the first 8 KiB) are skipped. " +
		"-i ignores case; context adds lines before and after each match (content mode). output_mode picks the smallest useful answer: " +
		"content (default; matching lines as path:line:text, capped at 100 KiB; a line over 2000 characters is cut, each cut end marked [… N characters cut], around its first match when that lies past the cut), files_with_matches (paths, sorted, paginated with limit/cursor), " +
		"count (path: K matching line(s), paginated), summary (totals only). Prefer files_with_matches, count or summary to survey, then read the files. " +
		"Patterns compiling to over 10000 regexp instructions (long counted repeats such as [a-z]{1,1000} several times) are refused."
}
func (*Grep) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"pattern":{"type":"string","minLength":1,"description":"Regular expression (Go RE2 syntax)."},` +
		`"path":{"type":"string","description":"Directory or file to search, relative to the workspace root. Default: the root."},` +
		`"glob":{"type":"string","description":"File filter, e.g. *.go or *.{ts,tsx} (base name) or src/**/*.go (path relative to path)."},` +
		`"context":{"type":"integer","minimum":0,"maximum":100,"description":"Lines of context before and after each match (content mode). Default 0."},` +
		`"-i":{"type":"boolean","default":false,"description":"Case-insensitive search."},` +
		`"output_mode":{"type":"string","enum":["content","files_with_matches","count","summary"],"default":"content","description":"content, files_with_matches, count or summary."},` +
		`"limit":{"type":"integer","minimum":1,"description":"Page size for files_with_matches and count (default 200, maximum 1000; larger values are clamped)."},` +
		`"cursor":{"type":"string","description":"files_with_matches and count: copy next_cursor from the previous page."}},` +
		`"required":["pattern"],"additionalProperties":false,` +
		`"examples":[{"pattern":"func main","glob":"*.go"},{"pattern":"TODO|FIXME","output_mode":"count","-i":true},{"pattern":"import","path":"src","glob":"*.{ts,tsx}","output_mode":"files_with_matches"}]}`)
}

// SearchesContent marks grep as a kernel.ContentSearcher: it shows what
// the files it finds hold, so read's path-scoped rules hide files from it.
func (*Grep) SearchesContent() {}

func (*Grep) Capabilities(args json.RawMessage) kernel.Capabilities {
	var a struct {
		OutputMode string `json:"output_mode"`
	}
	if json.Unmarshal(args, &a) == nil && (a.OutputMode == "files_with_matches" || a.OutputMode == "count") {
		return kernel.ReadOnlyPaginated(16)
	}
	return kernel.ParallelSafeRead(16)
}

type grepArgs struct {
	Pattern    *string `json:"pattern"`
	Path       *string `json:"path"`
	Glob       *string `json:"glob"`
	Context    *int    `json:"context"`
	IgnoreCase bool    `json:"-i"`
	OutputMode *string `json:"output_mode"`
	Limit      *int    `json:"limit"`
	Cursor     *string `json:"cursor"`
}

// lineMatcher finds matching lines. A required literal of the pattern, when
// there is one, is searched first so lines without it are never handed to
// the regexp engine, and files without it are rejected in one pass.
type lineMatcher struct {
	re *regexp.Regexp
	// size is the regexp program's size as Go's parser estimates it (an
	// upper bound on its instructions): a run over n bytes costs about
	// n × size steps at most, what scanFile adds to its work meter.
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
	search []*lineMatcher
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

// maxGrepProgram caps a pattern's regexp program (Go's estimate of its
// instructions, progSize). The regexp engine's work per byte grows with
// the program: a 2 MB line took 32 s for `(a|b|c|d|e|f|g|h){300}z` (903
// instructions) and 106 s for `[a-z]{1,1000}z` (2,002); Go itself accepts
// programs of millions. Real patterns are small: `func \(\w+ \*?\w+\)
// Close\(` is 23, an alternation of 300 identifiers 106 (Go shares their
// prefixes), `.{1000}` 1,002. Every run is also metered and cancellable
// (scanFile), so the cap bounds the memory and the cost of one step, not
// the time a search may take.
const maxGrepProgram = 10_000

// errProgramSize is newLineMatcher's error for a pattern past maxGrepProgram.
type errProgramSize int

func (e errProgramSize) Error() string {
	return fmt.Sprintf("the pattern compiles to about %d regexp instructions; the limit is %d (a counted repeat such as {1,1000} copies what it repeats: bound it more tightly, or search for a simpler pattern and filter the lines)", int(e), maxGrepProgram)
}

func newLineMatcher(pattern string, ignoreCase bool) (*lineMatcher, error) {
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
	if size > maxGrepProgram {
		return nil, errProgramSize(size)
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, err
	}
	m := &lineMatcher{re: re, size: size}
	st = st.Simplify()
	if req := literalOf(st); len(req.runes) > 0 {
		if m.useLiteral(req); m.lit != nil {
			m.search = []*lineMatcher{m}
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
			b := &lineMatcher{}
			if req := literalOf(sub); len(req.runes) > 0 {
				b.useLiteral(req)
			}
			if b.lit == nil {
				return &lineMatcher{re: re, size: size}, nil // an alternative without a literal: no prefilter
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
func (m *lineMatcher) useLiteral(req reqLiteral) {
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
func (m *lineMatcher) find(data []byte, pos int) int {
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
func (m *lineMatcher) setLiteral(lit []byte, fold bool) {
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
func (m *lineMatcher) index(data []byte, from int) int {
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
// belong to a match (see lineMatcher.before).
func (m *lineMatcher) neighbours(data []byte, at int) bool {
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

// scan reports each matching line (0-based index, byte start and end
// without its "\n") to fn in order and returns how many lines matched. With
// fn == nil it only counts, and no line numbers or match text are built.
func (m *lineMatcher) scan(data []byte, fn func(idx, ls, le int)) int {
	n, _, _ := m.scanFile(nil, data, fn, false)
	return n
}

// matchLine runs the regexp over one line, adding its cost to w. A line
// that could cost more than a work step on its own (long, or a large
// program) is read through pacedLine, which checks w's context as the
// engine goes; the error is the context's, and the answer is then void.
func (m *lineMatcher) matchLine(w *work, line []byte) (bool, error) {
	cost := len(line) * m.size
	if w == nil || cost <= workStep {
		return m.re.Match(line), w.add(cost)
	}
	r := pacedLine{b: line, w: w, every: max(1, workStep/m.size)}
	ok := m.re.MatchReader(&r)
	return ok, r.err
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
	w     *work
	every int
	n     int
	err   error
}

func (r *pacedLine) ReadRune() (rune, int, error) {
	if r.n++; r.n >= r.every {
		r.n = 0
		if r.err == nil {
			r.err = r.w.pc.Step(r.w.ctx)
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

// scanFile is scan, but with skipBinary a binary file reports no match
// and binary == true. With a required literal the binary check is made at
// the literal's first occurrence, not up front: a file without it has no
// match either way, and most files of a search have none, so they are never
// sniffed.
//
// The regexp runs add their cost to w (nil: none); once w's context is
// done the scan stops and returns its error.
func (m *lineMatcher) scanFile(w *work, data []byte, fn func(idx, ls, le int), skipBinary bool) (count int, binary bool, err error) {
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

// span is one line of a file: its 0-based index and byte range without
// the "\n".
type span struct{ idx, ls, le int }

type grepFile struct {
	path    string
	count   int
	spans   []span // content mode: matching lines
	data    []byte // content mode: kept for rendering
	skipped bool   // binary
	failed  error
}

func (g *Grep) Execute(ctx context.Context, call *kernel.Call) (*kernel.Result, error) {
	var a grepArgs
	if err := decodeArgs("grep", call.Args, &a); err != nil {
		return nil, err
	}
	if a.Pattern == nil || *a.Pattern == "" {
		return nil, kernel.InvalidArgument("grep: pattern is required and must not be empty")
	}
	mode := "content"
	if a.OutputMode != nil {
		mode = *a.OutputMode
	}
	switch mode {
	case "content", "files_with_matches", "count", "summary":
	default:
		return nil, kernel.InvalidArgument("grep: unknown output_mode %q: use content, files_with_matches, count or summary", mode)
	}
	paginated := mode == "files_with_matches" || mode == "count"
	if !paginated {
		if a.Limit != nil && *a.Limit != defaultLimit {
			return nil, kernel.InvalidArgument("grep: limit applies only to output_mode files_with_matches or count, not %s", mode)
		}
		if a.Cursor != nil && strings.TrimSpace(*a.Cursor) != "" {
			return nil, kernel.InvalidArgument("grep: cursor applies only to output_mode files_with_matches or count, not %s", mode)
		}
	}
	pg, err := parsePage("grep", a.Limit, a.Cursor)
	if err != nil {
		return nil, err
	}
	ctxLines := 0
	if a.Context != nil {
		if *a.Context < 0 || *a.Context > maxGrepContext {
			return nil, kernel.InvalidArgument("grep: context must be between 0 and %d lines, got %d", maxGrepContext, *a.Context)
		}
		ctxLines = *a.Context
	}
	m, err := newLineMatcher(*a.Pattern, a.IgnoreCase)
	var big errProgramSize
	if errors.As(err, &big) {
		return nil, kernel.InvalidArgument("grep: %v", err)
	}
	if err != nil {
		return nil, kernel.InvalidArgument("grep: invalid regular expression (Go RE2 syntax): %v", err)
	}
	root := "."
	if a.Path != nil && *a.Path != "" {
		if root, err = workspace.Resolve(*a.Path); err != nil {
			return nil, &workspace.PathError{Op: "grep", Path: *a.Path, Err: err}
		}
	}
	glob := ""
	var gp *globPattern
	if a.Glob != nil && *a.Glob != "" {
		if glob, err = workspace.ValidatePattern(*a.Glob); err != nil {
			return nil, kernel.InvalidArgument("grep: glob: %v", err)
		}
		if !doublestar.ValidatePattern(glob) {
			return nil, kernel.InvalidArgument("grep: glob %q is not a valid pattern (check brackets and braces)", *a.Glob)
		}
		if gp, err = compileGlob(glob); err != nil {
			return nil, kernel.InvalidArgument("grep: glob: %v", err)
		}
	}
	paths, hidden, err := g.files(ctx, root, gp, strings.Contains(glob, "/"), call)
	if err != nil {
		return nil, err
	}
	results := g.scanAll(ctx, paths, m, mode == "content")
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var matched []*grepFile
	lines, failed := 0, 0
	for i := range results {
		r := &results[i]
		if r.failed != nil {
			failed++
		}
		if r.count > 0 {
			matched = append(matched, r)
			lines += r.count
		}
	}
	search := map[string]any{"matching_lines": lines, "matching_files": len(matched), "truncated": false}
	meta := map[string]any{"output_mode": mode, "search": search, "pattern": *a.Pattern, "path": root, "failed_reads": failed}
	if hidden > 0 {
		meta["hidden_by_policy"] = hidden // entries the permission policy keeps from this search
	}
	if glob != "" {
		meta["glob"] = glob
	}
	switch mode {
	case "summary":
		return kernel.OK(fmt.Sprintf("%d matching line(s) in %d file(s)", lines, len(matched)), meta), nil
	case "content":
		return g.renderContent(ctx, m, matched, ctxLines, lines, meta)
	}
	// Paginated modes: lexical path order.
	slices.SortFunc(matched, func(x, y *grepFile) int { return strings.Compare(x.path, y.path) })
	lo, hi, err := pg.window("grep", len(matched))
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	anchors := []string{}
	for _, r := range matched[lo:hi] {
		if mode == "count" {
			fmt.Fprintf(&b, "%s: %d matching line(s)\n", workspace.Display(r.path), r.count)
		} else {
			b.WriteString(workspace.Display(r.path) + "\n")
		}
		if len(anchors) < maxSourceAnchs {
			anchors = append(anchors, r.path)
		}
	}
	if len(matched) == 0 {
		fmt.Fprintf(&b, "No matches found for pattern: %s\n", *a.Pattern)
	} else {
		b.WriteString(pg.footer("file(s)") + "\n")
		fmt.Fprintf(&b, "(%d matching line(s) in %d file(s) in total)\n", lines, len(matched))
	}
	meta["sort"], meta["page"], meta["source_anchors"] = "path", pg.meta(), anchors
	out, cut := boundOutput(b.String(), "use a smaller limit")
	meta["output_truncated"] = cut
	return kernel.OK(out, meta), nil
}

// files lists the regular files to search under root, in walk order,
// that glob (nil: every file) matches: against the path relative to root
// when the glob has a '/' (globPath), else against the base name.
//
// Paths the permission policy hides from this call (Call.IsHidden) are
// left out, and a directory whose whole subtree is hidden
// (Call.IsHiddenTree) is not descended; how many files were left out, and
// directories skipped, is returned.
func (g *Grep) files(ctx context.Context, root string, glob *globPattern, globPath bool, call *kernel.Call) ([]string, int, error) {
	st, err := g.ws.Stat(ctx, root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, notFound("grep", "path", root, err)
	}
	if err != nil {
		return nil, 0, asOp("grep", err)
	}
	if st.Kind != workspace.KindDir {
		if call.IsHidden(root) {
			return nil, 1, nil
		}
		if glob == nil || glob.match(path.Base(root)) {
			return []string{root}, 0, nil
		}
		return nil, 0, nil
	}
	w := newWork(ctx) // the glob's matching work
	keep := func(p string) (bool, error) {
		if globPath {
			return glob.matchIn(w, strings.TrimPrefix(p, root+"/"), false)
		}
		return glob.matchIn(w, p[strings.LastIndexByte(p, '/')+1:], true)
	}
	var out []string
	nHidden := 0
	if call == nil || call.Hidden == nil {
		// Nothing hidden: every file under root at once (memfs keeps the
		// list), no walk.
		all, err := g.ws.Files(ctx, root)
		if err != nil || glob == nil {
			return all, 0, err // shared: not modified
		}
		for _, p := range all {
			ok, err := keep(p)
			if err != nil {
				return nil, 0, err
			}
			if ok {
				out = append(out, p)
			}
		}
		return out, 0, nil
	}
	// Runs of entries, not a call per entry (workspace.WalkRuns).
	err = g.ws.WalkRuns(ctx, root, func(ps []string, es []workspace.Entry) error {
		for i := range es {
			p, e := ps[i], &es[i]
			if e.Kind == workspace.KindDir {
				if call.IsHiddenTree(p) {
					nHidden++
					return fs.SkipDir // only the last of a run is a directory
				}
				continue
			}
			if call.Hidden(p) {
				nHidden++
				continue
			}
			if glob != nil {
				if ok, err := keep(p); err != nil || !ok {
					if err != nil {
						return err
					}
					continue
				}
			}
			out = append(out, p)
		}
		return nil
	})
	return out, nHidden, err
}

func (g *Grep) scanAll(ctx context.Context, paths []string, m *lineMatcher, content bool) []grepFile {
	results := make([]grepFile, len(paths))
	one := func(w *work, i int) {
		r := &results[i]
		r.path = paths[i]
		data, err := g.ws.ReadData(ctx, paths[i]) // no version: nothing is written back
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				r.failed = err
			}
			return
		}
		// A cancelled scan's partial count is never used: Execute checks
		// the context after scanAll.
		if !content {
			r.count, r.skipped, _ = m.scanFile(w, data, nil, true)
			return
		}
		r.count, r.skipped, _ = m.scanFile(w, data, func(idx, ls, le int) { r.spans = append(r.spans, span{idx, ls, le}) }, true)
		if r.count > 0 {
			r.data = data
		}
	}
	workers := min(runtime.GOMAXPROCS(0), 8)
	if workers <= 1 || len(paths) < 64 {
		w := newWork(ctx) // js/wasm: let the host's events (abort, timeout) in
		for i := range paths {
			if w.pc.Check(ctx) != nil {
				break
			}
			one(w, i)
		}
		return results
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := newWork(ctx)
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= len(paths) {
					return
				}
				one(w, i)
			}
		}()
	}
	wg.Wait()
	return results
}

func (g *Grep) renderContent(ctx context.Context, m *lineMatcher, matched []*grepFile, ctxLines, total int, meta map[string]any) (*kernel.Result, error) {
	w := newWork(ctx)
	cutLines := 0
	var b strings.Builder
	budget := maxOutputSize - 512
	shown, cut := 0, false
	anchors := []string{}
	first := true
	for _, r := range matched {
		if cut {
			break
		}
		if len(anchors) < maxSourceAnchs {
			anchors = append(anchors, r.path)
		}
		// Context lines are found by walking from each match, so a file is
		// never split into lines as a whole.
		data := r.data
		text := func(ls, le int, match bool) (string, error) {
			t, cut, err := m.longLine(w, bytes.TrimSuffix(data[ls:le], []byte("\r")), match)
			if cut {
				cutLines++
			}
			return t, err
		}
		isMatch := func(i int) bool {
			_, ok := slices.BinarySearchFunc(r.spans, i, func(s span, i int) int { return s.idx - i })
			return ok
		}
		name := workspace.Display(r.path)
		last, lastEnd := -1, -1 // last line printed in this file and its end
		var err error
		for _, m := range r.spans {
			var seg strings.Builder
			line := func(sep string, i, ls, le int) {
				t, terr := text(ls, le, sep == ":")
				err = cmp.Or(err, terr)
				fmt.Fprintf(&seg, "%s%s%d%s%s\n", name, sep, i+1, sep, t)
			}
			if m.idx > last {
				from := max(m.idx-ctxLines, last+1)
				if ctxLines > 0 && !first && (last < 0 || from > last+1) {
					seg.WriteString("--\n")
				}
				var before []span
				for i, st := m.idx-1, m.ls; i >= from; i-- {
					e := st - 1
					st = bytes.LastIndexByte(data[:e], '\n') + 1
					before = append(before, span{i, st, e})
				}
				for j := len(before) - 1; j >= 0; j-- {
					line("-", before[j].idx, before[j].ls, before[j].le)
				}
				line(":", m.idx, m.ls, m.le)
				last, lastEnd = m.idx, m.le
			}
			for last < m.idx+ctxLines && lastEnd+1 < len(data) {
				st := lastEnd + 1
				e := len(data)
				if j := bytes.IndexByte(data[st:], '\n'); j >= 0 {
					e = st + j
				}
				sep := "-"
				if isMatch(last + 1) {
					sep = ":"
				}
				line(sep, last+1, st, e)
				last, lastEnd = last+1, e
			}
			if err != nil {
				return nil, err
			}
			if b.Len()+seg.Len() > budget {
				cut = true
				break
			}
			b.WriteString(seg.String())
			first = false
			shown++
		}
	}
	if total == 0 {
		fmt.Fprintf(&b, "No matches found for pattern: %v\n", meta["pattern"])
	} else if cut {
		fmt.Fprintf(&b, "\n[output truncated at %d bytes: %d of %d matching line(s) shown; %d matching line(s) in %d file(s) in total. Narrow path or glob, or use output_mode=files_with_matches or count.]\n", maxOutputSize, shown, total, total, len(matched))
	} else {
		fmt.Fprintf(&b, "\n%d match(es) in %d file(s)\n", total, len(matched))
	}
	if cutLines > 0 {
		fmt.Fprintf(&b, "(%d line(s) longer than %d characters were cut, each marked [… N characters cut]; a matching line shows the %d characters around its first match.)\n", cutLines, maxLineLength, maxLineLength)
	}
	meta["source_anchors"] = anchors
	meta["output_truncated"] = cut
	meta["shown_matches"] = shown
	meta["cut_lines"] = cutLines
	return kernel.OK(b.String(), meta), nil
}

// longLine renders a line of content mode: as it is up to maxLineLength
// characters; longer, cut to that many with a marker for each cut end. A
// matching line whose first match ends past the cut shows the characters
// around that match instead of its start (from 100 characters before
// it), so the line shown holds the match. Finding the match runs the
// regexp once more over the line, paced by w.
func (m *lineMatcher) longLine(w *work, line []byte, match bool) (string, bool, error) {
	if len(line) <= maxLineLength || utf8.RuneCount(line) <= maxLineLength {
		return string(line), false, nil
	}
	from := 0 // byte offset of the first rune shown
	if match {
		r := pacedLine{b: line, w: w, every: max(1, workStep/max(1, m.size))}
		loc := m.re.FindReaderIndex(&r)
		if r.err != nil {
			return "", false, r.err
		}
		if loc != nil && utf8.RuneCount(line[:loc[1]]) > maxLineLength {
			from = runeOffset(line, max(0, utf8.RuneCount(line[:loc[0]])-100))
		}
	}
	to := from + runeOffset(line[from:], maxLineLength)
	var b strings.Builder
	if from > 0 {
		fmt.Fprintf(&b, "[… %d characters cut] ", utf8.RuneCount(line[:from]))
	}
	b.Write(line[from:to])
	if to < len(line) {
		fmt.Fprintf(&b, " [… %d characters cut]", utf8.RuneCount(line[to:]))
	}
	return b.String(), true, nil
}

// runeOffset is the byte offset of the n-th rune of b, or len(b).
func runeOffset(b []byte, n int) int {
	i := 0
	for ; n > 0 && i < len(b); n-- {
		_, w := utf8.DecodeRune(b[i:])
		i += w
	}
	return i
}
