//go:build js && wasm

// Command wasm is the GOOS=js GOARCH=wasm entry point shipped in the npm
// package: it exports the session API (createSession, call, callSync,
// nextEvents) to the JS loader and keeps the Go runtime alive.
//
// It holds no logic of its own: dispatch lives in internal/hostapi, which
// is tested natively.
package main
