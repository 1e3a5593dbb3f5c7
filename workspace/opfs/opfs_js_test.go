//go:build js && wasm

package opfs

import (
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

func TestOPFSConformance(t *testing.T) {
	needOPFS(t)
	workspacetest.Run(t, func(t *testing.T) workspace.Driver {
		root := freshRoot(t)
		f, err := Open(context.Background(), root, Options{})
		if err != nil {
			t.Fatalf("Open(%q): %v", root, err)
		}
		t.Cleanup(func() {
			want := tree(t, f)
			f.Close()
			g, err := Open(context.Background(), root, Options{})
			if err != nil {
				t.Fatalf("reopen %q: %v", root, err)
			}
			defer g.Close()
			if got := tree(t, g); !mapsEqual(got, want) {
				t.Errorf("replayed tree differs from the live one:\n got %v\nwant %v", got, want)
			}
		})
		return f
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

// BenchmarkOPFSDriver measures the driver alone on real OPFS (run by
// bench/opfs.bench.mjs in a Chromium worker): one flushed record per write.
func BenchmarkOPFSDriver(b *testing.B) {
	fh := js.Global().Get("FileSystemFileHandle")
	if fh.IsUndefined() || fh.Get("prototype").Get("createSyncAccessHandle").Type() != js.TypeFunction {
		b.Skip("no OPFS here")
	}
	ctx := context.Background()
	body := make([]byte, 550)
	for i := range body {
		body[i] = byte('a' + i%26)
	}
	f, err := Open(ctx, fmt.Sprintf("bench-%d", time.Now().UnixNano()), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	b.Run("write", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := f.WriteFile(ctx, fmt.Sprintf("d%d/f%d.txt", i%20, i%2000), body, ""); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, _, err := f.ReadFile(ctx, fmt.Sprintf("d%d/f%d.txt", i%20, i%20)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
