package tools

import (
	"context"

	"github.com/a3s-lab/code-wasm/workspace"
)

// work paces a loop whose steps differ in cost: a regexp run over a line
// of any length, a glob pattern's alternatives against a name. Each step
// adds an estimate of its cost (a unit is about one step of the regexp or
// glob matcher); every workStep units the context is checked and, under
// js/wasm, the host is let in (workspace.Pacer). So about workStep units
// pass between checks, whatever one step costs; a step that can cost more
// than that on its own must check inside itself (grep's pacedLine). A nil
// *work never checks (tests that call a matcher directly).
type work struct {
	ctx   context.Context
	pc    workspace.Pacer
	spent int
}

// workStep is the work between context checks: about a millisecond of
// the regexp NFA natively (~20 ns a unit at worst), 3–13 ms under js/wasm
// (50 ns, and 200 ns before V8 has optimised the code). Each check also
// reads the clock (Pacer.Step), which is how often, under js/wasm, other
// goroutines and the host get their turns. (With a step of 2^18 and the
// clock read every eighth check, a grep under Node gave the host no turn
// for a second; with a step of 2^18 a cancelled grep under js/wasm ran on
// up to 600 ms, against up to 130 ms with 2^16, whose clock reads cost
// about 2 % of a regexp-heavy grep.)
const workStep = 1 << 16

func newWork(ctx context.Context) *work { return &work{ctx: ctx} }

// add records n units of work done and reports the context's error, if
// the context is done, once workStep units have passed since the last
// check.
func (w *work) add(n int) error {
	if w == nil {
		return nil
	}
	if w.spent += n; w.spent < workStep {
		return nil
	}
	w.spent = 0
	return w.pc.Step(w.ctx)
}
