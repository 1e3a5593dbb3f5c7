// Package work meters a loop whose steps differ in cost (a regexp run over
// a line of any length, a glob pattern's alternatives against a name), so
// that the context is checked, and under js/wasm the host let in, about
// every Step units of work, whatever one step costs. grep's line matcher
// and glob's name matcher add to it; the grep and glob tools make one per
// goroutine.
package work
