package opfs

import (
	"context"
	"testing"

	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/workspacetest"
)

// TestConformance runs the shared driver suite natively over an in-memory
// Dir (opfs_js_test.go runs it over real OPFS in Chromium), then reopens
// each root and checks the replayed tree equals the live one.
func TestConformance(t *testing.T) {
	workspacetest.Run(t, func(t *testing.T) workspace.Driver {
		d := NewMemDir()
		f, err := OpenDir(context.Background(), d, Options{CompactBytes: 64 << 10})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			want := state(t, f)
			f.Close()
			g, err := OpenDir(context.Background(), d, Options{})
			if err != nil {
				t.Fatalf("reopen: %v", err)
			}
			defer g.Close()
			if got := state(t, g); !mapsEqual(got, want) {
				t.Errorf("replayed tree differs from the live one:\n got %v\nwant %v", got, want)
			}
		})
		return f
	})
}
