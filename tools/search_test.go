package tools

import (
	"slices"

	"fmt"
	"strings"
	"testing"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/a3s-lab/code-wasm/kernel"
)

var searchFiles = map[string]string{
	"main.go":           "package main\n\nfunc main() {\n\tprintln(\"Hello\")\n}\n",
	"lib/util.go":       "package lib\n\n// TODO: tidy\nfunc Helper() int { return 1 }\nfunc other() {}\n",
	"lib/util_test.go":  "package lib\n\nfunc TestHelper() {}\n",
	"web/app.ts":        "export function hello() {}\n",
	"web/view.tsx":      "export const View = () => null // hello\n",
	"web/style.css":     "body { color: red }\n",
	"docs/readme.md":    "Hello docs\nsecond line\nthird\nfourth hello\n",
	"bin/blob.bin":      "hello\x00binary\n",
	"crlf.txt":          "hello\r\nworld\r\n",
	".hidden/secret.go": "package hidden // hello\n",
}

func TestGrep(t *testing.T) {
	ws := newWS(t, searchFiles)
	cases := []struct {
		name   string
		args   map[string]any
		kind   kernel.ErrorType
		exact  string
		has    []string
		hasnt  []string
		search [2]int // matching lines, files; -1 to skip
	}{
		{name: "content default", args: map[string]any{"pattern": "func main"}, exact: "main.go:3:func main() {\n\n1 match(es) in 1 file(s)\n", search: [2]int{1, 1}},
		{name: "regexp", args: map[string]any{"pattern": `^func [A-Z]\w+\(`}, has: []string{"lib/util.go:4:func Helper()", "lib/util_test.go:3:func TestHelper()"}, search: [2]int{2, 2}},
		{name: "case sensitive by default", args: map[string]any{"pattern": "hello"}, hasnt: []string{"main.go", "docs/readme.md:1:"}, has: []string{"docs/readme.md:4:fourth hello", "crlf.txt:1:hello\n"}},
		{name: "-i", args: map[string]any{"pattern": "hello", "-i": true}, has: []string{"main.go:4:", "docs/readme.md:1:Hello docs"}},
		{name: "binary skipped", args: map[string]any{"pattern": "binary"}, exact: "No matches found for pattern: binary\n", search: [2]int{0, 0}},
		{name: "hidden files searched", args: map[string]any{"pattern": "package hidden"}, has: []string{".hidden/secret.go:1:"}},
		{name: "glob base name", args: map[string]any{"pattern": "hello", "-i": true, "glob": "*.go"}, has: []string{"main.go:4:"}, hasnt: []string{"readme", "app.ts"}},
		{name: "glob brace set", args: map[string]any{"pattern": "hello", "glob": "*.{ts,tsx}"}, has: []string{"web/app.ts:1:", "web/view.tsx:1:"}, search: [2]int{2, 2}},
		{name: "glob with slash is relative to path", args: map[string]any{"pattern": "func", "glob": "lib/*_test.go"}, has: []string{"lib/util_test.go"}, hasnt: []string{"lib/util.go:"}},
		{name: "glob with slash under path", args: map[string]any{"pattern": "hello", "path": "web", "glob": "**/*.tsx"}, has: []string{"web/view.tsx"}, search: [2]int{1, 1}},
		{name: "path dir", args: map[string]any{"pattern": "func", "path": "lib"}, search: [2]int{3, 2}},
		{name: "path file", args: map[string]any{"pattern": "func", "path": "lib/util.go"}, search: [2]int{2, 1}},
		{name: "context", args: map[string]any{"pattern": "third", "context": 1}, exact: "docs/readme.md-2-second line\ndocs/readme.md:3:third\ndocs/readme.md-4-fourth hello\n\n1 match(es) in 1 file(s)\n"},
		{name: "context groups separated", args: map[string]any{"pattern": "^func", "path": "lib", "context": 1}, has: []string{"lib/util.go:4:func Helper", "lib/util.go:5:func other", "--\nlib/util_test.go-2-"}},
		{name: "summary", args: map[string]any{"pattern": "^func", "output_mode": "summary"}, exact: "4 matching line(s) in 3 file(s)", search: [2]int{4, 3}},
		{name: "files_with_matches sorted", args: map[string]any{"pattern": "^func", "output_mode": "files_with_matches"}, has: []string{"lib/util.go\nlib/util_test.go\nmain.go\n(3 of 3 file(s) shown)"}},
		{name: "count", args: map[string]any{"pattern": "^func", "output_mode": "count"}, has: []string{"lib/util.go: 2 matching line(s)\nlib/util_test.go: 1 matching line(s)\nmain.go: 1 matching line(s)\n"}},
		{name: "count with limit and cursor", args: map[string]any{"pattern": "func", "output_mode": "count", "limit": 1, "cursor": "1"}, has: []string{"lib/util_test.go: 1", "continue with cursor=\"2\""}, hasnt: []string{"main.go:"}},
		{name: "neutral limit in content mode", args: map[string]any{"pattern": "func main", "limit": 200, "cursor": ""}, search: [2]int{1, 1}},
		{name: "limit in content mode", args: map[string]any{"pattern": "x", "limit": 5}, kind: kernel.ErrInvalidArgument},
		{name: "cursor in summary mode", args: map[string]any{"pattern": "x", "output_mode": "summary", "cursor": "3"}, kind: kernel.ErrInvalidArgument},
		{name: "bad cursor", args: map[string]any{"pattern": "func", "output_mode": "count", "cursor": "abc"}, kind: kernel.ErrInvalidArgument, has: []string{"cursor is invalid or expired"}},
		{name: "cursor past the end", args: map[string]any{"pattern": "func", "output_mode": "count", "cursor": "9"}, kind: kernel.ErrInvalidArgument, has: []string{"cursor is invalid or expired"}},
		{name: "limit 0", args: map[string]any{"pattern": "func", "output_mode": "count", "limit": 0}, kind: kernel.ErrInvalidArgument},
		{name: "unknown output_mode", args: map[string]any{"pattern": "x", "output_mode": "lines"}, kind: kernel.ErrInvalidArgument, has: []string{`"lines"`}},
		{name: "bad regexp", args: map[string]any{"pattern": "a("}, kind: kernel.ErrInvalidArgument, has: []string{"RE2"}},
		{name: "lookaround unsupported", args: map[string]any{"pattern": "a(?=b)"}, kind: kernel.ErrInvalidArgument},
		{name: "empty pattern", args: map[string]any{"pattern": ""}, kind: kernel.ErrInvalidArgument},
		{name: "negative context", args: map[string]any{"pattern": "x", "context": -1}, kind: kernel.ErrInvalidArgument},
		{name: "huge context", args: map[string]any{"pattern": "x", "context": 101}, kind: kernel.ErrInvalidArgument},
		{name: "missing path", args: map[string]any{"pattern": "x", "path": "nope"}, kind: kernel.ErrNotFound},
		{name: "escaping path", args: map[string]any{"pattern": "x", "path": "../"}, kind: kernel.ErrInvalidArgument},
		{name: "escaping glob", args: map[string]any{"pattern": "x", "glob": "../*.go"}, kind: kernel.ErrInvalidArgument},
		{name: "bad glob", args: map[string]any{"pattern": "x", "glob": "*.{go"}, kind: kernel.ErrInvalidArgument},
		{name: "unknown argument", args: map[string]any{"pattern": "x", "include": "*.go"}, kind: kernel.ErrInvalidArgument},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := run(t, ws, "grep", c.args)
			if c.kind != "" {
				if res.ExitCode == 0 || kindOf(res) != c.kind {
					t.Fatalf("want %s, got %d %v %q", c.kind, res.ExitCode, res.ErrorKind, res.Output)
				}
			} else if res.ExitCode != 0 {
				t.Fatal(res.Output)
			}
			if c.exact != "" && res.Output != c.exact {
				t.Fatalf("output %q\nwant   %q", res.Output, c.exact)
			}
			for _, s := range c.has {
				if !strings.Contains(res.Output, s) {
					t.Fatalf("output %q lacks %q", res.Output, s)
				}
			}
			for _, s := range c.hasnt {
				if strings.Contains(res.Output, s) {
					t.Fatalf("output %q has %q", res.Output, s)
				}
			}
			if c.kind == "" && (c.search != [2]int{}) {
				s := res.Metadata["search"].(map[string]any)
				if s["matching_lines"] != c.search[0] || s["matching_files"] != c.search[1] || s["truncated"] != false {
					t.Fatalf("search %v want %v", s, c.search)
				}
			}
			if c.kind == "" && res.Metadata["output_mode"] == nil {
				t.Fatal("no output_mode in metadata")
			}
		})
	}
}

