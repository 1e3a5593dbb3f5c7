// Package strscan holds the scans over many short strings that dominate a
// glob over a large tree: which paths of a listing end with a suffix, and
// whether a page of paths can be printed as it is.
//
// On native targets they are plain Go loops (strings.HasSuffix). Under
// GOARCH=wasm, where Go compiles each branch of a loop to a jump back
// through the function's dispatch table, it is hand-written WebAssembly
// that tests a suffix of up to 8 bytes with one 8-byte load per string
// and the bytes of a page in a single loop,
// which a wasm engine turns into a tight machine loop (RATIONALE.md,
// "Why is glob's suffix test written in WebAssembly?").
//
// It is not a general strings package: it has only what glob needs.
package strscan
