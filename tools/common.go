package tools

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/a3s-lab/code-wasm/internal/digest"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/tools/internal/udiff"
	"github.com/a3s-lab/code-wasm/workspace"
)

// Shared limits (REFERENCE.md §2, core/src/tools/mod.rs upstream).
const (
	maxOutputSize  = 100 << 10 // bytes of tool output
	maxReadLines   = 2000      // default and maximum lines per read range
	maxLineLength  = 2000      // characters shown per line
	defaultLimit   = 200       // pagination default
	maxLimit       = 1000      // pagination maximum (larger values are clamped)
	maxSourceAnchs = 64        // paths listed in metadata.source_anchors
)

// decodeArgs unmarshals a tool's arguments strictly: unknown keys and wrong
// types are invalid_argument errors that name the argument. Absent and null
// arguments leave pointer fields nil.
func decodeArgs(tool string, raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage(`{}`)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te) && te.Field != "":
			return kernel.InvalidArgument("%s: argument %q must be %s, not %s", tool, te.Field, jsonTypeName(te.Type.String()), te.Value)
		case errors.As(err, &te):
			return kernel.InvalidArgument("%s: arguments must be a JSON object, not %s", tool, te.Value)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			return kernel.InvalidArgument("%s: unknown argument %s", tool, strings.TrimPrefix(err.Error(), "json: unknown field "))
		}
		return kernel.InvalidArgument("%s: arguments are not valid JSON: %v", tool, err)
	}
	if dec.More() {
		return kernel.InvalidArgument("%s: arguments must be one JSON object", tool)
	}
	return nil
}

func jsonTypeName(goType string) string {
	switch {
	case strings.Contains(goType, "int"):
		return "an integer"
	case strings.Contains(goType, "bool"):
		return "a boolean"
	case strings.Contains(goType, "string"):
		return "a string"
	case strings.HasPrefix(goType, "[]") || strings.HasPrefix(goType, "*[]"):
		return "an array"
	}
	return "an object"
}

// page is the shared pagination state (REFERENCE.md §2, pagination.rs).
type page struct {
	_              [0]func() // never compared: no equality function in the wasm
	Offset         int
	RequestedLimit int
	AppliedLimit   int
	Returned       int
	Total          int
	NextCursor     string // "" when there is no next page
	LimitClamped   bool
}

// parsePage validates limit and cursor. A limit above maxLimit is clamped;
// an empty or blank cursor is the first page.
func parsePage(tool string, limit *int, cursor *string) (page, error) {
	p := page{RequestedLimit: defaultLimit, AppliedLimit: defaultLimit}
	if limit != nil {
		if *limit < 1 {
			return p, kernel.InvalidArgument("%s: limit must be at least 1, got %d", tool, *limit)
		}
		p.RequestedLimit, p.AppliedLimit = *limit, *limit
		if *limit > maxLimit {
			p.AppliedLimit, p.LimitClamped = maxLimit, true
		}
	}
	if cursor != nil && strings.TrimSpace(*cursor) != "" {
		n, err := strconv.Atoi(strings.TrimSpace(*cursor))
		if err != nil || n < 0 {
			return p, kernel.InvalidArgument("%s: cursor is invalid or expired: %q (copy next_cursor exactly from the previous call, or omit it for the first page)", tool, *cursor)
		}
		p.Offset = n
	}
	return p, nil
}

// window applies the page to total items and returns the [lo, hi) slice
// bounds; an offset beyond total is the invalid-cursor error.
func (p *page) window(tool string, total int) (int, int, error) {
	p.Total = total
	if p.Offset > total {
		return 0, 0, kernel.InvalidArgument("%s: cursor is invalid or expired: offset %d is beyond the %d item(s) now present (start again without a cursor)", tool, p.Offset, total)
	}
	hi := min(total, p.Offset+p.AppliedLimit)
	p.Returned = hi - p.Offset
	if hi < total {
		p.NextCursor = strconv.Itoa(hi)
	}
	return p.Offset, hi, nil
}

func (p page) meta() map[string]any {
	var next any
	if p.NextCursor != "" {
		next = p.NextCursor
	}
	return map[string]any{
		"offset":          p.Offset,
		"requested_limit": p.RequestedLimit,
		"applied_limit":   p.AppliedLimit,
		"returned_items":  p.Returned,
		"total_items":     p.Total,
		"next_cursor":     next,
		"truncated":       p.NextCursor != "",
		"limit_clamped":   p.LimitClamped,
	}
}

// footer is the human continuation line of a page.
func (p page) footer(noun string) string {
	if p.Returned == 0 && p.Total > 0 {
		// A cursor equal to the total: the previous page was the last.
		return fmt.Sprintf("No more %s (%d total): the previous page was the last.", noun, p.Total)
	}
	s := fmt.Sprintf("(%d of %d %s shown", p.Returned, p.Total, noun)
	if p.Offset > 0 {
		s += fmt.Sprintf(", starting at item %d", p.Offset+1)
	}
	s += ")"
	if p.LimitClamped {
		s += fmt.Sprintf("\n(limit %d was clamped to the maximum %d)", p.RequestedLimit, maxLimit)
	}
	if p.NextCursor != "" {
		s += fmt.Sprintf("\n(More results: continue with cursor=%q)", p.NextCursor)
	}
	return s
}

