package workspace_test

import (
	"testing"

	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/memfs"
	"github.com/a3s-lab/code-wasm/workspace/workspacetest"
)

// plainDriver hides memfs's optional extras (every interface beside
// Driver), so the suite exercises the Workspace's own fallbacks for them.
type plainDriver struct{ workspace.Driver }

func TestFallbacksConform(t *testing.T) {
	workspacetest.Run(t, func(*testing.T) workspace.Driver { return plainDriver{memfs.New()} })
}

func TestNewNilDriver(t *testing.T) {
	if _, err := workspace.New(nil); err == nil {
		t.Fatal("New(nil) succeeded")
	}
}
