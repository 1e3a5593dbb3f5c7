//go:build js && wasm

package opfs

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"syscall/js"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/workspacetest"
)

// The browser tier (web/test/opfs.test.mjs) runs this test binary in a
// Chromium dedicated Worker with -opfs.required, so a missing OPFS fails
// there instead of skipping as it does under Node (make test-wasm).
var required = flag.Bool("opfs.required", false, "fail, not skip, when OPFS sync access handles are missing")

func needOPFS(t *testing.T) {
	t.Helper()
	fh := js.Global().Get("FileSystemFileHandle")
	if fh.IsUndefined() || fh.Get("prototype").Get("createSyncAccessHandle").Type() != js.TypeFunction {
		if *required {
			t.Fatal("OPFS sync access handles are not available (run in a dedicated Worker)")
		}
		t.Skip("no OPFS here (Node): the browser tier runs these tests in Chromium")
	}
}

var roots int

func freshRoot(t *testing.T) string {
	roots++
	return fmt.Sprintf("test-%d-%d", time.Now().UnixNano(), roots)
}

// TestOPFSConformance runs the shared driver suite over real OPFS roots,
// reopening a root to check that what was written survives.
func TestOPFSConformance(t *testing.T) {
	needOPFS(t)
	roots := map[workspace.Driver]string{}
	open := func(t *testing.T, root string) workspace.Driver {
		f, err := Open(context.Background(), root, Options{})
		if err != nil {
			t.Fatalf("Open(%q): %v", root, err)
		}
		t.Cleanup(func() { f.Close() })
		roots[f] = root
		return f
	}
	workspacetest.RunHarness(t, workspacetest.Harness{
		New: func(t *testing.T) workspace.Driver { return open(t, freshRoot(t)) },
		Reopen: func(t *testing.T, d workspace.Driver) workspace.Driver {
			if err := d.(*FS).Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			return open(t, roots[d])
		},
	})
}

func TestOPFSOneSessionPerRoot(t *testing.T) {
	needOPFS(t)
	ctx := context.Background()
	root := freshRoot(t)
	f, err := Open(ctx, root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteFile(ctx, "x.txt", []byte("kept"), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, root, Options{}); !errors.Is(err, ErrBusy) {
		t.Fatalf("second Open of a held root: %v, want ErrBusy", err)
	}
	f.Close()
	g, err := Open(ctx, root, Options{})
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	defer g.Close()
	if got := read(t, g, "x.txt"); got != "kept" {
		t.Fatalf("x.txt = %q after reopen", got)
	}
}

func TestOPFSBadRoots(t *testing.T) {
	for _, root := range []string{"", "a/../b", "a//b", ".", `a\b`} {
		t.Run(fmt.Sprintf("%q", root), func(t *testing.T) {
			if _, err := Open(context.Background(), root, Options{}); err == nil {
				t.Fatalf("Open(%q) succeeded", root)
			}
		})
	}
}

// BenchmarkOPFS2000 measures the driver alone on real OPFS, one op = 2,000
// files of 550 B in 20 directories (bench/opfs.bench.mjs runs it in a
// Chromium worker beside the raw sync-access-handle floor).
func BenchmarkOPFS2000(b *testing.B) {
	fh := js.Global().Get("FileSystemFileHandle")
	if fh.IsUndefined() || fh.Get("prototype").Get("createSyncAccessHandle").Type() != js.TypeFunction {
		b.Skip("no OPFS here")
	}
	const n = 2000
	ctx := context.Background()
	body := make([]byte, 550)
	for i := range body {
		body[i] = byte('a' + i%26)
	}
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("src/d%d/f%d.txt", i%20, i)
	}
	root := fmt.Sprintf("bench-%d", time.Now().UnixNano())
	f, err := Open(ctx, root, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { f.Close() }()
	b.Run("write", func(b *testing.B) {
		for b.Loop() {
			for _, p := range names {
				if _, err := f.WriteFile(ctx, p, body, ""); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("put-bulk", func(b *testing.B) {
		for b.Loop() {
			for _, p := range names {
				if err := f.PutFile(ctx, p, body); err != nil {
					b.Fatal(err)
				}
			}
			f.mu.Lock()
			err := f.sync()
			f.mu.Unlock()
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read-cached", func(b *testing.B) {
		for b.Loop() {
			for _, p := range names {
				if _, _, err := f.ReadFile(ctx, p); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	needle := []byte("needle")
	scan := func(b *testing.B, f *FS) {
		err := f.Walk(ctx, ".", func(p string, e workspace.Entry) error {
			if e.Kind != workspace.KindFile {
				return nil
			}
			data, _, err := f.ReadFile(ctx, p)
			if err == nil && bytes.Contains(data, needle) {
				b.Fatal("found a needle in the hay")
			}
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.Run("scan-all", func(b *testing.B) {
		for b.Loop() {
			scan(b, f)
		}
	})
	b.Run("reopen", func(b *testing.B) {
		for b.Loop() {
			f.Close()
			if f, err = Open(ctx, root, Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("scan-all-uncached", func(b *testing.B) {
		f.Close()
		if f, err = Open(ctx, root, Options{CacheBytes: 1}); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			scan(b, f)
		}
	})
}

// BenchmarkOPFSRename measures renaming a directory on real OPFS: one op
// is one Rename, durable before it returns, moving the directory back and
// forth. Files are 550 B, 100 to a directory. 2000of2000 renames the
// directory holding every file of a 2,000-file root; 2000of20000 and
// 100of20000 rename a directory of 2,000 and of 100 files in a
// 20,000-file root. The tree moves only the renamed subtree, so the size
// of the rest of the root should not matter. bench/opfs.bench.mjs runs it
// in a Chromium worker.
func BenchmarkOPFSRename(b *testing.B) {
	fh := js.Global().Get("FileSystemFileHandle")
	if fh.IsUndefined() || fh.Get("prototype").Get("createSyncAccessHandle").Type() != js.TypeFunction {
		b.Skip("no OPFS here")
	}
	ctx := context.Background()
	body := bytes.Repeat([]byte("x"), 550)
	outer := b // the roots live until the last case
	load := func(b *testing.B, files int) *FS {
		f, err := Open(ctx, fmt.Sprintf("bench-rename-%d", time.Now().UnixNano()), Options{})
		if err != nil {
			b.Fatal(err)
		}
		outer.Cleanup(func() { f.Close() })
		for i := range files {
			if err := f.PutFile(ctx, fmt.Sprintf("p%d/d%d/f%d.txt", i/2000, i/100%20, i), body); err != nil {
				b.Fatal(err)
			}
		}
		return f
	}
	var small, large *FS
	for _, c := range []struct {
		name, dir string
		files     int
	}{{"2000of2000", "p0", 2000}, {"2000of20000", "p0", 20000}, {"100of20000", "p0/d0", 20000}} {
		b.Run(c.name, func(b *testing.B) {
			root := &small
			if c.files > 2000 {
				root = &large
			}
			if *root == nil {
				*root = load(b, c.files)
			}
			f := *root
			from, to := c.dir, c.dir+"-moved"
			for b.Loop() {
				if err := f.Rename(ctx, from, to); err != nil {
					b.Fatal(err)
				}
				from, to = to, from
			}
			if from != c.dir { // leave the tree as it was for the next case
				if err := f.Rename(ctx, from, to); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
