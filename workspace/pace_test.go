package workspace_test

import (
	"context"
	"testing"

	"github.com/a3s-lab/code-wasm/workspace"
)

// TestPacerStopsOnCancel: Tick reports a cancelled context.
func TestPacerStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var pc workspace.Pacer
	for i := 0; i < 1000; i++ {
		if pc.Tick(ctx) != nil {
			return
		}
	}
	t.Fatal("Tick never reported the cancelled context")
}
