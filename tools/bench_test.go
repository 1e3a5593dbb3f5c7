package tools

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/memfs"
)

// gorootWS loads every file of GOROOT/src into one memory workspace, once
// per test binary (the benchmarks share it; loading is not measured).
var gorootWS = sync.OnceValues(func() (*workspace.Workspace, error) {
	fsys := memfs.New()
	src := filepath.Join(runtime.GOROOT(), "src")
	ctx := context.Background()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		return fsys.PutFile(ctx, filepath.ToSlash(rel), b) // versions hashed on first use
	})
	if err != nil {
		return nil, err
	}
	return workspace.New(fsys)
})

// BenchmarkTools runs grep (content and count) and glob over the whole Go
// source tree. bench/tools.bench.mjs runs it natively and under js/wasm in
// Node and prints the ratios.
func BenchmarkTools(b *testing.B) {
	ws, err := gorootWS()
	if err != nil {
		b.Skipf("GOROOT/src not readable here: %v", err)
	}
	cases := []struct {
		name string
		tool string
		args map[string]any
	}{
		{"grep/content/literal", "grep", map[string]any{"pattern": "ErrUnexpectedEOF"}},
		{"grep/content/regex", "grep", map[string]any{"pattern": `func \(\w+ \*?\w+\) Close\(`}},
		{"grep/count/literal", "grep", map[string]any{"pattern": "ErrUnexpectedEOF", "output_mode": "count"}},
		{"grep/count/regex", "grep", map[string]any{"pattern": `func \(\w+ \*?\w+\) Close\(`, "output_mode": "count"}},
		{"grep/count/noliteral", "grep", map[string]any{"pattern": `[A-Z]{4,}_[A-Z]{4,}`, "output_mode": "count"}},
		{"grep/count/ignorecase", "grep", map[string]any{"pattern": "unexpected eof", "-i": true, "output_mode": "count"}},
		{"glob/**/*.go", "glob", map[string]any{"pattern": "**/*.go", "limit": 1000}},
		{"glob/sorted/**/*_test.go", "glob", map[string]any{"pattern": "**/*_test.go", "sort": "path", "limit": 1000}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if res := run(b, ws, c.tool, c.args); res.ExitCode != 0 {
					b.Fatal(res.Output)
				}
			}
		})
	}
}
