//go:build js && wasm

package workspace

import (
	"runtime"
	"sync/atomic"
	"time"
)

// YieldEvery is how much work a Pacer lets pass before other goroutines
// get a turn (Go timers, such as the kernel's tool timeout, fire then), and
// HostYieldEvery before the JS event loop gets one (RATIONALE.md: "How does
// a long grep stay cancellable under js/wasm?").
const (
	YieldEvery     = 20 * time.Millisecond
	HostYieldEvery = 100 * time.Millisecond
)

// hostPause is the sleep that returns to the JS event loop. A shorter one
// can be due before the scheduler goes idle, and then it never leaves Go
// (measured: 1 ns and 1 µs sleeps never let a due setTimeout run; 200 µs
// did). The resume is a setTimeout anyway, clamped to >= 1 ms by Node and
// to >= 4 ms by browsers once nested.
const hostPause = time.Millisecond

// hostTurn is when the JS event loop last had a turn: a call that came
// in from JS (HostTurn) or a Pacer's sleep. A loop that starts late in a
// call (after its arguments were checked, a schema compiled, the files
// listed) counts from there, so the host is let in HostYieldEvery after it
// last ran, not HostYieldEvery after each loop began. It is ns since
// epoch on the monotonic clock: time.Since reads only that clock (one
// call into JS) where time.Now reads the wall clock too (two), and a
// browser tool call records a turn twice.
var (
	hostTurn atomic.Int64
	epoch    = time.Now()
)

// HostTurn records that the JS event loop just had a turn: the host API
// calls it when a call arrives from JS.
func HostTurn() { hostTurn.Store(int64(time.Since(epoch))) }

// yield gives way when YieldEvery has passed since it last did:
// runtime.Gosched (cheap; due Go timers run) or, when HostYieldEvery has
// passed since the host's last turn, a sleep that parks the goroutine so
// the Go scheduler, idle, returns to the JS event loop, which runs due
// timers and events before the sleep's own timer resumes the loop.
func (p *Pacer) yield() {
	now := time.Now()
	if p.last.IsZero() {
		p.last = now
	}
	if int64(now.Sub(epoch))-hostTurn.Load() >= int64(HostYieldEvery) {
		time.Sleep(hostPause)
		p.last = time.Now()
		hostTurn.Store(int64(p.last.Sub(epoch)))
		return
	}
	if now.Sub(p.last) < YieldEvery {
		return
	}
	runtime.Gosched()
	p.last = time.Now()
}
