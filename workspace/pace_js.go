//go:build js && wasm

package workspace

import "time"

// YieldEvery is how much work a Pacer lets pass between yields to the
// host event loop (RATIONALE.md: "How does a long grep stay cancellable
// under js/wasm?").
const YieldEvery = 20 * time.Millisecond

// yield sleeps for a moment once YieldEvery has passed since the last
// yield. Under js/wasm a positive sleep parks the goroutine; with nothing
// else runnable the Go scheduler returns to the JS event loop, which runs
// due timers and events (AbortSignal listeners, the kernel's timeout)
// before the sleep's own timer resumes the loop.
func (p *Pacer) yield() {
	if p.last.IsZero() {
		p.last = time.Now()
		return
	}
	if time.Since(p.last) < YieldEvery {
		return
	}
	time.Sleep(time.Microsecond)
	p.last = time.Now()
}
