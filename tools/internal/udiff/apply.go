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
	lineNo int  // 1-based line of the diff text, for messages
}

type hunk struct {
	oldStart, oldLen, newStart, newLen int
	header                             int // diff line number
	lines                              []hunkLine
}

// CRLFTranslated reports whether Apply takes diff's lines as CRLF lines:
// when before's every line ends in CRLF and diff has no CR at all. Such a
// diff cannot have been made from before's bytes (its lines would end in
// CR); it was written from a view without them (read shows lines without
// their CR), so every line of it is read as ending in CRLF, as git apply
// would read the diff made from the file itself. Any other diff applies
// byte for byte, CRs included, as git apply does.
func CRLFTranslated(before []byte, diff string) bool {
	n := bytes.Count(before, []byte("\n"))
	return n > 0 && bytes.Count(before, []byte("\r\n")) == n && !strings.Contains(diff, "\r")
}

// header is a line that starts another file's diff.
func fileHeader(lines []string, i int) bool {
	l := lines[i]
	return strings.HasPrefix(l, "diff --git ") || strings.HasPrefix(l, "Index: ") ||
		(strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ "))
}

// parse parses the hunks of a single-file unified diff strictly; creates
// reports a "--- /dev/null" header (the diff makes a new file).
func parse(diff string) (hunks []hunk, creates bool, err error) {
	lines := strings.Split(diff, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var cur *hunk
	oldSeen, newSeen, pairs, gits := 0, 0, 0, 0
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
				return nil, false, err
			}
			h, err := parseHunkHeader(strings.TrimSuffix(raw, "\r"))
			if err != nil {
				return nil, false, fmt.Errorf("line %d: %v", n, err)
			}
			h.header = n
			cur, oldSeen, newSeen = &h, 0, 0
			continue
		}
		if (cur == nil || complete()) && fileHeader(lines, i) {
			if strings.HasPrefix(raw, "--- ") {
				pairs++
				creates = raw == "--- /dev/null" || strings.HasPrefix(raw, "--- /dev/null\t")
			} else if strings.HasPrefix(raw, "diff --git ") {
				gits++
			}
			if len(hunks) > 0 || cur != nil || pairs > 1 || gits > 1 {
				return nil, false, fmt.Errorf("line %d: %q starts the diff of a second file; patch changes one file per call: split the diff and call patch once for each file", n, clip(raw))
			}
			continue
		}
		if cur == nil {
			if len(hunks) == 0 {
				continue // preamble: ---/+++ headers, "diff --git", prose
			}
			if strings.TrimRight(raw, "\r") == "" && allBlank(lines[i:]) {
				break
			}
			return nil, false, fmt.Errorf("line %d: unexpected text after hunk %d: %q (expected an @@ hunk header)", n, len(hunks), clip(raw))
		}
		if strings.HasPrefix(raw, `\`) {
			if len(cur.lines) == 0 {
				return nil, false, fmt.Errorf("line %d: %q must follow a hunk body line", n, clip(raw))
			}
			last := &cur.lines[len(cur.lines)-1]
			if last.noEOL {
				return nil, false, fmt.Errorf("line %d: repeated %q", n, clip(raw))
			}
			last.noEOL = true
			continue
		}
		if complete() {
			if strings.TrimRight(raw, "\r") == "" && allBlank(lines[i:]) {
				break
			}
			return nil, false, fmt.Errorf("line %d: hunk %d (line %d) already has the %d old and %d new line(s) it declares; unexpected %q", n, len(hunks)+1, cur.header, cur.oldLen, cur.newLen, clip(raw))
		}
		// A line's text is its bytes up to its "\n", a CR included. An empty
		// line (or a lone CR in a CRLF diff) is an empty context line whose
		// space was stripped.
		op, text := byte(' '), raw
		if raw != "" && raw != "\r" {
			op, text = raw[0], raw[1:]
		}
		hl := hunkLine{op: op, text: text, lineNo: n}
		switch op {
		case ' ':
			oldSeen++
			newSeen++
		case '-':
			oldSeen++
		case '+':
			newSeen++
		default:
			return nil, false, fmt.Errorf("line %d: hunk body lines must start with ' ', '-' or '+', got %q", n, clip(raw))
		}
		if oldSeen > cur.oldLen || newSeen > cur.newLen {
			return nil, false, fmt.Errorf("line %d: hunk %d (line %d) has more lines than its header declares (-%d +%d)", n, len(hunks)+1, cur.header, cur.oldLen, cur.newLen)
		}
		cur.lines = append(cur.lines, hl)
	}
	if err := finish(); err != nil {
		return nil, false, err
	}
	if len(hunks) == 0 {
		return nil, false, fmt.Errorf("no hunks found: a unified diff needs at least one @@ -a,b +c,d @@ header")
	}
	return hunks, creates, nil
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

// Apply applies diff to before as git apply does (without its offset
// search and fuzz: every hunk applies at the lines it names) and returns
// the new content and the number of hunks. Lines are compared and written
// byte for byte, CRs included, so a diff can add a file with mixed line
// endings or convert one from CRLF to LF; the one exception is a CR-free
// diff on a CRLF file (CRLFTranslated). A hunk with leading context but
// none after its changes must end at the end of the file, as in git apply,
// so a diff that appends to a file does not apply again to its own result.
// Apply never modifies before.
func Apply(before []byte, diff string) ([]byte, int, error) {
	hunks, creates, err := parse(diff)
	if err != nil {
		return nil, 0, err
	}
	if creates && len(before) > 0 {
		return nil, 0, fmt.Errorf("the diff creates the file (--- /dev/null) but the file is not empty (%d bytes): if the diff was already applied, there is nothing to do", len(before))
	}
	if CRLFTranslated(before, diff) {
		for _, h := range hunks {
			for i := range h.lines {
				if !h.lines[i].noEOL {
					h.lines[i].text += "\r"
				}
			}
		}
	}
	// The file's lines without their "\n"; finalNL says whether the last
	// one had one.
	var old []string
	finalNL := len(before) > 0 && before[len(before)-1] == '\n'
	if len(before) > 0 {
		old = strings.Split(strings.TrimSuffix(string(before), "\n"), "\n")
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
				return nil, 0, mismatch(hi, h, l, pos, old[pos])
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
		if lead, trail := contextAround(h); lead > 0 && trail == 0 && pos < len(old) {
			return nil, 0, fmt.Errorf("hunk %d (line %d) has context before its changes but none after, so (as in git apply) it must end at the end of the file, and the file has %d more line(s) after line %d: add the lines that follow the change as context; if the diff was already applied, there is nothing to do", hi+1, h.header, len(old)-pos, pos)
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
			b.WriteByte('\n')
		}
	}
	return []byte(b.String()), len(hunks), nil
}

// contextAround counts a hunk's context lines before its first change and
// after its last.
func contextAround(h hunk) (lead, trail int) {
	for lead < len(h.lines) && h.lines[lead].op == ' ' {
		lead++
	}
	if lead == len(h.lines) {
		return lead, lead
	}
	for i := len(h.lines) - 1; h.lines[i].op == ' '; i-- {
		trail++
	}
	return lead, trail
}

// mismatch says where a diff line and the file differ, naming a
// difference of line ending alone as such.
func mismatch(hi int, h hunk, l hunkLine, pos int, file string) error {
	where := fmt.Sprintf("hunk %d (line %d): diff line %d does not match the file at line %d", hi+1, h.header, l.lineNo, pos+1)
	switch {
	case file == l.text+"\r":
		return fmt.Errorf("%s only in its line ending: the file's line ends in CRLF, the diff's in LF (patch applies the diff's bytes; write the diff's lines with CRLF, or use edit)", where)
	case l.text == file+"\r":
		return fmt.Errorf("%s only in its line ending: the diff's line ends in CRLF, the file's in LF (patch applies the diff's bytes; write the diff's lines with LF)", where)
	}
	return fmt.Errorf("%s:\n  diff: %q\n  file: %q\nre-read the file and rebuild the diff from its current content", where, clip(l.text), clip(file))
}