func TestGrepPaginatedMetadataAndCaps(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < 25; i++ {
		files[fmt.Sprintf("d/f%02d.txt", i)] = strings.Repeat("needle\n", i+1)
	}
	ws := newWS(t, files)
	var all []string
	cursor := ""
	for page := 0; ; page++ {
		res := run(t, ws, "grep", map[string]any{"pattern": "needle", "output_mode": "files_with_matches", "limit": 10, "cursor": cursor})
		m := metaJSON(t, res)
		p := m["page"].(map[string]any)
		if m["sort"] != "path" || p["total_items"] != 25.0 || p["applied_limit"] != 10.0 {
			t.Fatalf("meta %v", m)
		}
		all = append(all, res.Metadata["source_anchors"].([]string)...)
		if p["next_cursor"] == nil {
			if p["truncated"] != false || page != 2 {
				t.Fatalf("page %d: %v", page, p)
			}
			break
		}
		cursor = p["next_cursor"].(string)
	}
	if len(all) != 25 || all[0] != "d/f00.txt" || all[24] != "d/f24.txt" {
		t.Fatalf("pages %v", all)
	}
	res := run(t, ws, "grep", map[string]any{"pattern": "needle", "output_mode": "count", "limit": 5000})
	if p := res.Metadata["page"].(map[string]any); p["limit_clamped"] != true || p["applied_limit"] != 1000 || p["requested_limit"] != 5000 {
		t.Fatalf("page %v", p)
	}
	g := &Grep{}
	for mode, want := range map[string]kernel.Capabilities{
		"content": kernel.ParallelSafeRead(16), "summary": kernel.ParallelSafeRead(16),
		"count": kernel.ReadOnlyPaginated(16), "files_with_matches": kernel.ReadOnlyPaginated(16),
	} {
		if c := g.Capabilities([]byte(`{"pattern":"x","output_mode":"` + mode + `"}`)); c != want {
			t.Fatalf("%s caps %+v", mode, c)
		}
	}
}

