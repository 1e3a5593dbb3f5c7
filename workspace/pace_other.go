//go:build !(js && wasm)

package workspace

import "time"

// YieldEvery and HostYieldEvery are how much work a Pacer lets pass
// between yields under js/wasm. Natively goroutines are preempted, so a
// Pacer only checks its context.
const (
	YieldEvery     = 20 * time.Millisecond
	HostYieldEvery = 100 * time.Millisecond
)

func (p *Pacer) yield() {}

// HostTurn records that the JS event loop just had a turn; natively there
// is none to record.
func HostTurn() {}
