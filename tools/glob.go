package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/a3s-lab/code-wasm/internal/scan"
	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/tools/internal/globmatch"
	"github.com/a3s-lab/code-wasm/tools/internal/work"
	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/bmatcuk/doublestar/v4"
)

// Glob is the `glob` tool: file paths matching a doublestar pattern, in
// pages (REFERENCE.md §2.6).
type Glob struct{ ws *workspace.Workspace }

func (*Glob) Name() string { return "glob" }
func (*Glob) Description() string {
	return "Find files by path pattern. Patterns are matched against paths relative to path (default: the workspace root): `*` and `?` stay within one " +
		"directory, `**` crosses directories, `{a,b}` and `[abc]` are alternatives (e.g. `**/*.go`, `src/**/*.{ts,tsx}`). Output: one workspace-relative " +
		"path per line, then `(X of Y file(s) shown)`, and a `cursor=` line when more remain (limit: default 200, maximum 1000). " +
		"sort=backend (default) keeps the workspace's walk order; sort=path sorts lexically: use it when paging so pages are stable. " +
		"`\\` counts as `/` (src\\*.ts is src/*.ts); match a literal metacharacter with a class such as [*]. " +
		"A pattern is at most 1024 bytes, with braces at most 8 deep and 1024 alternatives once expanded. " +
		"No match is not an error: the output says \"No files found matching pattern\"."
}
func (*Glob) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"pattern":{"type":"string","minLength":1,"description":"Doublestar pattern relative to path, e.g. **/*.go."},` +
		`"path":{"type":"string","description":"Directory to search from, relative to the workspace root. Default: the root."},` +
		`"limit":{"type":"integer","minimum":1,"description":"Page size (default 200, maximum 1000; larger values are clamped)."},` +
		`"cursor":{"type":"string","description":"Copy next_cursor from the previous page; omit for the first page."},` +
		`"sort":{"type":"string","enum":["backend","path"],"default":"backend","description":"backend (walk order) or path (lexical; stable pages)."}},` +
		`"required":["pattern"],"additionalProperties":false,` +
		`"examples":[{"pattern":"**/*.go"},{"pattern":"*.{ts,tsx}","path":"src","sort":"path","limit":100}]}`)
}
func (*Glob) Capabilities(json.RawMessage) kernel.Capabilities { return kernel.ReadOnlyPaginated(16) }

func (g *Glob) Execute(ctx context.Context, call *kernel.Call) (*kernel.Result, error) {
	var a struct {
		Pattern *string `json:"pattern"`
		Path    *string `json:"path"`
		Limit   *int    `json:"limit"`
		Cursor  *string `json:"cursor"`
		Sort    *string `json:"sort"`
	}
	if err := decodeArgs("glob", call.Args, &a); err != nil {
		return nil, err
	}
	if a.Pattern == nil || *a.Pattern == "" {
		return nil, kernel.InvalidArgument("glob: pattern is required and must not be empty")
	}
	sortBy := "backend"
	if a.Sort != nil {
		sortBy = *a.Sort
	}
	if sortBy != "backend" && sortBy != "path" {
		return nil, kernel.InvalidArgument("glob: unknown sort %q: use \"backend\" or \"path\"", sortBy)
	}
	pg, err := parsePage("glob", a.Limit, a.Cursor)
	if err != nil {
		return nil, err
	}
	pattern, err := workspace.ValidatePattern(*a.Pattern)
	if err != nil {
		return nil, kernel.InvalidArgument("glob: %v", err)
	}
	if !doublestar.ValidatePattern(pattern) {
		return nil, kernel.InvalidArgument("glob: %q is not a valid pattern (check brackets and braces)", *a.Pattern)
	}
	gp, err := globmatch.Compile(pattern)
	if err != nil {
		return nil, kernel.InvalidArgument("glob: %v", err)
	}
	root := "."
	if a.Path != nil && *a.Path != "" {
		if root, err = workspace.Resolve(*a.Path); err != nil {
			return nil, &workspace.PathError{Op: "glob", Path: *a.Path, Err: err}
		}
	}
	st, err := g.ws.Stat(ctx, root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, notFound("glob", "path", root, err)
	}
	if err != nil {
		return nil, asOp("glob", err)
	}
	if st.Kind != workspace.KindDir {
		return nil, kernel.InvalidArgument("glob: path %s is a file, not a directory", workspace.Display(root))
	}
	// Walk only below the pattern's literal directory prefix.
	base, _ := doublestar.SplitPattern(pattern)
	walkRoot := root
	if base != "." && !strings.ContainsAny(base, `\`) {
		walkRoot = workspace.Join(root, base)
	}
	// "**/<name pattern>" matches at any depth: test the base name only.
	name := globmatch.BaseName(pattern)
	var suffix *scan.Suffix // "**/*.go": the names ending in ".go" (no '/' in it)
	if name != nil && name.Suffix() != "" {
		suffix = scan.NewSuffix(name.Suffix())
	}
	w := work.New(ctx) // the matching's own work, beyond the walk's pacing
	prefix := ""
	if root != "." {
		prefix = root + "/"
	}
	// sort=path needs every match to sort; sort=backend keeps only the
	// requested page and counts the rest (a tree can hold far more matches
	// than a page, and under js/wasm growing that slice was a quarter of
	// the call: RATIONALE.md).
	keepAll := sortBy == "path"
	from, to := pg.Offset, pg.Offset+pg.AppliedLimit
	var matches []string
	total := 0
	add := func(p string) {
		if keepAll || total >= from && total < to {
			if matches == nil && !keepAll {
				matches = make([]string, 0, pg.AppliedLimit)
			}
			matches = append(matches, p)
		}
		total++
	}
	var idx []int32 // suffix.Index's output, reused
	// Runs of entries, not a call per entry: under js/wasm the calls were
	// most of the walk (RATIONALE.md).
	visit := func(ps []string, es []workspace.Entry) error {
		n := len(es)
		if es[n-1].Kind == workspace.KindDir { // only the last of a run can be
			n--
		}
		if suffix != nil {
			// The suffix holds no '/', so a path ends with it exactly
			// when its base name does.
			if len(idx) < n {
				idx = make([]int32, max(n, 256))
			}
			k := suffix.Index(ps[:n], idx[:n])
			if !keepAll && (total+k <= from || total >= to) {
				total += k // none of these is on the page
				return nil
			}
			for _, j := range idx[:k] {
				add(ps[j])
			}
			return nil
		}
		for i := range n {
			var ok bool
			var err error
			if name != nil {
				ok, err = name.MatchIn(w, es[i].Name, true)
			} else {
				ok, err = gp.MatchIn(w, strings.TrimPrefix(ps[i], prefix), false)
			}
			if err != nil {
				return err
			}
			if ok {
				add(ps[i])
			}
		}
		return nil
	}
	hidden := 0
	var cut *workspace.ScanLimitError // the workspace's scan limit stopped the walk
	if call == nil || call.Hidden == nil {
		// Nothing hidden: every file under walkRoot at once (memfs keeps
		// the list), matched in chunks; no walk.
		var ps []string
		ps, err = g.ws.Files(ctx, walkRoot)
		if cut = scanCut(&err); err == nil {
			err = matchFiles(w, ps, name, suffix, gp, prefix, add, func(k int) bool {
				if !keepAll && (total+k <= from || total >= to) {
					total += k // none of these is on the page
					return true
				}
				return false
			})
		}
	} else {
		err = g.ws.WalkRuns(ctx, walkRoot, hideRuns(call, visit, &hidden))
		cut = scanCut(&err)
	}
	if err != nil && walkRoot != root && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, workspace.ErrNotDir)) {
		// The pattern's literal directory prefix is not a directory (or
		// went away meanwhile): no match is not an error. When it is a
		// file, that file is the one candidate (`src/**` matches src).
		err, matches, total = nil, nil, 0
		if st, serr := g.ws.Stat(ctx, walkRoot); serr == nil && st.Kind != workspace.KindDir {
			if gp.Match(strings.TrimPrefix(walkRoot, prefix)) && !call.IsHidden(walkRoot) {
				add(walkRoot)
			}
		}
	}
	if err != nil {
		return nil, asOp("glob", err)
	}
	if keepAll {
		slices.Sort(matches)
	}
	lo, hi, err := pg.window("glob", total)
	if err != nil {
		return nil, err
	}
	page := matches
	if keepAll {
		page = matches[lo:hi]
	}
	var b strings.Builder
	if total == 0 {
		fmt.Fprintf(&b, "No files found matching pattern: %s\n", *a.Pattern)
	} else {
		size := 0
		for _, p := range page {
			size += len(p) + 1
		}
		b.Grow(size + 256) // the paths and the footer: one allocation
		// The common case: every path is printable ASCII, printed as it is.
		plain := scan.NotPrintable(page) < 0
		for _, p := range page {
			if plain {
				b.WriteString(p)
			} else {
				writeDisplay(&b, p)
			}
			b.WriteByte('\n')
		}
		b.WriteString(pg.footer("file(s)"))
		b.WriteByte('\n')
	}
	if page == nil {
		page = []string{}
	}
	meta := map[string]any{"page": pg.meta(), "sort": sortBy, "pattern": pattern, "path": root, "paths": page}
	if cut != nil {
		meta["search"] = map[string]any{"truncated": true} // only then: the reference's glob metadata has no search
	}
	if hidden > 0 {
		meta["hidden_by_policy"] = hidden // entries the permission policy keeps from this search
	}
	out, outCut := boundOutput(b.String(), "use a smaller limit")
	meta["output_truncated"] = outCut
	return warnScanCut(kernel.OK(out, meta), cut), nil
}

// matchFiles applies glob's matchers to a list of file paths (ps, from
// Workspace.Files): the suffix test over chunks of the list at once, else
// the base-name matcher, else the whole pattern on the path relative to the
// search root (prefix stripped). add gets each match in order; skip, given
// how many matches a chunk holds, may count them itself and return true.
// The context is checked, and the host let in, between chunks and as the
// matching work adds up (w).
func matchFiles(w *work.Meter, ps []string, name *globmatch.Pattern, suffix *scan.Suffix, gp *globmatch.Pattern, prefix string,
	add func(string), skip func(int) bool) error {
	const chunk = 1024
	var idx []int32
	if suffix != nil {
		idx = make([]int32, min(chunk, len(ps)))
	}
	for off := 0; off < len(ps); off += chunk {
		if err := w.Check(); err != nil {
			return err
		}
		c := ps[off:min(off+chunk, len(ps))]
		if suffix != nil {
			// The suffix holds no '/', so a path ends with it exactly
			// when its base name does.
			k := suffix.Index(c, idx[:len(c)])
			if !skip(k) {
				for _, j := range idx[:k] {
					add(c[j])
				}
			}
			continue
		}
		for _, p := range c {
			var ok bool
			var err error
			if name != nil {
				ok, err = name.MatchIn(w, p[strings.LastIndexByte(p, '/')+1:], true)
			} else {
				ok, err = gp.MatchIn(w, strings.TrimPrefix(p, prefix), false)
			}
			if err != nil {
				return err
			}
			if ok {
				add(p)
			}
		}
	}
	return nil
}

// hideRuns wraps a WalkRunFunc so it never sees the paths the call's
// permission policy hides (kernel.Call.Hidden), nor anything under a hidden
// directory; *n counts the entries left out. Without hidden paths it is fn.
func hideRuns(call *kernel.Call, fn workspace.WalkRunFunc, n *int) workspace.WalkRunFunc {
	if call == nil || call.Hidden == nil {
		return fn
	}
	var ps []string
	var es []workspace.Entry
	return func(paths []string, entries []workspace.Entry) error {
		ps, es = ps[:0], es[:0]
		skip := false
		for i := range entries {
			if entries[i].Kind == workspace.KindDir {
				if call.IsHiddenTree(paths[i]) {
					*n++
					skip = true // only the last of a run can be a directory
					continue
				}
			} else if call.Hidden(paths[i]) {
				*n++
				continue
			}
			ps, es = append(ps, paths[i]), append(es, entries[i])
		}
		if len(es) > 0 {
			if err := fn(ps, es); err != nil {
				return err
			}
		}
		if skip {
			return fs.SkipDir
		}
		return nil
	}
}

// MatchGlob compiles a glob pattern as the glob tool reads it (doublestar
// syntax, braces, the same limits) into a matcher of slash-separated
// relative paths. The session's ExportFiles filters with it (include).
func MatchGlob(pattern string) (func(name string) bool, error) {
	p, err := workspace.ValidatePattern(pattern)
	if err != nil {
		return nil, err
	}
	if !doublestar.ValidatePattern(p) {
		return nil, fmt.Errorf("%q is not a valid pattern (check brackets and braces)", pattern)
	}
	g, err := globmatch.Compile(p)
	if err != nil {
		return nil, err
	}
	return g.Match, nil
}
