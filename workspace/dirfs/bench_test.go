package dirfs_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/memfs"
)

// BenchmarkGrepTree greps the tree at $DIRFS_BENCH_TREE (bench/dirfs.bench.mjs
// extracts this repository's tracked files there) as a directory workspace
// and as the same files loaded into memory, natively and under js/wasm;
// the bench script times ripgrep over the same tree beside them.
func BenchmarkGrepTree(b *testing.B) {
	tree := os.Getenv("DIRFS_BENCH_TREE")
	if tree == "" {
		b.Skip("DIRFS_BENCH_TREE is not set (bench/dirfs.bench.mjs sets it)")
	}
	d := openDir(b, tree)
	dir, _ := workspace.New(d)
	// The same driver with its extras hidden (DataReader, LineReader,
	// Appender): what they save a search.
	plain, _ := workspace.New(struct{ workspace.Driver }{d})
	mem, _ := workspace.New(memfs.New())
	err := filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(tree, p)
		return mem.PutFile(context.Background(), filepath.ToSlash(rel), data)
	})
	if err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		name string
		args map[string]any
	}{
		{"count/literal", map[string]any{"pattern": "workspace.Entry", "output_mode": "count"}},
		{"content/regex", map[string]any{"pattern": `func \(\w+ \*?\w+\) Close\(`}},
	}
	for _, ws := range []struct {
		name string
		ws   *workspace.Workspace
	}{{"directory", dir}, {"directory-noextras", plain}, {"memory", mem}} {
		s, err := core.New(core.Options{Workspace: ws.ws})
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range cases {
			b.Run(ws.name+"/"+c.name, func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					res, err := s.Tool(context.Background(), "grep", c.args)
					if err != nil || res.ExitCode != 0 {
						b.Fatal(err, res)
					}
				}
			})
		}
		s.Close()
	}
}
