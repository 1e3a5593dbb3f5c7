package work

import (
	"context"

	"github.com/a3s-lab/code-wasm/workspace"
)

// Meter paces a loop: each step adds an estimate of its cost (a unit is
// about one step of the regexp or glob matcher); every Step units the
// context is checked and, under js/wasm, the host is let in
// (workspace.Pacer). A step that can cost more than Step on its own must
// check inside itself (Poll; grep's paced line reader). A nil *Meter never
// checks (tests that call a matcher directly).
type Meter struct {
	_     [0]func() // never compared: no equality function in the wasm
	ctx   context.Context
	pc    workspace.Pacer
	spent int
}

// Step is the work between context checks: about a millisecond of
// the regexp NFA natively (~20 ns a unit at worst), 3–13 ms under js/wasm
// (50 ns, and 200 ns before V8 has optimised the code). Each check also
// reads the clock (Pacer.Step), which is how often, under js/wasm, other
// goroutines and the host get their turns. (With a step of 2^18 and the
// clock read every eighth check, a grep under Node gave the host no turn
// for a second; with a step of 2^18 a cancelled grep under js/wasm ran on
// up to 600 ms, against up to 130 ms with 2^16, whose clock reads cost
// about 2 % of a regexp-heavy grep.)
const Step = 1 << 16

// New returns a Meter checking ctx.
func New(ctx context.Context) *Meter { return &Meter{ctx: ctx} }

// Add records n units of work done and reports the context's error, if
// the context is done, once Step units have passed since the last check.
func (w *Meter) Add(n int) error {
	if w == nil {
		return nil
	}
	if w.spent += n; w.spent < Step {
		return nil
	}
	w.spent = 0
	return w.pc.Step(w.ctx)
}

// Poll checks the context now, reading the clock (Pacer.Step): what a
// step that costs more than Step on its own calls as it goes.
func (w *Meter) Poll() error { return w.pc.Step(w.ctx) }

// Check is Pacer.Check on the Meter's context: the check between chunks
// of a loop (files, names), which lets the host in only when it is due.
func (w *Meter) Check() error { return w.pc.Check(w.ctx) }
