package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/workspace"
)

// Batch-mode limits (REFERENCE.md §2.1).
const (
	maxBatchFiles         = 32
	maxBatchPathBytes     = 4096
	minBatchOutputBytes   = 1024
	maxBatchOutputBytes   = 98304 // 100 KiB minus 4 KiB
	defaultBatchOutputLen = 65536
)

// Read is the `read` tool: one file by line range, or a `files` batch under
// one shared output budget.
type Read struct{ ws *workspace.Workspace }

func (*Read) Name() string { return "read" }

// Inline implements kernel.Inliner: a read of files held in memory ends by
// itself, and runs on the invoking goroutine.
func (r *Read) Inline(json.RawMessage) bool {
	im, ok := r.ws.Driver().(workspace.Immediate)
	return ok && im.Immediate()
}
func (*Read) Description() string {
	return "Read text files from the workspace with line numbers (each line: the 1-based number in 6 columns, a tab, the text cut at 2000 characters). " +
		"Give exactly one of: file_path (one file; offset is the 0-based first line, limit 1-2000 lines, default 2000; when more lines remain the footer names the next offset), " +
		"or files (1-32 entries of {path, offset?, limit?} read in request order under one shared max_output_bytes budget, 1024-98304, default 65536; " +
		"each file appears under a `=== path ===` header, a file that fails does not stop the others). " +
		"When metadata.batch.truncated is true, pass metadata.batch.continuation as the next call's files to resume without repeating lines. " +
		"An offset past the end of a file is an error."
}

const readProps = `"file_path":{"type":"string","minLength":1,"description":"Workspace-relative path of one file to read."},` +
	`"offset":{"type":"integer","minimum":0,"description":"0-based line to start at (single-file mode). Default 0."},` +
	`"limit":{"type":"integer","minimum":1,"maximum":2000,"description":"Lines to return (single-file mode). Default 2000."},` +
	`"files":{"type":"array","minItems":1,"maxItems":32,"description":"Batch mode: files to read in order under one budget.","items":{"type":"object","properties":{` +
	`"path":{"type":"string","minLength":1,"maxLength":4096},"offset":{"type":"integer","minimum":0},"limit":{"type":"integer","minimum":1,"maximum":2000}},` +
	`"required":["path"],"additionalProperties":false}},` +
	`"max_output_bytes":{"type":"integer","minimum":1024,"maximum":98304,"description":"Batch mode: total output budget in bytes, headers and footer included. Default 65536."}`

func (*Read) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` + readProps + `},"additionalProperties":false,` +
		`"examples":[{"file_path":"src/main.go"},{"file_path":"src/main.go","offset":200,"limit":100},{"files":[{"path":"go.mod"},{"path":"src/main.go","offset":40,"limit":80}],"max_output_bytes":65536}]}`)
}

// ValidationSchema is the model schema without examples. The exactly-one-
// mode rule is deliberately not in it: a validator reports a failed
// oneOf/not as "'not' failed", which tells nobody what to fix, so Execute
// checks it and says so (readModeRule).
func (*Read) ValidationSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` + readProps + `},"additionalProperties":false}`)
}

// readModeRule is the one message for every wrong mix of read's two modes.
const readModeRule = "read: give exactly one of file_path or files; put offset/limit inside each files[] entry"

func (*Read) Capabilities(json.RawMessage) kernel.Capabilities { return kernel.ReadOnlyPaginated(16) }

// ReadFileSpec is one entry of read's `files` (and of its continuation).
type ReadFileSpec struct {
	Path   string `json:"path"`
	Offset *int   `json:"offset,omitempty"`
	Limit  *int   `json:"limit,omitempty"`
}

type readArgs struct {
	FilePath       *string        `json:"file_path"`
	Offset         *int           `json:"offset"`
	Limit          *int           `json:"limit"`
	Files          []ReadFileSpec `json:"files"`
	MaxOutputBytes *int           `json:"max_output_bytes"`
}

func (r *Read) Execute(ctx context.Context, call *kernel.Call) (*kernel.Result, error) {
	var a readArgs
	if err := decodeArgs("read", call.Args, &a); err != nil {
		return nil, err
	}
	switch {
	case a.FilePath != nil && a.Files != nil:
		return nil, kernel.InvalidArgument("%s (got both)", readModeRule)
	case a.Files != nil:
		if a.Offset != nil || a.Limit != nil {
			return nil, kernel.InvalidArgument("%s (got files with a top-level offset or limit)", readModeRule)
		}
		return r.batch(ctx, a)
	case a.FilePath != nil:
		if a.MaxOutputBytes != nil {
			return nil, kernel.InvalidArgument("read: max_output_bytes applies only to files (batch mode)")
		}
		return r.single(ctx, a)
	}
	return nil, kernel.InvalidArgument("%s (got neither)", readModeRule)
}

