package r2_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/tools"
	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/r2"
)

// search runs grep or glob over w as the kernel would, with hidden as the
// permission policy's Hidden (nil: nothing hidden, the Files path; else
// the walk).
func search(t *testing.T, w *workspace.Workspace, name string, args map[string]any, hidden func(string) bool) (*kernel.Result, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(args)
	for _, tl := range tools.Builtins(w) {
		if tl.Name() != name {
			continue
		}
		res, err := tl.Execute(context.Background(), &kernel.Call{Name: name, Args: b, Hidden: hidden})
		if err != nil {
			t.Fatalf("%s %v: %v", name, args, err)
		}
		s, _ := res.Metadata["search"].(map[string]any)
		return res, s
	}
	t.Fatalf("no tool %s", name)
	return nil, nil
}

// REFERENCE §4: grep and glob over R2 look at no more than the scan
// limit's files, and say so in metadata.search.truncated and the text; a
// tree of exactly the limit is whole (glob has metadata.search only when
// it was cut: the reference's glob metadata has none).
func TestSearchStopsAtTheScanLimit(t *testing.T) {
	ctx := context.Background()
	f := open(t, newMemBucket(), "s")
	if f.ScanLimit() != r2.DefaultScanLimit || r2.DefaultScanLimit != 500 {
		t.Fatalf("scan limit %d, DefaultScanLimit %d: REFERENCE §4 says 500", f.ScanLimit(), r2.DefaultScanLimit)
	}
	w := ws(t, f)
	for i := range 30 {
		if _, err := w.WriteFile(ctx, fmt.Sprintf("d%d/f%02d.txt", i%3, i), []byte("a needle\n")); err != nil {
			t.Fatal(err)
		}
	}
	nothing := func(string) bool { return false }
	for _, c := range []struct {
		limit int
		cut   bool
	}{{10, true}, {29, true}, {30, false}, {0, false}} {
		f.SetScanLimit(c.limit)
		want := 30
		if c.cut {
			want = c.limit
		}
		for _, hidden := range []func(string) bool{nil, nothing} {
			where := fmt.Sprintf("limit %d, walk %v", c.limit, hidden != nil)
			res, s := search(t, w, "grep", map[string]any{"pattern": "needle", "output_mode": "count"}, hidden)
			if res.ExitCode != 0 || s["truncated"] != c.cut || s["matching_files"] != want {
				t.Errorf("%s: grep: exit %d, search %v, want %d files, truncated %v\n%s", where, res.ExitCode, s, want, c.cut, res.Output)
			}
			if warned := strings.Contains(res.Output, fmt.Sprintf("scan limit of %d files: totals and paths may be incomplete", c.limit)); warned != c.cut {
				t.Errorf("%s: grep warns %v:\n%s", where, warned, res.Output)
			}
			res, s = search(t, w, "glob", map[string]any{"pattern": "**/*.txt"}, hidden)
			paths, _ := res.Metadata["paths"].([]string)
			if res.ExitCode != 0 || (s["truncated"] == true) != c.cut || len(paths) != want {
				t.Errorf("%s: glob: exit %d, search %v, %d paths, want %d\n%s", where, res.ExitCode, s, len(paths), want, res.Output)
			}
			if warned := strings.Contains(res.Output, "scan limit of"); warned != c.cut {
				t.Errorf("%s: glob warns %v:\n%s", where, warned, res.Output)
			}
		}
	}
	// A search of one directory counts only what it walks.
	f.SetScanLimit(10)
	if _, s := search(t, w, "grep", map[string]any{"pattern": "needle", "path": "d1", "output_mode": "count"}, nil); s["truncated"] != false || s["matching_files"] != 10 {
		t.Errorf("grep in d1 (10 files) under a limit of 10: %v", s)
	}
}
