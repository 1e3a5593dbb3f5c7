//go:build js && wasm && !codewasm_core

package ptc

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"syscall/js"
	"unsafe"
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
// The npm loader makes the function (npm/src/door.mjs): it writes the
// call into Go's memory and calls codeWasmDoor, a function Go exports, so
// a call enters Go without a js.FuncOf event (no JS values handed over,
// no event object read, no finalizers: the Go side of a crossing went
// from ~50 to ~20 µs in a V8 profile). Without the loader there is no
// door. The door's JS side keeps the settle function and refuses a call
// before it is given.
//
// The call runs on a worker goroutine (one kept per call in flight, so
// its stack has grown already: a fresh goroutine per call spent a tenth
// of a crossing growing its stack), and the door yields once before it
// returns: a call that never waits on the event loop (a read or glob of
// the in-memory workspace, any refusal) has usually finished by then, and
// its answer goes back as direct's result, one crossing in all. A call
// that is still running is detached: its worker calls settle when it
// ends, and a microtask enters Go to run it (codeWasmDoor).
//
// closeDoor refuses every later call and lets idle workers end; wg counts
// the calls running, for Run to wait on; release forgets the run's door
// once the host can no longer call it (after ptc.stop).
func newDirect(ctx context.Context, b Bridge, maxInFlight, maxArgs int, wg *sync.WaitGroup) (door any, closeDoor, release func()) {
	if doorHelper.Type() != js.TypeObject {
		return nil, func() {}, func() {} // no loader: ctx calls go through ptc.poll
	}
	doors.mu.Lock()
	doors.next++
	id := doors.next
	doors.mu.Unlock()
	// settle answers a detached call through the door's JS side.
	settle := func(c int, ok bool, text string) { doorHelper.Call("settle", id, c, ok, text) }
	var (
		mu       sync.Mutex
		closed   bool
		inFlight int
	)
	// work hands a call to an idle worker; closeDoor closes it (under mu,
	// where enter checks closed before it sends), which ends them.
	work := make(chan *directCall)
	run := func(c *directCall) {
		ok, text := answer(ctx, b, c.method, c.raw, maxArgs)
		mu.Lock()
		inFlight--
		late := c.state == callDetached
		c.ok, c.text, c.state = ok, text, callDone
		mu.Unlock()
		if late {
			settle(c.id, ok, text)
		}
		wg.Done()
	}
	worker := func(c *directCall) {
		for ok := true; ok; c, ok = <-work {
			run(c)
		}
	}
	// enter takes one call: its answer, or detached when it waits on the
	// event loop (settle answers it).
	enter := func(id int, call string) (text string, detached bool) {
		method, raw, _ := strings.Cut(call, " ")
		c := &directCall{id: id, method: method, raw: raw}
		mu.Lock()
		msg, handed := "", false
		switch {
		case closed:
			msg = "!the program has finished; ctx calls are closed"
		case inFlight >= maxInFlight:
			msg = fmt.Sprintf("!ctx.%s refused: maxInFlight=%d calls are already outstanding", method, maxInFlight)
		default:
			inFlight++
			wg.Add(1)
			select {
			case work <- c: // an idle worker takes it (never blocks)
				handed = true
			default:
			}
		}
		mu.Unlock()
		if msg != "" {
			return msg, false
		}
		if !handed {
			go worker(c)
		}
		runtime.Gosched() // the worker runs until the call ends or waits
		mu.Lock()
		defer mu.Unlock()
		if c.state != callDone {
			c.state = callDetached
			return "", true
		}
		if !c.ok {
			return "!" + c.text, false
		}
		return c.text, false
	}
	closeDoor = func() {
		mu.Lock()
		if !closed {
			closed = true
			close(work)
		}
		mu.Unlock()
	}
	// codeWasmDoor finds this run's calls by its id.
	doors.mu.Lock()
	doors.m[id] = enter
	doors.mu.Unlock()
	return doorHelper.Call("make", id), closeDoor, func() {
		closeDoor()
		doors.mu.Lock()
		delete(doors.m, id)
		doors.mu.Unlock()
		doorHelper.Call("drop", id)
	}
}

