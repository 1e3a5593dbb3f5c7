//go:build js && wasm

package opfs

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"syscall/js"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/internal/jsbridge"
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

// opfsDir returns the handle of a directory path in the origin's OPFS,
// creating it with create.
func opfsDir(t *testing.T, create bool, path ...string) js.Value {
	t.Helper()
	ctx := context.Background()
	d, err := jsbridge.Await(ctx, js.Global().Get("navigator").Get("storage").Call("getDirectory"))
	for _, p := range path {
		if err != nil {
			break
		}
		d, err = jsbridge.Await(ctx, d.Call("getDirectoryHandle", p, map[string]any{"create": create}))
	}
	if err != nil {
		t.Fatalf("OPFS directory %v: %v", path, err)
	}
	return d
}

// names lists a directory's entries as name/kind.
func names(t *testing.T, d js.Value) []string {
	t.Helper()
	es, err := (&jsDir{h: d}).List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		k := "dir"
		if e.File {
			k = "file"
		}
		out = append(out, e.Name+"/"+k)
	}
	return out
}

// A root nested in another's storage, or named like the driver's files,
// is refused before anything is created or locked; the parent, holding a
// session at the time, is untouched and opens again after.
func TestOPFSNestedRootRefused(t *testing.T) {
	needOPFS(t)
	ctx := context.Background()
	parent := freshRoot(t)
	f, err := Open(ctx, parent, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteFile(ctx, "x.txt", []byte("kept"), ""); err != nil {
		t.Fatal(err)
	}
	top := names(t, opfsDir(t, false))
	for _, root := range []string{parent + "/log-99.a3s", parent + "/sub", parent + "/log-1.a3s/deeper", `victim\log-99.a3s`, "log-99.a3s", parent + ".a3s"} {
		if _, err := Open(ctx, root, Options{}); err == nil || !strings.Contains(err.Error(), "workspace.root") {
			t.Errorf("Open(%q): %v; want the root name refused", root, err)
		}
	}
	if got := names(t, opfsDir(t, false, parent)); !slices.Equal(got, []string{"log-1.a3s/file"}) {
		t.Fatalf("the parent's storage holds %v after the refused opens", got)
	}
	if got := names(t, opfsDir(t, false)); !slices.Equal(got, top) {
		t.Fatalf("OPFS top level %v, was %v", got, top)
	}
	f.Close()
	g, err := Open(ctx, parent, Options{})
	if err != nil {
		t.Fatalf("reopen the parent: %v", err)
	}
	defer g.Close()
	if got := read(t, g, "x.txt"); got != "kept" {
		t.Fatalf("x.txt = %q", got)
	}
}

// A root whose storage holds a directory named like a log generation (what
// a nested root of an older version left) refuses to open with an error
// naming the root and the entry and saying how to remove it, and changes
// nothing; after that removal the root opens with its files. Any other
// subdirectory is left alone.
func TestOPFSBlockedRoot(t *testing.T) {
	needOPFS(t)
	ctx := context.Background()
	for _, c := range []struct {
		name, entry string
		nestedLog   bool // the blocking directory holds a log, as a nested root's did
	}{
		{"nested root named like a newer generation", "log-99.a3s", true},
		{"named like the next generation, empty", "log-2.a3s", false},
		{"named like the current generation, spelt log-0001.a3s", "log-0001.a3s", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := freshRoot(t)
			f, err := Open(ctx, root, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteFile(ctx, "x.txt", []byte("kept"), ""); err != nil {
				t.Fatal(err)
			}
			f.Close()
			blocker := opfsDir(t, true, root, c.entry)
			if c.nestedLog {
				if _, err := jsbridge.Await(ctx, blocker.Call("getFileHandle", "log-1.a3s", map[string]any{"create": true})); err != nil {
					t.Fatal(err)
				}
			}
			before := names(t, opfsDir(t, false, root))
			_, err = Open(ctx, root, Options{})
			var be *BlockedError
			if !errors.As(err, &be) || be.Root != root || be.Entry != c.entry {
				t.Fatalf("Open: %v; want a BlockedError naming %q in %q", err, c.entry, root)
			}
			for _, want := range []string{fmt.Sprintf("root %q cannot be opened", root), fmt.Sprintf("directory %q", c.entry), "nothing was changed", "removeEntry"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the error does not say %q: %v", want, err)
				}
			}
			if after := names(t, opfsDir(t, false, root)); !slices.Equal(after, before) {
				t.Fatalf("a refused Open changed the root: %v, was %v", after, before)
			}
			// The lock was released: the recovery the error names, then Open.
			if _, err := jsbridge.Await(ctx, opfsDir(t, false, root).Call("removeEntry", c.entry, map[string]any{"recursive": true})); err != nil {
				t.Fatal(err)
			}
			g, err := Open(ctx, root, Options{})
			if err != nil {
				t.Fatalf("Open after removing %s: %v", c.entry, err)
			}
			defer g.Close()
			if got := read(t, g, "x.txt"); got != "kept" {
				t.Fatalf("x.txt = %q", got)
			}
		})
	}
	t.Run("any other subdirectory is left alone", func(t *testing.T) {
		root := freshRoot(t)
		opfsDir(t, true, root, "sub")
		opfsDir(t, true, root, "log-x.a3s")
		f, err := Open(ctx, root, Options{})
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		if got := names(t, opfsDir(t, false, root)); !slices.Contains(got, "sub/dir") || !slices.Contains(got, "log-x.a3s/dir") {
			t.Fatalf("root holds %v", got)
		}
	})
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
