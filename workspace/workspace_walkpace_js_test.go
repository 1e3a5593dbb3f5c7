//go:build js && wasm

package workspace_test

import (
	"context"
	"errors"
	"fmt"
	"syscall/js"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/memfs"
)

// TestWalksLetHostEventsIn: a walk whose callback is CPU-bound lets a JS
// timer run while it is still going: Walk ticks a Pacer per entry (the
// clock every 64 entries), WalkRuns every 64 entries (the clock every
// 512). The walk stops at the JS flag; if it ends first, the event never
// got in.
func TestWalksLetHostEventsIn(t *testing.T) {
	ctx := context.Background()
	ws, _ := workspace.New(memfs.New())
	for i := range 4000 {
		if err := ws.PutFile(ctx, fmt.Sprintf("d%02d/f%04d.txt", i%40, i), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	busy := func() { // about 0.1-0.3 ms of work under js/wasm
		x := 0
		for i := 0; i < 100000; i++ {
			x += i ^ x
		}
		_ = x
	}
	flagged := func() bool { return js.Global().Get("walkFlag").Bool() }
	cases := []struct {
		name string
		walk func(stop error) (int, error)
	}{
		{"Walk", func(stop error) (int, error) {
			n := 0
			err := ws.Walk(ctx, ".", func(string, workspace.Entry) error {
				if flagged() {
					return stop
				}
				n++
				busy()
				return nil
			})
			return n, err
		}},
		{"WalkRuns", func(stop error) (int, error) {
			n := 0
			err := ws.WalkRuns(ctx, ".", func(_ []string, es []workspace.Entry) error {
				for range es {
					if flagged() {
						return stop
					}
					n++
					busy()
				}
				return nil
			})
			return n, err
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			js.Global().Set("walkFlag", false)
			js.Global().Call("eval", "setTimeout(() => { globalThis.walkFlag = true }, 5)")
			stop := fmt.Errorf("stopped by the JS flag")
			start := time.Now()
			n, err := c.walk(stop)
			if !errors.Is(err, stop) {
				t.Fatalf("the JS timer never ran during a %v walk of %d CPU-bound entries (error %v)", time.Since(start), n, err)
			}
			t.Logf("the JS timer ran after %d entries, %v", n, time.Since(start))
		})
	}
}
