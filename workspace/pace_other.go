//go:build !(js && wasm)

package workspace

import "time"

// YieldEvery is how much work a Pacer lets pass between yields to the
// host event loop under js/wasm. Natively goroutines are preempted, so a
// Pacer only checks its context.
const YieldEvery = 20 * time.Millisecond

func (p *Pacer) yield() {}
