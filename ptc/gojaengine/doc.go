// Package gojaengine is the native Go engine for the program tool: each
// script runs in a fresh goja runtime (pure Go, ECMAScript 5.1+ with
// promises and async functions; no timers, network, file system, modules
// or host objects exist in it at all). Only the ctx methods cross out,
// through ptc.Bridge, as JSON. Timeouts interrupt the VM (vm.Interrupt),
// which stops `for(;;){}`; recursion is bounded by the call-stack limit.
//
// It is not for the js/wasm build (it would add about 3 MB gzip there and
// run ~25x slower than the host's own engine; FIELD-NOTES.md): core selects
// it only under `//go:build !js`. It does not bound memory: a script that
// allocates gigabytes is stopped only by the timeout.
package gojaengine
