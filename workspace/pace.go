package workspace

import (
	"context"
	"time"
)

// Pacer keeps a long CPU-bound loop (a walk, grep's files, a batch of
// reads) cancellable. Under js/wasm a goroutine that never blocks never
// gives the JS event loop a turn, so an AbortSignal, a Go timer (the
// kernel's tool timeout) or a context cancellation cannot take effect until
// the loop ends. Calling Tick once per unit of work fixes that: every
// pacerStride ticks it checks the context, and under js/wasm, every
// YieldEvery of work it lets other goroutines run (Go timers fire: the
// kernel's tool timeout, a program's deadline) and every HostYieldEvery it
// returns to the JS event loop (AbortSignal and other host events are
// delivered). Natively it only checks ctx: goroutines are preempted there. The zero Pacer is ready to use; a Pacer
// belongs to one loop (one goroutine).
type Pacer struct {
	n    uint32
	last time.Time // js/wasm: when it last gave way (zero: not yet)
}

// pacerStride is how many ticks pass between clock and context checks: a
// tick is meant to be cheap (a counter increment) for loops over many
// small items.
const pacerStride = 64

// Tick records one unit of work. It returns ctx.Err() once the context is
// done (checked every pacerStride ticks), nil otherwise.
func (p *Pacer) Tick(ctx context.Context) error {
	p.n++
	if p.n%pacerStride != 0 {
		return nil
	}
	p.yield()
	return ctx.Err()
}

// Check is Tick for a loop whose every unit is larger (a whole file): it
// checks the context on every call and the clock on every checkStride-th
// (under js/wasm a clock reading costs about 0.25 µs: once per file was 4%
// of a grep over GOROOT/src).
func (p *Pacer) Check(ctx context.Context) error {
	p.n++
	if p.n%checkStride == 0 {
		p.yield()
	}
	return ctx.Err()
}

const checkStride = 8

// Step is Check for a loop that meters its own work and calls it once per
// large amount of it (around a millisecond's worth, such as a stretch of a
// regexp run over a long line): it checks the context and, under js/wasm,
// reads the clock on every call, so how often the loop gives way does not
// depend on how long its units take.
func (p *Pacer) Step(ctx context.Context) error {
	p.yield()
	return ctx.Err()
}
