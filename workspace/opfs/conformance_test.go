package opfs

import (
	"context"
	"testing"

	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/workspacetest"
)

// TestConformance runs the shared driver suite natively over an in-memory
// Dir (opfs_js_test.go runs it over real OPFS in Chromium), reopening each
// Dir to check that what was written survives. A small CompactBytes makes
// the suite's writes compact the log too.
func TestConformance(t *testing.T) {
	dirs := map[workspace.Driver]*MemDir{}
	open := func(t *testing.T, d *MemDir, o Options) workspace.Driver {
		f, err := OpenDir(context.Background(), d, o)
		if err != nil {
			t.Fatalf("OpenDir: %v", err)
		}
		t.Cleanup(func() { f.Close() })
		dirs[f] = d
		return f
	}
	workspacetest.RunHarness(t, workspacetest.Harness{
		New: func(t *testing.T) workspace.Driver { return open(t, NewMemDir(), Options{CompactBytes: 64 << 10}) },
		Reopen: func(t *testing.T, d workspace.Driver) workspace.Driver {
			if err := d.(*FS).Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			return open(t, dirs[d], Options{CompactBytes: 64 << 10})
		},
	})
}
