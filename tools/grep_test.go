package tools

import (
	"fmt"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/kernel"
)

// TestGrepRefusesHugeProgram: a pattern past linematch.MaxProgram is an
// invalid argument naming the limit.
func TestGrepRefusesHugeProgram(t *testing.T) {
	res := run(t, newWS(t, map[string]string{"a.txt": "x\n"}), "grep", map[string]any{"pattern": strings.Repeat(`[a-z]{1,1000}`, 6)})
	if kindOf(res) != "invalid_argument" || !strings.Contains(res.Output, "grep: the pattern compiles to about") {
		t.Fatalf("grep with a huge program: %s %q", kindOf(res), res.Output)
	}
}

// TestFoldLiteralWithoutUpperCase: ß has no upper case of its own
// (ToUpper gives ß) yet folds to ẞ, so with -i a literal of it must not be
// searched for as it is.
func TestFoldLiteralWithoutUpperCase(t *testing.T) {
	ws := newWS(t, map[string]string{"de.txt": "STRAẞE\nstraße\nstrasse\n"})
	for _, args := range []map[string]any{
		{"pattern": "ß", "-i": true, "output_mode": "count"},
		{"pattern": "(?i)ß", "output_mode": "count"},
		{"pattern": "(?i)[a-z]ß", "output_mode": "count"},
	} {
		res := run(t, ws, "grep", args)
		if !strings.Contains(res.Output, "de.txt: 2 matching line(s)") {
			t.Errorf("%v: %s", args, res.Output)
		}
	}
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
