//go:build js && wasm

// Command wasm is the GOOS=js GOARCH=wasm entry point shipped in the npm
// package: it exports the session API (createSession, call, callSync,
// nextEvents) to the JS loader and keeps the Go runtime alive. The npm
// loader (npm/src) sets globalThis.__a3sCodeWasmReady before go.run; main
// hands it the API object described in npm/src/PROTOCOL.md §1.
//
// It holds no logic of its own: dispatch lives in internal/hostapi, which
// is tested natively.
package main
