// Package strscan holds the scans over many short strings that dominate a
// glob over a large tree: which paths of a listing end with a suffix.
//
// On native targets it is a loop over strings.HasSuffix. Under
// GOARCH=wasm, where Go compiles each branch of a loop to a jump back
// through the function's dispatch table, it is hand-written WebAssembly
// that tests a suffix of up to 8 bytes with one 8-byte load per string,
// which a wasm engine turns into a tight machine loop (RATIONALE.md,
// "Why is glob's suffix test written in WebAssembly?").
//
// It is not a general strings package: it has only what glob needs.
package strscan
