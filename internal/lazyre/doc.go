// Package lazyre compiles a package-level regular expression on first use
// instead of at package init. Every regexp compiled at init cost each wasm
// start its compile, and in a browser (functions compiled by V8 on first
// call) the compile of regexp's parser and compiler as well: five in tools
// and two in mcp took 60-130 ms of Go's init in Node with V8's lazy
// compilation, whether a session used them or not (RATIONALE.md "Why are
// package-level regexps compiled on first use?").
package lazyre