// writeDisplay writes workspace.Display(p) to b. A path of printable
// ASCII, the common case, is its own display form and is copied as it is;
// Display, which decodes rune by rune into a new string, was 30% of a glob
// rendering 1000 paths under js/wasm.
func writeDisplay(b *strings.Builder, p string) {
	for i := 0; i < len(p); i++ {
		if c := p[i]; c < 0x20 || c > 0x7e {
			b.WriteString(workspace.Display(p))
			return
		}
	}
	b.WriteString(p)
}

// cutUTF8 returns the longest prefix of s of at most n bytes that does not
// split a UTF-8 sequence.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// cutLine shortens a line to maxLineLength characters.
func cutLine(s string) (string, bool) {
	if len(s) <= maxLineLength {
		return s, false
	}
	n := 0
	for i := range s {
		if n == maxLineLength {
			return s[:i], true
		}
		n++
	}
	return s, false
}

// boundOutput keeps output within maxOutputSize, saying so at the end.
func boundOutput(s, hint string) (string, bool) {
	if len(s) <= maxOutputSize {
		return s, false
	}
	keep := cutUTF8(s, maxOutputSize-len(hint)-80)
	return keep + fmt.Sprintf("\n[output truncated: %d of %d bytes shown; %s]", len(keep), len(s), hint), true
}

// Change compaction (REFERENCE.md §3.4).
const (
	compactThreshold  = 64 << 10
	previewBytes      = 8 << 10
	diffPreviewBytes  = 32 << 10
	diffComputeBudget = 1 << 20
)

// changeMeta puts before/after into meta, compacting them when large.
// before is omitted when hasBefore is false (a created file).
func changeMeta(meta map[string]any, path string, before, after []byte, hasBefore bool) {
	if len(before)+len(after) <= compactThreshold {
		if hasBefore {
			meta["before"] = string(before)
		}
		meta["after"] = string(after)
		return
	}
	side := func(b []byte) map[string]any {
		sum := digest.Sum256(b)
		return map[string]any{"bytes": len(b), "sha256": hex.EncodeToString(sum[:])}
	}
	ch := map[string]any{"compacted": true, "before": side(before), "after": side(after), "diff_omitted": true}
	if len(before)+len(after) <= diffComputeBudget {
		d := udiff.Format("a/"+path, "b/"+path, before, after, 3)
		ch["diff_omitted"] = false
		if len(d) > diffPreviewBytes {
			ch["unified_diff"] = cutUTF8(d, diffPreviewBytes) + fmt.Sprintf("\n[diff preview truncated: %d of %d bytes]\n", len(cutUTF8(d, diffPreviewBytes)), len(d))
			ch["unified_diff_truncated"] = true
		} else {
			ch["unified_diff"] = d
			ch["unified_diff_truncated"] = false
		}
	}
	if hasBefore {
		meta["before"] = preview(before)
	}
	meta["after"] = preview(after)
	meta["change"] = ch
}

// preview is a head/tail preview of at most previewBytes (plus a marker).
func preview(b []byte) string {
	if len(b) <= previewBytes {
		return string(b)
	}
	head := cutUTF8(string(b), previewBytes/2)
	t := len(b) - previewBytes/2
	for t < len(b) && !utf8.RuneStart(b[t]) {
		t++
	}
	tail := string(b[t:])
	return head + fmt.Sprintf("\n[… %d bytes omitted …]\n", len(b)-len(head)-len(tail)) + tail
}

// asOp makes a workspace error from an inner step (the read before a write)
// name the user's operation: "write a.txt/b: …", not "read a.txt/b: …".
// A bare ErrNotDir says which part of the path is wrong.
func asOp(op string, err error) error {
	var pe *workspace.PathError
	if !errors.As(err, &pe) || pe.Op == op {
		return err
	}
	inner := pe.Err
	if inner == workspace.ErrNotDir {
		inner = fmt.Errorf("%w: a parent directory in the path is a file", workspace.ErrNotDir)
	}
	return &workspace.PathError{Op: op, Path: pe.Path, Err: inner}
}

// notFound is the not_found failure of a tool whose path (a directory to
// list or search) is missing: "glob: path not found: nope".
func notFound(tool, what, p string, err error) error {
	return &kernel.Error{
		Kind: kernel.ErrorKind{Type: kernel.ErrNotFound, Path: p},
		Msg:  fmt.Sprintf("%s: %s not found: %s", tool, what, workspace.Display(p)),
		Err:  err,
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// scanCut takes a workspace's scan limit (ScanLimiter) out of a search's
// walk error: the files listed before the cut stand, and the cut is
// returned (nil when the walk was whole or failed otherwise).
func scanCut(err *error) *workspace.ScanLimitError {
	var cut *workspace.ScanLimitError
	if errors.As(*err, &cut) {
		*err = nil
		return cut
	}
	return nil
}

// warnScanCut ends a search's output with the warning REFERENCE §4 asks
// for when the scan limit cut the walk (metadata.search.truncated is set
// by the tool).
func warnScanCut(res *kernel.Result, cut *workspace.ScanLimitError) *kernel.Result {
	if cut != nil {
		res.Output += fmt.Sprintf("\n[search stopped at the workspace's scan limit of %d files: totals and paths may be incomplete; narrow path or the pattern]\n", cut.Limit)
	}
	return res
}
