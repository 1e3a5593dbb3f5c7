//go:build js && wasm

package workspace_test

import (
	"context"
	"syscall/js"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/workspace"
)

// TestPacerLetsHostEventsIn: a CPU-bound loop that ticks a Pacer lets a
// JS timer (as an AbortSignal listener would be) run while it is still
// going; the loop never blocks otherwise. It stops on the JS flag, or after
// 3 s as a safety net (then the test fails: the event never got in).
func TestPacerLetsHostEventsIn(t *testing.T) {
	js.Global().Set("pacerFlag", false)
	js.Global().Call("eval", "setTimeout(() => { globalThis.pacerFlag = true }, 5)")
	var pc workspace.Pacer
	start := time.Now()
	ticks := 0
	for !js.Global().Get("pacerFlag").Bool() {
		if time.Since(start) > 3*time.Second {
			t.Fatalf("the JS timer never ran during %d ticks of CPU-bound work", ticks)
		}
		x := 0
		for i := 0; i < 10000; i++ { // a unit of busy work
			x += i
		}
		_ = x
		if err := pc.Tick(context.Background()); err != nil {
			t.Fatal(err)
		}
		ticks++
	}
	t.Logf("the JS timer ran after %d ticks", ticks)
}
