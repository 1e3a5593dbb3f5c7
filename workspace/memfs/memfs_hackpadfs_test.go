package memfs_test

import (
	"io/fs"
	"path"
	"testing"

	"github.com/hack-pad/hackpadfs"
	"github.com/hack-pad/hackpadfs/mem"

	"github.com/a3s-lab/code-wasm/workspace"
)

// The hackpadfs/mem comparison behind RATIONALE.md's "Why a purpose-built
// memfs instead of hackpadfs/mem?". hackpadfs is imported only here, in a
// test file, so it never reaches the shipped wasm. It is driven through its
// own API (no Workspace adapter), which flatters it slightly; the
// "+hash" variant adds the version hash a workspace driver must compute.

func loadHackpadfs(b *testing.B, c *corpus, hash bool) *mem.FS {
	b.Helper()
	fsys, err := mem.NewFS()
	if err != nil {
		b.Fatal(err)
	}
	made := map[string]bool{".": true}
	for _, f := range c.files {
		if dir := path.Dir(f.path); !made[dir] {
			if err := fsys.MkdirAll(dir, 0o755); err != nil {
				b.Fatal(err)
			}
			made[dir] = true
		}
		if err := hackpadfs.WriteFullFile(fsys, f.path, f.data, 0o644); err != nil {
			b.Fatal(err)
		}
		if hash {
			_ = workspace.VersionOf(f.data)
		}
	}
	return fsys
}

func BenchmarkHackpadfsGoSrc(b *testing.B) {
	for _, hash := range []bool{false, true} {
		name := "hackpadfs/write"
		if hash {
			name += "+hash"
		}
		b.Run(name, func(b *testing.B) {
			c := benchCorpus(b)
			b.SetBytes(c.bytes)
			b.ReportAllocs()
			for b.Loop() {
				loadHackpadfs(b, c, hash)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(c.files)), "ns/file")
		})
	}
	b.Run("hackpadfs/read", func(b *testing.B) {
		c := benchCorpus(b)
		fsys := loadHackpadfs(b, c, false)
		b.SetBytes(c.bytes)
		b.ReportAllocs()
		for b.Loop() {
			var n int64
			for _, f := range c.files {
				d, err := hackpadfs.ReadFile(fsys, f.path)
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
	b.Run("hackpadfs/walk", func(b *testing.B) {
		c := benchCorpus(b)
		fsys := loadHackpadfs(b, c, false)
		b.SetBytes(c.bytes)
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			err := hackpadfs.WalkDir(fsys, ".", func(p string, _ fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if p != "." {
					n++
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			if n != len(c.files)+c.dirs {
				b.Fatalf("walk saw %d entries; want %d", n, len(c.files)+c.dirs)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(c.files)), "ns/file")
	})
}

func BenchmarkHackpadfsMemory(b *testing.B) {
	c := benchCorpus(b)
	for b.Loop() {
		grown, fsys := heapGrowth(func() any { return loadHackpadfs(b, c, false) })
		reportOverhead(b, c, grown, c.bytes)
		_ = fsys.(*mem.FS)
	}
}
