package tools

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/bmatcuk/doublestar/v4"
)

// TestGlobLiteralPrefixIsAFile: when the directory part of a pattern names
// a file, nothing is under it: no match, not an error, and `src/**`
// matches src itself as doublestar does.
func TestGlobLiteralPrefixIsAFile(t *testing.T) {
	ws := newWS(t, map[string]string{"src": "a file\n", "lib/a.go": "package a\n"})
	for _, tc := range []struct {
		pattern, want string
	}{
		{"src/*.go", "No files found matching pattern: src/*.go"},
		{"lib/a.go/*", "No files found matching pattern: lib/a.go/*"},
		{"src/**", "src\n"},
		{"nosuch/*.go", "No files found matching pattern: nosuch/*.go"},
	} {
		res := run(t, ws, "glob", map[string]any{"pattern": tc.pattern})
		if res.ExitCode != 0 || !strings.Contains(res.Output, tc.want) {
			t.Errorf("glob %s: exit %d, %q; want %q", tc.pattern, res.ExitCode, res.Output, tc.want)
		}
	}
}

func TestGlob(t *testing.T) {
	ws := newWS(t, searchFiles)
	cases := []struct {
		name  string
		args  map[string]any
		kind  kernel.ErrorType
		paths []string
		has   string
	}{
		{name: "doublestar", args: map[string]any{"pattern": "**/*.go", "sort": "path"}, paths: []string{".hidden/secret.go", "lib/util.go", "lib/util_test.go", "main.go"}},
		{name: "backend order is walk order", args: map[string]any{"pattern": "**/*.go"}, paths: []string{".hidden/secret.go", "lib/util.go", "lib/util_test.go", "main.go"}},
		{name: "single star stays in a directory", args: map[string]any{"pattern": "*.go"}, paths: []string{"main.go"}},
		{name: "brace set", args: map[string]any{"pattern": "web/*.{ts,tsx}"}, paths: []string{"web/app.ts", "web/view.tsx"}},
		{name: "relative to path", args: map[string]any{"pattern": "*.go", "path": "lib"}, paths: []string{"lib/util.go", "lib/util_test.go"}},
		{name: "literal prefix", args: map[string]any{"pattern": "docs/**"}, paths: []string{"docs/readme.md"}},
		{name: "missing literal prefix", args: map[string]any{"pattern": "nope/**/*.go"}, paths: nil, has: "No files found matching pattern: nope/**/*.go"},
		{name: "no match is success", args: map[string]any{"pattern": "**/*.rs"}, paths: nil, has: "No files found matching pattern: **/*.rs"},
		{name: "limit and cursor", args: map[string]any{"pattern": "**/*", "sort": "path", "limit": 3, "cursor": "3"}, paths: []string{"docs/readme.md", "lib/util.go", "lib/util_test.go"}, has: "continue with cursor=\"6\""},
		{name: "unknown sort", args: map[string]any{"pattern": "*", "sort": "mtime"}, kind: kernel.ErrInvalidArgument},
		{name: "bad cursor", args: map[string]any{"pattern": "*", "cursor": "-4"}, kind: kernel.ErrInvalidArgument},
		{name: "cursor beyond", args: map[string]any{"pattern": "*", "cursor": "99"}, kind: kernel.ErrInvalidArgument},
		{name: "absolute pattern", args: map[string]any{"pattern": "/etc/*"}, kind: kernel.ErrInvalidArgument},
		{name: "dotdot pattern", args: map[string]any{"pattern": "../**"}, kind: kernel.ErrInvalidArgument},
		{name: "invalid pattern", args: map[string]any{"pattern": "[a-"}, kind: kernel.ErrInvalidArgument},
		{name: "missing path", args: map[string]any{"pattern": "*", "path": "nope"}, kind: kernel.ErrNotFound},
		{name: "path is a file", args: map[string]any{"pattern": "*", "path": "main.go"}, kind: kernel.ErrInvalidArgument},
		{name: "empty pattern", args: map[string]any{"pattern": ""}, kind: kernel.ErrInvalidArgument},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := run(t, ws, "glob", c.args)
			if c.kind != "" {
				if kindOf(res) != c.kind {
					t.Fatalf("want %s got %v %q", c.kind, res.ErrorKind, res.Output)
				}
				return
			}
			if res.ExitCode != 0 {
				t.Fatal(res.Output)
			}
			got := res.Metadata["paths"].([]string)
			if fmt.Sprint(got) != fmt.Sprint(append([]string{}, c.paths...)) {
				t.Fatalf("paths %v want %v", got, c.paths)
			}
			// The output lists the same paths one per line, first.
			lines := strings.Split(res.Output, "\n")
			for i, p := range c.paths {
				if lines[i] != p {
					t.Fatalf("output line %d = %q, want %q", i, lines[i], p)
				}
			}
			if c.has != "" && !strings.Contains(res.Output, c.has) {
				t.Fatalf("output %q lacks %q", res.Output, c.has)
			}
		})
	}
}

func TestGlobBackendVersusPathOrder(t *testing.T) {
	ws := newWS(t, map[string]string{"a/b.go": "", "a.go": "", "a-b.go": ""})
	backend := run(t, ws, "glob", map[string]any{"pattern": "**/*.go"}).Metadata["paths"]
	byPath := run(t, ws, "glob", map[string]any{"pattern": "**/*.go", "sort": "path"}).Metadata["paths"]
	if fmt.Sprint(byPath) != "[a-b.go a.go a/b.go]" || fmt.Sprint(backend) != "[a/b.go a-b.go a.go]" {
		t.Fatalf("path %v backend %v", byPath, backend)
	}
}

// TestGlobBaseNameFastPath: "**/<name>" answered from the base name agrees
// with doublestar on the full path.
func TestGlobBaseNameFastPath(t *testing.T) {
	paths := []string{"a.go", "x/a.go", "x/y/z.go", ".h/a.go", "x/.a.go", "a.ts", "x/b.tsx", "x/y/c_test.go", "go", "x/go"}
	files := map[string]string{}
	for _, p := range paths {
		files[p] = ""
	}
	ws := newWS(t, files)
	for _, pat := range []string{"**/*.go", "**/*.{ts,tsx}", "**/*_test.go", "**/a.*", "**/go", "**/[a-b].*", "**/?.go"} {
		got := run(t, ws, "glob", map[string]any{"pattern": pat, "sort": "path"}).Metadata["paths"].([]string)
		var want []string
		for _, p := range paths {
			if ok, _ := doublestar.Match(pat, p); ok {
				want = append(want, p)
			}
		}
		slices.Sort(want)
		if fmt.Sprint(got) != fmt.Sprint(append([]string{}, want...)) {
			t.Fatalf("%s: got %v want %v", pat, got, want)
		}
	}
}