func TestGrepContentBounded(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < 50; i++ {
		files[fmt.Sprintf("f%02d", i)] = strings.Repeat("match this line with some text\n", 200)
	}
	ws := newWS(t, files)
	res := run(t, ws, "grep", map[string]any{"pattern": "match"})
	if len(res.Output) > maxOutputSize || res.Metadata["output_truncated"] != true || !strings.Contains(res.Output, "[output truncated") {
		t.Fatalf("len %d meta %v", len(res.Output), res.Metadata)
	}
	if s := res.Metadata["search"].(map[string]any); s["matching_lines"] != 10000 || s["matching_files"] != 50 {
		t.Fatalf("totals %v", s)
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

func TestLs(t *testing.T) {
	files := map[string]string{"src/a.go": "12345", "src/sub/x": "", "top.txt": "hi"}
	for i := 0; i < 12; i++ {
		files[fmt.Sprintf("many/f%02d", i)] = "x"
	}
	ws := newWS(t, files)
	cases := []struct {
		name    string
		args    map[string]any
		kind    kernel.ErrorType
		entries string
		has     string
	}{
		{name: "root", args: map[string]any{}, entries: "[many:dir:0 src:dir:0 top.txt:file:2]", has: "dir           -  src/\nfile          2  top.txt\n"},
		{name: "subdir", args: map[string]any{"path": "src"}, entries: "[a.go:file:5 sub:dir:0]"},
		{name: "page", args: map[string]any{"path": "many", "limit": 5, "cursor": "10"}, entries: "[f10:file:1 f11:file:1]", has: "(2 of 12 entries shown, starting at item 11)"},
		{name: "first page says how to continue", args: map[string]any{"path": "many", "limit": 5}, has: "continue with cursor=\"5\""},
		{name: "missing", args: map[string]any{"path": "nope"}, kind: kernel.ErrNotFound},
		{name: "file", args: map[string]any{"path": "top.txt"}, kind: kernel.ErrInvalidArgument},
		{name: "escape", args: map[string]any{"path": ".."}, kind: kernel.ErrInvalidArgument},
		{name: "bad cursor", args: map[string]any{"cursor": "x"}, kind: kernel.ErrInvalidArgument},
		{name: "limit 0", args: map[string]any{"limit": 0}, kind: kernel.ErrInvalidArgument},
		{name: "unknown", args: map[string]any{"recursive": true}, kind: kernel.ErrInvalidArgument},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := run(t, ws, "ls", c.args)
			if c.kind != "" {
				if kindOf(res) != c.kind {
					t.Fatalf("want %s got %v %q", c.kind, res.ErrorKind, res.Output)
				}
				return
			}
			if c.entries != "" {
				var got []string
				for _, e := range res.Metadata["entries"].([]map[string]any) {
					got = append(got, fmt.Sprintf("%v:%v:%v", e["name"], e["kind"], e["size"]))
				}
				if "["+strings.Join(got, " ")+"]" != c.entries {
					t.Fatalf("entries %v want %s", got, c.entries)
				}
			}
			if c.has != "" && !strings.Contains(res.Output, c.has) {
				t.Fatalf("output %q lacks %q", res.Output, c.has)
			}
		})
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
