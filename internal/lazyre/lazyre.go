package lazyre

import (
	"regexp"
	"sync"
)

// New returns a function answering regexp.MustCompile(expr), compiled on
// its first call. One function here, rather than sync.OnceValue at each
// variable, keeps the wasm smaller: each inlined copy of OnceValue's
// closures added ~2 KB of code and ~1.3 KB of data.
//
//go:noinline
func New(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
