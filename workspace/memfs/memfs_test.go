package memfs_test

import (
	"testing"

	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/memfs"
	"github.com/a3s-lab/code-wasm/workspace/workspacetest"
)

func TestConformance(t *testing.T) {
	workspacetest.Run(t, func(*testing.T) workspace.Driver { return memfs.New() })
}