func checkRange(tool string, offset, limit *int) (int, int, bool, error) {
	off, lim, clamped := 0, maxReadLines, false
	if offset != nil {
		if *offset < 0 {
			return 0, 0, false, kernel.InvalidArgument("%s: offset must be 0 or more (0-based line), got %d", tool, *offset)
		}
		off = *offset
	}
	if limit != nil {
		if *limit < 1 || *limit > maxReadLines {
			return 0, 0, false, kernel.InvalidArgument("%s: limit must be between 1 and %d lines, got %d", tool, maxReadLines, *limit)
		}
		lim = *limit
	}
	return off, lim, clamped, nil
}

// formatLine writes line n of a read as fmt's "%6d\t%s\n" does, its text
// cut at maxLineLength, and reports the cut. By hand: Fprintf per line
// was ~20 µs of a 16-line read under js/wasm.
func formatLine(b *strings.Builder, n int, text string) bool {
	t, cut := cutLine(text)
	num := strconv.Itoa(n)
	if len(num) < 6 {
		b.WriteString("      "[len(num):])
	}
	b.WriteString(num)
	b.WriteString("\t")
	b.WriteString(t)
	b.WriteString("\n")
	return cut
}

// lineBytes is how many bytes formatLine writes for line n.
func lineBytes(n int, text string) int {
	t, _ := cutLine(text)
	return max(len(strconv.Itoa(n)), 6) + 1 + len(t) + 1
}

func (r *Read) single(ctx context.Context, a readArgs) (*kernel.Result, error) {
	if *a.FilePath == "" {
		return nil, kernel.InvalidArgument("read: file_path must not be empty")
	}
	name, err := workspace.Resolve(*a.FilePath)
	if err != nil {
		return nil, &workspace.PathError{Op: "read", Path: *a.FilePath, Err: err}
	}
	off, lim, _, err := checkRange("read", a.Offset, a.Limit)
	if err != nil {
		return nil, err
	}
	lr, err := r.ws.ReadLines(ctx, *a.FilePath, off, lim)
	if err != nil {
		return nil, err
	}
	if off > lr.TotalLines {
		return nil, kernel.InvalidArgument("read %s: offset %d is past the end of the file (%d line(s)); use an offset from 0 to %d", workspace.Display(name), off, lr.TotalLines, lr.TotalLines)
	}
	var b strings.Builder
	budget := maxOutputSize - 200
	cutLines, outputCut := 0, false
	n := 0
	for i, l := range lr.Lines {
		if b.Len()+lineBytes(off+i+1, l) > budget {
			outputCut = true
			break
		}
		if formatLine(&b, off+i+1, l) {
			cutLines++
		}
		n++
	}
	next := off + n
	eof := next >= lr.TotalLines
	switch {
	case lr.TotalLines == 0:
		b.WriteString("(end of file: the file is empty)\n")
	case n == 0 && off == lr.TotalLines:
		fmt.Fprintf(&b, "(end of file: no lines at offset %d; the file has %d line(s))\n", off, lr.TotalLines)
	case outputCut:
		fmt.Fprintf(&b, "\n(Output reached the %d-byte limit after %d line(s). The file has more lines: continue with offset=%d. Total lines: %d.)\n", maxOutputSize, n, next, lr.TotalLines)
	case !eof:
		fmt.Fprintf(&b, "\n(The file has more lines: continue with offset=%d. Total lines: %d.)\n", next, lr.TotalLines)
	}
	if cutLines > 0 {
		fmt.Fprintf(&b, "(%d line(s) were cut at %d characters.)\n", cutLines, maxLineLength)
	}
	requested := maxReadLines
	if a.Limit != nil {
		requested = *a.Limit
	}
	var nextOff any
	if !eof {
		nextOff = next
	}
	meta := map[string]any{
		"source_anchors": []string{name},
		"range": map[string]any{
			"offset": off, "requested_limit": requested, "applied_limit": lim, "returned_lines": n,
			"next_offset": nextOff, "eof": eof, "total_lines": lr.TotalLines, "limit_clamped": false,
			"output_bytes": b.Len(), "output_truncated": outputCut, "cut_lines": cutLines,
		},
	}
	return kernel.OK(b.String(), meta), nil
}

// fileState is one batch member while the budget is spent.
type fileState struct {
	spec    ReadFileSpec
	name    string
	offset  int
	limit   int // lines requested from offset
	limited bool
	lines   []string
	total   int
	err     error
	// results
	status   string // complete, partial, failed, pending
	returned int
}

