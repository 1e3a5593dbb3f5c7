// Package ptc is programmatic tool calling: the `program` tool
// (REFERENCE.md §2.13). It validates a script call (type, language, source
// or a workspace .js/.mjs path, inputs, allowed_tools, limits), builds the
// script's ctx API, counts and bounds the ctx calls, turns each one into a
// nested invocation through the kernel's Invoker (same policy, hooks,
// budget and events, with the program's invocation as parent), and shapes
// the readable output and metadata.
//
// It is not a JavaScript engine. Scripts run in an Engine: a native Go
// engine (ptc/gojaengine), or the host's own JS engine behind a restricted
// bridge (Node worker thread, browser Web Worker; npm/src/ptc-*.mjs). Every
// engine passes the one conformance suite in ptc/enginetest. This package
// imports no engine, so the shipped wasm carries none it does not use.
package ptc
