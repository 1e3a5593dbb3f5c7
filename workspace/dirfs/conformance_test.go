package dirfs_test

import (
	"testing"

	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/dirfs"
	"github.com/a3s-lab/code-wasm/workspace/workspacetest"
)

func TestConformance(t *testing.T) {
	workspacetest.RunHarness(t, workspacetest.Harness{
		New: func(t *testing.T) workspace.Driver { return openDir(t, t.TempDir()) },
		Reopen: func(t *testing.T, d workspace.Driver) workspace.Driver {
			root := d.(*dirfs.FS).Root()
			d.(*dirfs.FS).Close()
			return openDir(t, root)
		},
		Steps: extraSteps,
	})
}
