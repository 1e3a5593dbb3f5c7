package memfs_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/memfs"
)

// The benchmarks load a real source tree into memory: by default the Go
// source tree, $(go env GOROOT)/src (about 11k files, 150 MB), or the
// directory named by CODE_WASM_BENCH_TREE. bench/memfs.bench.mjs runs them
// natively and under GOOS=js GOARCH=wasm in Node.

type corpusFile struct {
	path string // workspace path, slash-separated
	data []byte
}

type corpus struct {
	files []corpusFile
	bytes int64
	dirs  int
}

var loadCorpus = sync.OnceValues(func() (*corpus, error) {
	root := os.Getenv("CODE_WASM_BENCH_TREE")
	if root == "" {
		root = filepath.Join(runtime.GOROOT(), "src")
	}
	c := &corpus{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." {
				c.dirs++
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if r, err := workspace.Resolve(rel); err != nil || r != rel {
			return nil // a name the workspace refuses; none in GOROOT/src today
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		c.files = append(c.files, corpusFile{rel, b})
		c.bytes += int64(len(b))
		return nil
	})
	return c, err
})

func benchCorpus(b *testing.B) *corpus {
	b.Helper()
	c, err := loadCorpus()
	if err != nil {
		b.Skipf("no benchmark tree: %v", err)
	}
	if len(c.files) == 0 {
		b.Skip("benchmark tree is empty")
	}
	return c
}

func loadMemfs(b *testing.B, c *corpus) *workspace.Workspace {
	b.Helper()
	ctx := context.Background()
	ws, _ := workspace.New(memfs.New())
	for _, f := range c.files {
		if _, err := ws.WriteFile(ctx, f.path, f.data); err != nil {
			b.Fatal(err)
		}
	}
	return ws
}

// BenchmarkGoSrc measures whole-tree operations through the Workspace, as
// tools see them: write every file (version hash included), put every file
// (hash deferred to first use), read every file (bytes and version), walk
// every entry.
func BenchmarkGoSrc(b *testing.B) {
	ctx := context.Background()
	b.Run("memfs/write", func(b *testing.B) {
		c := benchCorpus(b)
		b.SetBytes(c.bytes)
		b.ReportAllocs()
		for b.Loop() {
			loadMemfs(b, c)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(c.files)), "ns/file")
	})
	b.Run("memfs/put", func(b *testing.B) {
		c := benchCorpus(b)
		b.SetBytes(c.bytes)
		b.ReportAllocs()
		for b.Loop() {
			ws, _ := workspace.New(memfs.New())
			for _, f := range c.files {
				if err := ws.PutFile(ctx, f.path, f.data); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(c.files)), "ns/file")
	})
	b.Run("memfs/read", func(b *testing.B) {
		c := benchCorpus(b)
		ws := loadMemfs(b, c)
		b.SetBytes(c.bytes)
		b.ReportAllocs()
		for b.Loop() {
			var n int64
			for _, f := range c.files {
				d, _, err := ws.ReadFile(ctx, f.path)
				if err != nil {
					b.Fatal(err)
				}
				n += int64(len(d))
			}
			if n != c.bytes {
				b.Fatalf("read %d bytes; stored %d", n, c.bytes)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(c.files)), "ns/file")
	})
	b.Run("memfs/walk", func(b *testing.B) {
		c := benchCorpus(b)
		ws := loadMemfs(b, c)
		b.SetBytes(c.bytes)
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			if err := ws.Walk(ctx, ".", func(string, workspace.Entry) error { n++; return nil }); err != nil {
				b.Fatal(err)
			}
			if n != len(c.files)+c.dirs {
				b.Fatalf("walk saw %d entries; want %d", n, len(c.files)+c.dirs)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(c.files)), "ns/file")
	})
}

// heapGrowth returns how much live heap build adds while its result is
// still reachable.
func heapGrowth(build func() any) (uint64, any) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v := build()
	runtime.GC()
	runtime.ReadMemStats(&after)
	return after.HeapAlloc - before.HeapAlloc, v
}

// BenchmarkMemory reports the heap a driver needs beyond the payload, per
// byte stored and per file. Each driver is handed its own copy of every
// file (memfs keeps the slice it is given; hackpadfs copies), so the
// growth is payload + overhead for both.
func BenchmarkMemory(b *testing.B) {
	b.Run("memfs-copy", func(b *testing.B) {
		c := benchCorpus(b)
		ctx := context.Background()
		for b.Loop() {
			grown, ws := heapGrowth(func() any {
				ws, _ := workspace.New(memfs.New())
				for _, f := range c.files {
					if _, err := ws.WriteFile(ctx, f.path, bytes.Clone(f.data)); err != nil {
						b.Fatal(err)
					}
				}
				return ws
			})
			reportOverhead(b, c, grown, c.bytes)
			runtime.KeepAlive(ws)
		}
	})
	// memfs keeps the slices it is given, so with the caller's bytes (as
	// the JS bridge hands over freshly converted ones) the growth is its
	// metadata alone: path keys, nodes, version strings, directory maps.
	b.Run("memfs-shared", func(b *testing.B) {
		c := benchCorpus(b)
		ctx := context.Background()
		for b.Loop() {
			grown, ws := heapGrowth(func() any {
				ws, _ := workspace.New(memfs.New())
				for _, f := range c.files {
					if _, err := ws.WriteFile(ctx, f.path, f.data); err != nil {
						b.Fatal(err)
					}
				}
				return ws
			})
			reportOverhead(b, c, grown, 0)
			runtime.KeepAlive(ws)
		}
	})
}

// reportOverhead: payload is the file bytes the driver itself holds.
func reportOverhead(b *testing.B, c *corpus, grown uint64, payload int64) {
	over := float64(grown) - float64(payload)
	b.ReportMetric(over/float64(c.bytes), "overhead-B/B")
	b.ReportMetric(over/float64(len(c.files)), "overhead-B/file")
	b.ReportMetric(float64(grown)/(1<<20), "heap-MiB")
}
