package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/a3s-lab/code-wasm/kernel"
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
	var name func(string) bool
	if rest, ok := strings.CutPrefix(pattern, "**/"); ok && !strings.ContainsAny(rest, "/\\") && rest != "**" {
		name = nameMatcher(rest)
	}
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
	err = g.ws.Walk(ctx, walkRoot, func(p string, e workspace.Entry) error {
		if e.Kind == workspace.KindDir {
			return nil
		}
		if name != nil {
			if !name(e.Name) {
				return nil
			}
		} else if ok, _ := doublestar.Match(pattern, strings.TrimPrefix(p, prefix)); !ok {
			return nil
		}
		if keepAll || total >= from && total < to {
			matches = append(matches, p)
		}
		total++
		return nil
	})
	if err != nil && walkRoot != root {
		if _, serr := g.ws.Stat(ctx, walkRoot); serr != nil {
			err, matches, total = nil, nil, 0 // the literal prefix does not exist: no matches
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
		for _, p := range page {
			writeDisplay(&b, p)
			b.WriteByte('\n')
		}
		b.WriteString(pg.footer("file(s)"))
		b.WriteByte('\n')
	}
	if page == nil {
		page = []string{}
	}
	meta := map[string]any{"page": pg.meta(), "sort": sortBy, "pattern": pattern, "path": root, "paths": page}
	out, cut := boundOutput(b.String(), "use a smaller limit")
	meta["output_truncated"] = cut
	return kernel.OK(out, meta), nil
}

// nameMatcher returns a matcher of base names (no '/') equivalent to
// doublestar.Match(pattern, name). Patterns whose only wildcard is '*'
// between ASCII literals (`*.go`, `*_test.go`, `Makefile`, `x*y*z`), the
// common case, are matched with prefix, suffix and substring searches
// instead of doublestar's rune-by-rune matcher, which dominated walking a
// large tree (see RATIONALE.md); anything else goes to doublestar.
func nameMatcher(pattern string) func(name string) bool {
	simple := !strings.Contains(pattern, "**")
	for i := 0; i < len(pattern) && simple; i++ {
		c := pattern[i]
		simple = c < utf8.RuneSelf && c != '/' && !strings.ContainsRune("?[]{}\\,!", rune(c))
	}
	if !simple {
		return func(name string) bool {
			ok, _ := doublestar.Match(pattern, name)
			return ok
		}
	}
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return func(name string) bool { return name == pattern && !strings.Contains(name, "/") }
	}
	first, last, mid := parts[0], parts[len(parts)-1], parts[1:len(parts)-1]
	return func(name string) bool {
		if len(name) < len(first)+len(last) || !strings.HasPrefix(name, first) || !strings.HasSuffix(name, last) ||
			strings.Contains(name, "/") {
			return false
		}
		s := name[len(first) : len(name)-len(last)]
		for _, m := range mid {
			i := strings.Index(s, m)
			if i < 0 {
				return false
			}
			s = s[i+len(m):]
		}
		return true
	}
}
