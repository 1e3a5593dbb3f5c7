// Package hostapi is the JSON control plane between a host runtime (the JS
// loader through wasm/main.go) and core sessions: a table of live sessions,
// strict decoding of createSession options (unknown keys and bad values are
// refused naming the key), method dispatch with JSON in and out through
// one table of methods (methods.go; the rows live with their domain in
// sessions.go, tools.go, governance.go and events.go), the
// governance bridge that turns JS callbacks (hooks, budget guard,
// confirmation handler, security provider) into kernel callbacks through
// one host dispatcher, events in their JS form with the convenience fields,
// and the error codes JS sees. npm/src/PROTOCOL.md is its contract.
//
// It imports no syscall/js, so it is tested natively; wasm/main.go only
// moves strings and Promises across. It is not the Go API: Go users hold a
// *core.Session directly.
package hostapi
