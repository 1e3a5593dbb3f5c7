package tools

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/tools/internal/globmatch"
	"github.com/a3s-lab/code-wasm/tools/internal/linematch"
	"github.com/a3s-lab/code-wasm/tools/internal/work"
	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/bmatcuk/doublestar/v4"
)

const maxGrepContext = 100

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
	m, err := linematch.New(*a.Pattern, a.IgnoreCase)
	var big linematch.ProgramSizeError
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
	var gp *globmatch.Pattern
	if a.Glob != nil && *a.Glob != "" {
		if glob, err = workspace.ValidatePattern(*a.Glob); err != nil {
			return nil, kernel.InvalidArgument("grep: glob: %v", err)
		}
		if !doublestar.ValidatePattern(glob) {
			return nil, kernel.InvalidArgument("grep: glob %q is not a valid pattern (check brackets and braces)", *a.Glob)
		}
		if gp, err = globmatch.Compile(glob); err != nil {
			return nil, kernel.InvalidArgument("grep: glob: %v", err)
		}
	}
	paths, hidden, cut, err := g.files(ctx, root, gp, strings.Contains(glob, "/"), call)
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
	search := map[string]any{"matching_lines": lines, "matching_files": len(matched), "truncated": cut != nil}
	meta := map[string]any{"output_mode": mode, "search": search, "pattern": *a.Pattern, "path": root, "failed_reads": failed}
	if hidden > 0 {
		meta["hidden_by_policy"] = hidden // entries the permission policy keeps from this search
	}
	if glob != "" {
		meta["glob"] = glob
	}
	switch mode {
	case "summary":
		return warnScanCut(kernel.OK(fmt.Sprintf("%d matching line(s) in %d file(s)", lines, len(matched)), meta), cut), nil
	case "content":
		res, err := g.renderContent(ctx, m, matched, ctxLines, lines, meta)
		if err != nil {
			return nil, err
		}
		return warnScanCut(res, cut), nil
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
	out, outCut := boundOutput(b.String(), "use a smaller limit")
	meta["output_truncated"] = outCut
	return warnScanCut(kernel.OK(out, meta), cut), nil
}

// files lists the regular files to search under root, in walk order,
// that glob (nil: every file) matches: against the path relative to root
// when the glob has a '/' (globPath), else against the base name.
//
// Paths the permission policy hides from this call (Call.IsHidden) are
// left out, and a directory whose whole subtree is hidden
// (Call.IsHiddenTree) is not descended; how many files were left out, and
// directories skipped, is returned. A walk the workspace's scan limit cut
// returns the files before the cut and the cut (else nil).
func (g *Grep) files(ctx context.Context, root string, glob *globmatch.Pattern, globPath bool, call *kernel.Call) ([]string, int, *workspace.ScanLimitError, error) {
	st, err := g.ws.Stat(ctx, root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil, notFound("grep", "path", root, err)
	}
	if err != nil {
		return nil, 0, nil, asOp("grep", err)
	}
	if st.Kind != workspace.KindDir {
		if call.IsHidden(root) {
			return nil, 1, nil, nil
		}
		if glob == nil || glob.Match(path.Base(root)) {
			return []string{root}, 0, nil, nil
		}
		return nil, 0, nil, nil
	}
	w := work.New(ctx) // the glob's matching work
	keep := func(p string) (bool, error) {
		if globPath {
			return glob.MatchIn(w, strings.TrimPrefix(p, root+"/"), false)
		}
		return glob.MatchIn(w, p[strings.LastIndexByte(p, '/')+1:], true)
	}
	var out []string
	nHidden := 0
	if call == nil || call.Hidden == nil {
		// Nothing hidden: every file under root at once (memfs keeps the
		// list), no walk.
		all, err := g.ws.Files(ctx, root)
		cut := scanCut(&err)
		if err != nil || glob == nil {
			return all, 0, cut, err // shared: not modified
		}
		for _, p := range all {
			ok, err := keep(p)
			if err != nil {
				return nil, 0, nil, err
			}
			if ok {
				out = append(out, p)
			}
		}
		return out, 0, cut, nil
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
	cut := scanCut(&err)
	return out, nHidden, cut, err
}

func (g *Grep) scanAll(ctx context.Context, paths []string, m *linematch.Matcher, content bool) []grepFile {
	results := make([]grepFile, len(paths))
	one := func(w *work.Meter, i int) {
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
			r.count, r.skipped, _ = m.ScanFile(w, data, nil, true)
			return
		}
		r.count, r.skipped, _ = m.ScanFile(w, data, func(idx, ls, le int) { r.spans = append(r.spans, span{idx, ls, le}) }, true)
		if r.count > 0 {
			r.data = data
		}
	}
	workers := min(runtime.GOMAXPROCS(0), 8)
	if workers <= 1 || len(paths) < 64 {
		w := work.New(ctx) // js/wasm: let the host's events (abort, timeout) in
		for i := range paths {
			if w.Check() != nil {
				break
			}
			one(w, i)
		}
		return results
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			w := work.New(ctx)
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= len(paths) {
					return
				}
				one(w, i)
			}
		})
	}
	wg.Wait()
	return results
}

func (g *Grep) renderContent(ctx context.Context, m *linematch.Matcher, matched []*grepFile, ctxLines, total int, meta map[string]any) (*kernel.Result, error) {
	w := work.New(ctx)
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
			t, cut, err := longLine(m, w, bytes.TrimSuffix(data[ls:le], []byte("\r")), match)
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
func longLine(m *linematch.Matcher, w *work.Meter, line []byte, match bool) (string, bool, error) {
	if len(line) <= maxLineLength || utf8.RuneCount(line) <= maxLineLength {
		return string(line), false, nil
	}
	from := 0 // byte offset of the first rune shown
	if match {
		loc, err := m.FirstMatch(w, line)
		if err != nil {
			return "", false, err
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
