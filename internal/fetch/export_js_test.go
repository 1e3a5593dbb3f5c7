//go:build js

package fetch

import "syscall/js"

// UseHelper makes h the batch helper (npm/src/fetchbody.mjs's fetchBody,
// or undefined for none) until the returned function restores the one
// found at start.
func UseHelper(h js.Value) (restore func()) {
	was := helper
	helper = h
	return func() { helper = was }
}
