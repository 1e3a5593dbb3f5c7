// Package hostapi is the JSON control plane between a host runtime (the JS
// loader through wasm/main.go) and core sessions: a table of live sessions,
// strict decoding of createSession options, method dispatch with JSON in
// and out, and the error codes JS sees. It imports no syscall/js, so it is
// tested natively; wasm/main.go only moves strings and Promises across.
//
// It is not the Go API: Go users hold a *core.Session directly.
package hostapi
