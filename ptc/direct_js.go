//go:build js && wasm && !codewasm_core

package ptc

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"syscall/js"
)

// A direct call's state, under newDirect's mu: running, answered before
// direct returned (direct returns the answer), or left to settle.
const (
	callRunning = iota
	callDone
	callDetached
)

type directCall struct {
	id          int
	method, raw string
	ok          bool
	text        string
	state       int
}

// newDirect makes one run's direct door (PROTOCOL.md §4, ptc.start's
// ctx.extra), a JS function a host running QuickJS on Go's own thread
// (workerd) calls instead of queueing the call for ptc.poll:
//
//   - direct(settle) once: settle(id, ok, text) answers the calls that
//     wait on the event loop;
//   - direct(id, method + " " + argsJSON) for each call: it returns the
//     answer, the result's JSON text or "!" and the message the call
//     rejects with, or undefined when the call waits on the event loop
//     (R2, fetch, a hook) and settle answers it later. A refusal (the run
//     is over, maxInFlight calls are outstanding) is answered at once.
//
// The call runs on a worker goroutine (one kept per call in flight, so
// its stack has grown already: a fresh goroutine per call spent a tenth
// of a crossing growing its stack), and direct yields once before it
// returns: a call that never waits on the event loop (a read or glob of
// the in-memory workspace, any refusal) has finished by then, and its
// answer goes back as direct's result, one crossing in all. A call that
// is still waiting is detached: its worker calls settle when it ends.
// One string argument and no settle per call keep the entry cheap: each
// JS value handed to Go costs a finalizer and each string two copies.
//
// closeDoor refuses every later call and lets idle workers end; wg counts
// the calls running, for Run to wait on; release frees the function once
// the host can no longer call it (after ptc.stop).
func newDirect(ctx context.Context, b Bridge, maxInFlight, maxArgs int, wg *sync.WaitGroup) (door any, closeDoor, release func()) {
	var (
		mu       sync.Mutex
		closed   bool
		inFlight int
		settle   js.Value // the host's settle(id, ok, text)
	)
	work := make(chan *directCall)
	quit := make(chan struct{})
	run := func(c *directCall) {
		ok, text := answer(ctx, b, c.method, c.raw, maxArgs)
		mu.Lock()
		inFlight--
		late := c.state == callDetached
		c.ok, c.text, c.state = ok, text, callDone
		mu.Unlock()
		if late {
			settle.Invoke(c.id, ok, text)
		}
		wg.Done()
	}
	worker := func(c *directCall) {
		for {
			run(c)
			select {
			case c = <-work:
			case <-quit:
				return
			}
		}
	}
	fn := js.FuncOf(func(this js.Value, args []js.Value) any {
		if len(args) == 1 && args[0].Type() == js.TypeFunction {
			mu.Lock()
			settle = args[0]
			mu.Unlock()
			return nil
		}
		if len(args) < 2 || args[0].Type() != js.TypeNumber || args[1].Type() != js.TypeString {
			return "!direct(id, call): expected a number and a string"
		}
		id, call := args[0].Int(), args[1].String()
		method, raw, _ := strings.Cut(call, " ")
		mu.Lock()
		msg := ""
		switch {
		case closed:
			msg = "!the program has finished; ctx calls are closed"
		case settle.Type() != js.TypeFunction:
			msg = "!direct(settle) was not called"
		case inFlight >= maxInFlight:
			msg = fmt.Sprintf("!ctx.%s refused: maxInFlight=%d calls are already outstanding", method, maxInFlight)
		default:
			inFlight++
			wg.Add(1)
		}
		mu.Unlock()
		if msg != "" {
			return msg
		}
		c := &directCall{id: id, method: method, raw: raw}
		select {
		case work <- c: // an idle worker takes it
		default:
			go worker(c)
		}
		runtime.Gosched() // the worker runs until the call ends or waits
		mu.Lock()
		defer mu.Unlock()
		if c.state != callDone {
			c.state = callDetached
			return nil
		}
		if !c.ok {
			return "!" + c.text
		}
		return c.text
	})
	closeDoor = func() {
		mu.Lock()
		if !closed {
			closed = true
			close(quit)
		}
		mu.Unlock()
	}
	return fn, closeDoor, func() {
		closeDoor()
		fn.Release()
	}
}
