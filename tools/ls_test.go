package tools

import (
	"fmt"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/kernel"
)

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
