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

// BenchmarkPacer: the cost of one Check / Tick in a tight loop, yields
// included (under js/wasm a Gosched every 20 ms and a return to the event
// loop every 100 ms of the loop's time), against a bare ctx.Err().
func BenchmarkPacer(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.Run("ctx.Err", func(b *testing.B) {
		for b.Loop() {
			if ctx.Err() != nil {
				b.Fatal("cancelled")
			}
		}
	})
	b.Run("Check", func(b *testing.B) {
		var pc workspace.Pacer
		for b.Loop() {
			if pc.Check(ctx) != nil {
				b.Fatal("cancelled")
			}
		}
	})
	b.Run("Tick", func(b *testing.B) {
		var pc workspace.Pacer
		for b.Loop() {
			if pc.Tick(ctx) != nil {
				b.Fatal("cancelled")
			}
		}
	})
}
