//go:build js && wasm && !codewasm_core

package ptc

import (
	"context"
	"fmt"
	"sync"
	"syscall/js"
)

// newDirect makes one run's direct door (PROTOCOL.md §4, ptc.start's
// ctx.extra): a JS function direct(id, method, argsJSON, settle) that a
// host running QuickJS on Go's own thread (workerd) calls instead of
// queueing the call for ptc.poll. It starts the call on a goroutine and
// returns; settle(id, ok, text) is called with the answer. Go runs every
// runnable goroutine before a call from JS returns, so a call that never
// waits on the event loop (a read or glob of the in-memory workspace,
// any refusal) has settled when direct returns: one crossing instead of
// a poll answer and a ptc.reply. A call that waits on a JS promise (R2,
// fetch, a hook) settles later from its goroutine, as any reply would.
// direct returns a message instead (and starts nothing) when the call is
// refused: the run is over, or maxInFlight calls are outstanding.
//
// closeDoor refuses every later call; wg counts the calls running, for
// Run to wait on; release frees the function once the host can no
// longer call it (after ptc.stop).
func newDirect(ctx context.Context, b Bridge, maxInFlight, maxArgs int, wg *sync.WaitGroup) (door any, closeDoor, release func()) {
	var (
		mu       sync.Mutex
		closed   bool
		inFlight int
	)
	fn := js.FuncOf(func(this js.Value, args []js.Value) any {
		if len(args) < 4 || args[0].Type() != js.TypeNumber || args[1].Type() != js.TypeString ||
			args[2].Type() != js.TypeString || args[3].Type() != js.TypeFunction {
			return "direct(id, method, argsJSON, settle): expected a number, two strings and a function"
		}
		id, method, raw, settle := args[0].Int(), args[1].String(), args[2].String(), args[3]
		mu.Lock()
		msg := ""
		switch {
		case closed:
			msg = "the program has finished; ctx calls are closed"
		case inFlight >= maxInFlight:
			msg = fmt.Sprintf("ctx.%s refused: maxInFlight=%d calls are already outstanding", method, maxInFlight)
		default:
			inFlight++
			wg.Add(1)
		}
		mu.Unlock()
		if msg != "" {
			return msg
		}
		go func() {
			defer wg.Done()
			ok, text := answer(ctx, b, method, raw, maxArgs)
			mu.Lock()
			inFlight--
			mu.Unlock()
			settle.Invoke(id, ok, text)
		}()
		return nil
	})
	closeDoor = func() {
		mu.Lock()
		closed = true
		mu.Unlock()
	}
	return fn, closeDoor, fn.Release
}