func (r *Read) batch(ctx context.Context, a readArgs) (*kernel.Result, error) {
	budget := defaultBatchOutputLen
	if a.MaxOutputBytes != nil {
		budget = *a.MaxOutputBytes
		if budget < minBatchOutputBytes || budget > maxBatchOutputBytes {
			return nil, kernel.InvalidArgument("read: max_output_bytes must be between %d and %d, got %d", minBatchOutputBytes, maxBatchOutputBytes, budget)
		}
	}
	if len(a.Files) == 0 || len(a.Files) > maxBatchFiles {
		return nil, kernel.InvalidArgument("read: files must have 1 to %d entries, got %d", maxBatchFiles, len(a.Files))
	}
	fs := make([]*fileState, len(a.Files))
	seen := map[string]int{}
	for i, f := range a.Files {
		if f.Path == "" || len(f.Path) > maxBatchPathBytes {
			return nil, kernel.InvalidArgument("read: files[%d].path must be 1 to %d bytes long", i, maxBatchPathBytes)
		}
		name, err := workspace.Resolve(f.Path)
		if err != nil {
			return nil, kernel.InvalidArgument("read: files[%d].path: %v", i, err)
		}
		if j, dup := seen[name]; dup {
			return nil, kernel.InvalidArgument("read: files[%d] and files[%d] name the same file %s; list each file once", j, i, workspace.Display(name))
		}
		seen[name] = i
		off, lim, _, err := checkRange(fmt.Sprintf("read: files[%d]", i), f.Offset, f.Limit)
		if err != nil {
			return nil, err
		}
		fs[i] = &fileState{spec: f, name: name, offset: off, limit: lim, limited: f.Limit != nil, status: "pending"}
	}
	var pc workspace.Pacer
	for _, f := range fs {
		if err := pc.Check(ctx); err != nil {
			return nil, err
		}
		lr, err := r.ws.ReadLines(ctx, f.spec.Path, f.offset, f.limit)
		switch {
		case err != nil:
			f.err = err
		case f.offset > lr.TotalLines:
			f.err = fmt.Errorf("offset %d is past the end of the file (%d line(s))", f.offset, lr.TotalLines)
		default:
			f.lines, f.total = lr.Lines, lr.TotalLines
		}
	}

	// continuation lists what remains if we stop with file i having
	// returned k of its lines.
	continuation := func(i, k int) []ReadFileSpec {
		var c []ReadFileSpec
		for j := i; j < len(fs); j++ {
			f := fs[j]
			if j == i {
				c = append(c, f.rest(k)...)
				continue
			}
			c = append(c, f.spec)
		}
		return c
	}
	// Files already done may still owe lines beyond their default limit.
	var owed []ReadFileSpec
	footer := func(cont []ReadFileSpec, complete, failed int) string {
		all := append(append([]ReadFileSpec{}, owed...), cont...)
		if len(all) == 0 {
			if failed > 0 {
				return fmt.Sprintf("(Complete: all %d file(s) processed; %d failed.)\n", len(fs), failed)
			}
			return fmt.Sprintf("(Complete: all %d file(s) processed.)\n", len(fs))
		}
		js, _ := json.Marshal(all)
		return fmt.Sprintf("(Partial: %d of %d file(s) complete. Continue with files=%s)\n", complete, len(fs), js)
	}

	var out strings.Builder
	complete, failed, returnedLines := 0, 0, 0
	stopped := -1 // index of the first file not finished in this call
	stopK := 0
	for i, f := range fs {
		header := fmt.Sprintf("=== %s ===\n", workspace.Display(f.name))
		if f.err != nil {
			seg := header + "Error: " + errText(f.err) + "\n"
			if out.Len()+len(seg)+len(footer(continuation(i+1, 0), complete, failed+1)) > budget {
				if complete+failed == 0 {
					return nil, kernel.InvalidArgument("read: max_output_bytes=%d is too small to report the error for %s plus the continuation; raise it (up to %d)", budget, workspace.Display(f.name), maxBatchOutputBytes)
				}
				stopped = i
				break
			}
			out.WriteString(seg)
			f.status = "failed"
			failed++
			continue
		}
		// Largest k such that header + k lines + note + footer fits.
		note := func(k int) string {
			switch {
			case f.total == 0:
				return "(empty file)\n"
			case k == 0 && f.offset == f.total:
				return fmt.Sprintf("(end of file: %d line(s))\n", f.total)
			case k == len(f.lines) && !f.limited && f.offset+k < f.total:
				return fmt.Sprintf("(%d more line(s) after the %d-line default limit: see the continuation)\n", f.total-f.offset-k, maxReadLines)
			}
			return ""
		}
		size := make([]int, len(f.lines)+1)
		for j, l := range f.lines {
			size[j+1] = size[j] + lineBytes(f.offset+j+1, l)
		}
		fits := func(k int) bool {
			var cont []ReadFileSpec
			if k < len(f.lines) {
				cont = continuation(i, k)
			} else {
				cont = continuation(i+1, 0)
				if !f.limited && f.offset+k < f.total {
					cont = append(f.rest(k), cont...)
				}
			}
			c := complete
			if k == len(f.lines) {
				c++
			}
			return out.Len()+len(header)+size[k]+len(note(k))+len(footer(cont, c, failed)) <= budget
		}
		lo, hi := 0, len(f.lines)
		if !fits(0) {
			lo = -1
		} else {
			for lo < hi { // largest k in [lo, hi] with fits(k)
				mid := (lo + hi + 1) / 2
				if fits(mid) {
					lo = mid
				} else {
					hi = mid - 1
				}
			}
		}
		k := lo
		if k < len(f.lines) && (k <= 0) {
			// Nothing of this file fits (an empty file or one at EOF
			// with k == 0 == len(lines) is handled below).
			if complete+failed == 0 {
				return nil, kernel.InvalidArgument("read: max_output_bytes=%d is too small to hold one line of %s plus the continuation; raise it (up to %d) or read fewer files", budget, workspace.Display(f.name), maxBatchOutputBytes)
			}
			stopped, stopK = i, 0
			break
		}
		if k < 0 { // empty/at-EOF file whose note does not fit
			if complete+failed == 0 {
				return nil, kernel.InvalidArgument("read: max_output_bytes=%d is too small to hold the first file header plus the continuation; raise it (up to %d)", budget, maxBatchOutputBytes)
			}
			stopped, stopK = i, 0
			break
		}
		out.WriteString(header)
		for j := 0; j < k; j++ {
			formatLine(&out, f.offset+j+1, f.lines[j])
		}
		out.WriteString(note(k))
		f.returned = k
		returnedLines += k
		if k < len(f.lines) {
			f.status = "partial"
			stopped, stopK = i, k
			break
		}
		if !f.limited && f.offset+k < f.total {
			f.status = "partial"
			owed = append(owed, f.rest(k)...)
			complete++ // its requested range is done; the rest is owed
			continue
		}
		f.status = "complete"
		complete++
	}
	var cont []ReadFileSpec
	if stopped >= 0 {
		cont = continuation(stopped, stopK)
	}
	all := append(append([]ReadFileSpec{}, owed...), cont...)
	out.WriteString(footer(cont, complete, failed))
	truncated := len(all) > 0
	successful := 0
	files := make([]map[string]any, len(fs))
	var anchors []string
	for i, f := range fs {
		m := map[string]any{"path": f.name, "status": f.status, "offset": f.offset, "returned_lines": f.returned}
		if f.err != nil {
			m["error"] = errText(f.err)
			if k := kernel.KindOf(f.err); k != nil {
				m["error_kind"] = k
			}
		} else {
			m["total_lines"] = f.total
		}
		if f.status == "complete" || f.status == "partial" {
			successful++
			anchors = append(anchors, f.name)
		}
		files[i] = m
	}
	status := "complete"
	switch {
	case failed > 0:
		status = "partial_failure"
	case truncated:
		status = "partial"
	}
	if all == nil {
		all = []ReadFileSpec{}
	}
	meta := map[string]any{
		"source_anchors": anchors,
		"batch": map[string]any{
			"status": status, "requested_files": len(fs), "successful_files": successful, "failed_files": failed,
			"completed_files": complete, "returned_lines": returnedLines, "max_output_bytes": budget,
			"output_bytes": out.Len(), "truncated": truncated, "continuation": all, "files": files,
		},
	}
	res := kernel.OK(out.String(), meta)
	if successful == 0 && !truncated {
		res.ExitCode = 1
		if len(fs) == 1 {
			res.ErrorKind = kernel.KindOf(fs[0].err)
		} else {
			res.ErrorKind = &kernel.ErrorKind{Type: kernel.ErrPartialFailure, Failed: failed, Total: len(fs)}
		}
	}
	return res, nil
}

// rest is the continuation entry for a file that returned k lines of its
// range: the next offset and whatever explicit limit remains.
func (f *fileState) rest(k int) []ReadFileSpec {
	off := f.offset + k
	s := ReadFileSpec{Path: f.spec.Path, Offset: &off}
	if f.limited {
		left := f.limit - k
		if left <= 0 {
			return nil
		}
		s.Limit = &left
	}
	return []ReadFileSpec{s}
}

func errText(err error) string {
	var pe *workspace.PathError
	if errors.As(err, &pe) {
		return pe.Error()
	}
	return err.Error()
}
