//go:build !js

package dirfs_test

import (
	"testing"

	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/dirfs"
	"github.com/a3s-lab/code-wasm/workspace/workspacetest"
)

func open(t *testing.T, root string) workspace.Driver {
	t.Helper()
	d, err := dirfs.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func TestConformance(t *testing.T) {
	workspacetest.RunHarness(t, workspacetest.Harness{
		New: func(t *testing.T) workspace.Driver { return open(t, t.TempDir()) },
		Reopen: func(t *testing.T, d workspace.Driver) workspace.Driver {
			root := d.(*dirfs.FS).Root()
			d.(*dirfs.FS).Close()
			return open(t, root)
		},
	})
}
