// Package ptc is programmatic tool calling: the `program` tool
// (REFERENCE.md §2.13). It validates a script call (type, language, source
// or a workspace .js/.mjs path, inputs, allowed_tools, limits), builds the
// script's ctx API, counts and bounds the ctx calls, turns each one into a
// nested invocation through the kernel's Invoker (same policy, hooks,
// budget and events, with the program's invocation as parent), and shapes
// the readable output and metadata.
//
// It is not a JavaScript engine. Scripts run in an Engine, always QuickJS
// compiled to WebAssembly: natively on wazero (ptc/qjsengine), in Node
// and browsers in a worker the host runs (npm/src/ptc-*.mjs, reached
// through HostEngine). Every engine passes the one conformance suite and
// red-team pack in ptc/enginetest. This package imports no engine, so the
// shipped wasm carries none it does not use.
package ptc
