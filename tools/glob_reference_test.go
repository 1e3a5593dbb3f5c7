package tools

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/bmatcuk/doublestar/v4"
)

// globReference is glob's contract written plainly: walk everything under
// root, match each file's root-relative path with doublestar.Match, sort
// when asked, cut the page, render each path with workspace.Display. The
// tool's fast paths (base-name matching, walking below the literal prefix,
// keeping only the page, the ASCII display shortcut) must not change a
// byte of the result.
func globReference(t *testing.T, ws *workspace.Workspace, args map[string]any) (string, map[string]any) {
	t.Helper()
	pattern := args["pattern"].(string)
	root := "."
	if p, ok := args["path"].(string); ok {
		root = p
	}
	sortBy := "backend"
	if s, ok := args["sort"].(string); ok {
		sortBy = s
	}
	var limit *int
	if l, ok := args["limit"].(int); ok {
		limit = &l
	}
	var cursor *string
	if c, ok := args["cursor"].(string); ok {
		cursor = &c
	}
	pg, err := parsePage("glob", limit, cursor)
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	err = ws.Walk(context.Background(), root, func(p string, e workspace.Entry) error {
		rel := p
		if root != "." {
			rel = strings.TrimPrefix(p, root+"/")
		}
		if ok, _ := doublestar.Match(pattern, rel); ok && e.Kind != workspace.KindDir {
			all = append(all, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if sortBy == "path" {
		slices.Sort(all)
	}
	lo, hi, err := pg.window("glob", len(all))
	if err != nil {
		return kernelFailureText(err), nil
	}
	page := append([]string{}, all[lo:hi]...)
	var b strings.Builder
	if len(all) == 0 {
		fmt.Fprintf(&b, "No files found matching pattern: %s\n", pattern)
	} else {
		for _, p := range page {
			b.WriteString(workspace.Display(p) + "\n")
		}
		b.WriteString(pg.footer("file(s)") + "\n")
	}
	out, cut := boundOutput(b.String(), "use a smaller limit")
	return out, map[string]any{"page": pg.meta(), "sort": sortBy, "pattern": pattern, "path": root, "paths": page, "output_truncated": cut}
}

func kernelFailureText(err error) string { return "error: " + err.Error() }

func TestGlobAgreesWithReference(t *testing.T) {
	files := []string{
		"a.go", "a-b.go", "a/b.go", "a/b_test.go", "a/c/d.go", "a/c/d.txt", "a.b/x.go", "go.mod", "go/src/x_test.go",
		"src/app.ts", "src/view.tsx", "src/lib/x.ts", "src/lib/deep/er/y.ts", ".hidden/secret.go", "é/ü.go", "日本/語.go",
		"sp ace/f.go", "x*y/z.go", "Makefile", "docs/Makefile", "b/xay", "b/xy", "b/yx", "a/c.go/real.go",
	}
	ws := newWS(t, func() map[string]string {
		m := map[string]string{}
		for _, f := range files {
			m[f] = "x"
		}
		return m
	}())
	if err := ws.MkdirAll(context.Background(), "empty/dir.go"); err != nil { // a directory matching *.go is not listed
		t.Fatal(err)
	}
	patterns := []string{
		"**/*.go", "**/*_test.go", "*.go", "**/*", "**", "src/**/*.ts", "src/**/*.{ts,tsx}", "**/x*y", "a/*/d.go",
		"nomatch/**", "**/*.nomatch", "**/[ab]*", "**/Makefile", "**/*.", "**/?.go", "a/**", "**/c.go/*", "**/é*", "*/*",
		// braces, expanded up front by globmatch.Compile: alternatives holding '/'
		// and '**', nested, empty, in sequence, and next to classes
		"**/*.{go,ts}", "{a,src}/**/*.{go,ts,tsx}", "{**/*.go,src/**}", "**/{a,b}{,_test}.go", "{a/{c,b},src}/**",
		"**/{**,x*y}", "{,a/}*.go", "**/{[ab]*,[{]*}", "{a,a}{.go,.go}", "{src/lib,a}/{**/,}*.{ts,go}", "x[*]y/{z,w}.go",
	}
	pages := []map[string]any{{}, {"limit": 1}, {"limit": 3, "cursor": "2"}, {"limit": 2, "cursor": "4"}, {"limit": 1000}, {"limit": 5000}}
	var n int
	for _, pat := range patterns {
		for _, root := range []string{"", "a", "src"} {
			for _, sortBy := range []string{"", "backend", "path"} {
				for _, pg := range pages {
					args := map[string]any{"pattern": pat}
					if root != "" {
						args["path"] = root
					}
					if sortBy != "" {
						args["sort"] = sortBy
					}
					for k, v := range pg {
						args[k] = v
					}
					ref := map[string]any{"pattern": pat, "path": "."}
					for k, v := range args {
						ref[k] = v
					}
					wantOut, wantMeta := globReference(t, ws, ref)
					res := run(t, ws, "glob", args)
					if wantMeta == nil { // the page is beyond the matches: an invalid cursor
						if kindOf(res) != "invalid_argument" || !strings.Contains(res.Output, "cursor is invalid") {
							t.Errorf("glob %v: %q; want an invalid cursor error", args, res.Output)
						}
						continue
					}
					n++
					if res.ExitCode != 0 || res.Output != wantOut {
						t.Errorf("glob %v output:\n%s\nwant:\n%s", args, res.Output, wantOut)
						continue
					}
					if !reflect.DeepEqual(res.Metadata, wantMeta) {
						t.Errorf("glob %v metadata:\n%#v\nwant:\n%#v", args, res.Metadata, wantMeta)
					}
				}
			}
		}
	}
	if n < 500 {
		t.Fatalf("only %d successful comparisons: the table lost its cases", n)
	}
}
