package udiff

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

type hunkLine struct {
	op     byte // ' ', '-', '+'
	text   string
	noEOL  bool // followed by "\ No newline at end of file"
	hadCR  bool // the diff line ended in "\r"
	lineNo int  // 1-based line of the diff text, for messages
}

type hunk struct {
	oldStart, oldLen, newStart, newLen int
	header                             int // diff line number
	lines                              []hunkLine
}

// lineEnding classifies a file: "\n", "\r\n", or "" when it has no line
// terminator at all. Mixed and CR-only endings are errors.
func lineEnding(data []byte) (string, error) {
	crlf := bytes.Count(data, []byte("\r\n"))
	lf := bytes.Count(data, []byte("\n")) - crlf
	cr := bytes.Count(data, []byte("\r")) - crlf
	switch {
	case cr > 0:
		return "", fmt.Errorf("the file has CR-only (\\r) line endings, which patch does not support; use edit or write instead")
	case crlf > 0 && lf > 0:
		return "", fmt.Errorf("the file mixes LF and CRLF line endings (%d LF, %d CRLF), which patch refuses; normalise it with write first", lf, crlf)
	case crlf > 0:
		return "\r\n", nil
	case lf > 0:
		return "\n", nil
	}
	return "", nil
}

// parse parses the hunks of a single-file unified diff strictly.
func parse(diff string) ([]hunk, error) {
	lines := strings.Split(diff, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var hunks []hunk
	var cur *hunk
	oldSeen, newSeen := 0, 0
	complete := func() bool { return cur == nil || (oldSeen == cur.oldLen && newSeen == cur.newLen) }
	finish := func() error {
		if cur == nil {
			return nil
		}
		if !complete() {
			return fmt.Errorf("hunk %d (line %d) declares %d old and %d new line(s) but its body has %d and %d", len(hunks)+1, cur.header, cur.oldLen, cur.newLen, oldSeen, newSeen)
		}
		hunks = append(hunks, *cur)
		cur = nil
		return nil
	}
	for i, raw := range lines {
		n := i + 1
		if strings.HasPrefix(raw, "@@") {
			if err := finish(); err != nil {
				return nil, err
			}
			h, err := parseHunkHeader(strings.TrimSuffix(raw, "\r"))
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", n, err)
			}
			h.header = n
			cur, oldSeen, newSeen = &h, 0, 0
			continue
		}
		if cur == nil {
			if len(hunks) == 0 {
				continue // preamble: ---/+++ headers, "diff --git", prose
			}
			if strings.TrimRight(raw, "\r") == "" && allBlank(lines[i:]) {
				break
			}
			return nil, fmt.Errorf("line %d: unexpected text after hunk %d: %q (expected an @@ hunk header)", n, len(hunks), clip(raw))
		}
		if strings.HasPrefix(raw, `\`) {
			if len(cur.lines) == 0 {
				return nil, fmt.Errorf("line %d: %q must follow a hunk body line", n, clip(raw))
			}
			last := &cur.lines[len(cur.lines)-1]
			if last.noEOL {
				return nil, fmt.Errorf("line %d: repeated %q", n, clip(raw))
			}
			last.noEOL = true
			continue
		}
		if complete() {
			if strings.TrimRight(raw, "\r") == "" && allBlank(lines[i:]) {
				break
			}
			return nil, fmt.Errorf("line %d: hunk %d (line %d) already has the %d old and %d new line(s) it declares; unexpected %q", n, len(hunks)+1, cur.header, cur.oldLen, cur.newLen, clip(raw))
		}
		op := byte(' ')
		text := raw
		if raw != "" { // an empty line is an empty context line whose space was stripped
			op, text = raw[0], raw[1:]
		}
		hl := hunkLine{op: op, lineNo: n}
		hl.text, hl.hadCR = strings.CutSuffix(text, "\r")
		switch op {
		case ' ':
			oldSeen++
			newSeen++
		case '-':
			oldSeen++
		case '+':
			newSeen++
		default:
			return nil, fmt.Errorf("line %d: hunk body lines must start with ' ', '-' or '+', got %q", n, clip(raw))
		}
		if oldSeen > cur.oldLen || newSeen > cur.newLen {
			return nil, fmt.Errorf("line %d: hunk %d (line %d) has more lines than its header declares (-%d +%d)", n, len(hunks)+1, cur.header, cur.oldLen, cur.newLen)
		}
		cur.lines = append(cur.lines, hl)
	}
	if err := finish(); err != nil {
		return nil, err
	}
	if len(hunks) == 0 {
		return nil, fmt.Errorf("no hunks found: a unified diff needs at least one @@ -a,b +c,d @@ header")
	}
	return hunks, nil
}

func allBlank(ls []string) bool {
	for _, l := range ls {
		if strings.TrimRight(l, "\r") != "" {
			return false
		}
	}
	return true
}

// clip shortens s to 80 bytes, at a character boundary, for a message.
func clip(s string) string {
	if len(s) <= 80 {
		return s
	}
	n := 80
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// parseHunkHeader reads "@@ -a[,b] +c[,d] @@[ section]".
func parseHunkHeader(s string) (hunk, error) {
	var h hunk
	rest, ok := strings.CutPrefix(s, "@@ -")
	if !ok {
		return h, fmt.Errorf("malformed hunk header %q (want @@ -a,b +c,d @@)", clip(s))
	}
	end := strings.Index(rest, " @@")
	if end < 0 {
		return h, fmt.Errorf("malformed hunk header %q (want @@ -a,b +c,d @@)", clip(s))
	}
	oldR, newR, ok := strings.Cut(rest[:end], " +")
	if !ok {
		return h, fmt.Errorf("malformed hunk header %q (want @@ -a,b +c,d @@)", clip(s))
	}
	var err error
	if h.oldStart, h.oldLen, err = parseRange(oldR); err != nil {
		return h, fmt.Errorf("hunk header %q: old range: %v", clip(s), err)
	}
	if h.newStart, h.newLen, err = parseRange(newR); err != nil {
		return h, fmt.Errorf("hunk header %q: new range: %v", clip(s), err)
	}
	return h, nil
}

func parseRange(s string) (int, int, error) {
	a, b, hasLen := strings.Cut(s, ",")
	start, err := strconv.Atoi(a)
	if err != nil || start < 0 || a == "" || a[0] == '+' || a[0] == '-' {
		return 0, 0, fmt.Errorf("bad start %q", a)
	}
	n := 1
	if hasLen {
		if n, err = strconv.Atoi(b); err != nil || n < 0 || b == "" || b[0] == '+' || b[0] == '-' {
			return 0, 0, fmt.Errorf("bad line count %q", b)
		}
	}
	if n > 0 && start == 0 {
		return 0, 0, fmt.Errorf("start 0 is only valid with a count of 0")
	}
	return start, n, nil
}

// Apply applies diff to before and returns the new content and
// the number of hunks. It never modifies before.
func Apply(before []byte, diff string) ([]byte, int, error) {
	hunks, err := parse(diff)
	if err != nil {
		return nil, 0, err
	}
	eol, err := lineEnding(before)
	if err != nil {
		return nil, 0, err
	}
	// The file's lines without terminators; finalNL says whether the last
	// one had a terminator.
	var old []string
	finalNL := false
	if len(before) > 0 {
		s := string(before)
		if eol != "" {
			finalNL = strings.HasSuffix(s, eol)
			s = strings.TrimSuffix(s, eol)
			old = strings.Split(s, eol)
		} else {
			old = []string{s}
		}
	}
	if eol == "" { // no terminator in the file: take the diff's convention
		eol = "\n"
		for _, h := range hunks {
			for _, l := range h.lines {
				if l.op == '+' && l.hadCR {
					eol = "\r\n"
				}
			}
		}
	}
	type outLine struct {
		text string
		nl   bool
	}
	var out []outLine
	oldNL := func(i int) bool { return i < len(old)-1 || finalNL }
	pos := 0 // next unconsumed old line
	for hi, h := range hunks {
		start := h.oldStart - 1
		if h.oldLen == 0 {
			start = h.oldStart // the line after which to insert
		}
		if start < pos {
			return nil, 0, fmt.Errorf("hunk %d (line %d) starts at old line %d, before the end of the previous hunk (line %d): hunks must be in order and not overlap", hi+1, h.header, h.oldStart, pos)
		}
		if start > len(old) {
			return nil, 0, fmt.Errorf("hunk %d (line %d) starts at old line %d but the file has only %d line(s)", hi+1, h.header, h.oldStart, len(old))
		}
		for ; pos < start; pos++ {
			out = append(out, outLine{old[pos], oldNL(pos)})
		}
		for _, l := range h.lines {
			if l.op == '+' {
				out = append(out, outLine{l.text, !l.noEOL})
				continue
			}
			if pos >= len(old) {
				return nil, 0, fmt.Errorf("hunk %d (line %d): diff line %d expects old line %d %q but the file has only %d line(s)", hi+1, h.header, l.lineNo, pos+1, clip(l.text), len(old))
			}
			if old[pos] != l.text {
				return nil, 0, fmt.Errorf("hunk %d (line %d): diff line %d does not match the file at line %d:\n  diff: %q\n  file: %q\nre-read the file and rebuild the diff from its current content", hi+1, h.header, l.lineNo, pos+1, clip(l.text), clip(old[pos]))
			}
			if l.noEOL && oldNL(pos) {
				return nil, 0, fmt.Errorf("hunk %d (line %d): diff line %d is marked \"No newline at end of file\" but file line %d ends with a newline", hi+1, h.header, l.lineNo, pos+1)
			}
			if !l.noEOL && !oldNL(pos) {
				return nil, 0, fmt.Errorf("hunk %d (line %d): diff line %d is the file's last line, which has no final newline: mark it with \"\\ No newline at end of file\"", hi+1, h.header, l.lineNo)
			}
			if l.op == ' ' {
				out = append(out, outLine{l.text, !l.noEOL})
			}
			pos++
		}
	}
	for ; pos < len(old); pos++ {
		out = append(out, outLine{old[pos], oldNL(pos)})
	}
	var b strings.Builder
	for i, l := range out {
		if !l.nl && i < len(out)-1 {
			return nil, 0, fmt.Errorf("a line marked \"No newline at end of file\" (%q) would not be the last line of the result", clip(l.text))
		}
		b.WriteString(l.text)
		if l.nl {
			b.WriteString(eol)
		}
	}
	return []byte(b.String()), len(hunks), nil
}
