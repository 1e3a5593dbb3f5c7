// Package bytescan holds the byte scans that dominate a text search:
// find a byte, find a letter in either case, count a byte.
//
// On native targets each is the standard library's (bytes.IndexByte and
// bytes.Count use SIMD there). Under GOARCH=wasm, Go has no SIMD and the
// standard library's scans are a 4-bytes-at-a-time loop (IndexByte) and a
// byte-at-a-time loop (Count); this package replaces them with hand-written
// WebAssembly that tests 32 bytes per iteration with 64-bit word tricks
// (SWAR), which a wasm engine turns into a tight machine loop. See
// RATIONALE.md, "How does grep scan bytes under js/wasm?".
//
// It is not a general bytes replacement: it has only what the grep tool
// needs, and IndexFold folds ASCII letters only.
package bytescan