// doorHelper is the npm loader's makeDoors (npm/src/door.mjs), read at
// start: with it a run's door is a JS function over the exports below;
// without it (go test's wasm_exec) there is no door and every ctx call
// goes through ptc.poll.
var doorHelper = func() js.Value {
	h := js.Global().Get("__a3sCodeWasmDoor")
	if h.Type() != js.TypeObject || h.Get("make").Type() != js.TypeFunction || h.Get("settle").Type() != js.TypeFunction || h.Get("drop").Type() != js.TypeFunction {
		return js.Undefined()
	}
	return h
}()

// doors are the runs whose doors the loader made, by id.
var doors = struct {
	mu   sync.Mutex
	next int32
	m    map[int32]func(id int, call string) (string, bool)
}{m: map[int32]func(int, string) (string, bool){}}

// wakeFn is an event handler that does nothing: a call of it is an entry
// into Go, where every runnable goroutine runs before Go pauses again.
var (
	wakeOnce       sync.Once
	wakeFn         js.Func
	queueMicrotask js.Value
)

// doorIn and doorOut are the exports' buffers: the call's bytes JS writes
// before codeWasmDoor, the answer it reads after. JS runs one call at a
// time on this thread, and codeWasmDoor copies its input before anything
// else runs, so one of each serves every run.
var doorIn, doorOut []byte

// doorKeep is the largest buffer kept from one call to the next.
const doorKeep = 64 << 10

// codeWasmDoorIn answers where JS writes a call of up to n bytes.
//
//go:wasmexport codeWasmDoorIn
func codeWasmDoorIn(n int32) unsafe.Pointer {
	if n < 0 {
		n = 0
	}
	if cap(doorIn) < int(n)+1 {
		doorIn = make([]byte, int(n)+1)
	}
	return unsafe.Pointer(unsafe.SliceData(doorIn))
}

// codeWasmDoor runs the call of n bytes in doorIn for run's door: the
// length of its answer in doorOut, or -1 when it waits on the event loop.
//
//go:wasmexport codeWasmDoor
func codeWasmDoor(run, id, n int32) int32 {
	// JS read the last answer before this call: a buffer a big call or
	// answer grew (up to a few MiB) is not kept for the next.
	if cap(doorOut) > doorKeep {
		doorOut = nil
	}
	text, detached := "!the program has finished; ctx calls are closed", false
	if n < 0 || int(n) > len(doorIn) {
		text = "!direct: the call's length is out of range"
	} else {
		call := string(doorIn[:n])
		if cap(doorIn) > doorKeep {
			doorIn = nil
		}
		doors.mu.Lock()
		enter := doors.m[run]
		doors.mu.Unlock()
		if enter != nil {
			text, detached = enter(int(id), call)
		}
	}
	if detached {
		// The call's goroutine (or one it waits on) may be runnable, and an
		// export returns to JS without running it (a js.FuncOf's event runs
		// every runnable goroutine before Go pauses): without an entry into
		// Go nothing would run it, and the script would wait for a settle
		// that never comes. A microtask enters Go once the script has
		// returned from its ctx call.
		wakeOnce.Do(func() {
			wakeFn = js.FuncOf(func(js.Value, []js.Value) any { return nil })
			queueMicrotask = js.Global().Get("queueMicrotask")
		})
		queueMicrotask.Invoke(wakeFn)
		return -1
	}
	doorOut = append(doorOut[:0], text...)
	return int32(len(doorOut))
}

// codeWasmDoorOut answers where codeWasmDoor's answer is.
//
//go:wasmexport codeWasmDoorOut
func codeWasmDoorOut() unsafe.Pointer {
	if cap(doorOut) == 0 {
		doorOut = make([]byte, 0, 256)
	}
	return unsafe.Pointer(unsafe.SliceData(doorOut[:1]))
}
