// Package jsbridge holds the helpers every js/wasm package shares to cross
// the Go/JS boundary: a Promise that runs Go work on a goroutine and turns
// panics into rejections, awaiting a JS Promise from a goroutine, calling a
// JS host function from Go (Caller, with an AbortSignal aborted when the
// context ends), AbortSignal to context.Context, and Go errors to JS Errors
// with a `code` (and a JSON `detail`).
//
// It is not an API of its own and has no exported behaviour outside
// GOOS=js GOARCH=wasm. Its rule: never block inside a js.FuncOf callback on
// anything that needs the JS event loop (FIELD-NOTES.md) — the instance
// dies for good.
package jsbridge
