//go:build !js

// Package qjsengine is the native Go engine for the program tool: each
// script runs in a fresh QuickJS runtime (quickjs-ng, fastschema/qjs's
// qjs.wasm) in its own wasm module instance under wazero, so nothing of
// the Go process exists in the script's realm but the three bridge
// functions of the prelude, and the module has no file system, arguments
// or environment at all.
//
// Bounds, each enforced inside the engine: the heap (the module's memory
// limit, Program.MemoryBytes plus a fixed overhead: QuickJS's own limit
// does not count most allocations in this WASI build), the stack
// (ptc.MaxStackBytes, on a stack block of its own, as a catchable
// RangeError), time (an interrupt handler patched into the module stops the
// script within 16 QuickJS steps of the context ending, with an
// uncatchable "interrupted", even at the memory limit), ctx calls
// (maxToolCalls, maxInFlight, maxResultBytes).
//
// Native only: it never enters the js/wasm build. The module is compiled
// once per process, by the first run (about 0.5 s); each run then costs
// about 10 ms.
package qjsengine
