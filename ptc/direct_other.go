//go:build !(js && wasm) || codewasm_core

package ptc

import (
	"context"
	"sync"
)

// newDirect: outside js/wasm no JS host shares Go's thread, so there is
// no direct door (direct_js.go); every ctx call goes through ptc.poll. A
// codewasm_core build (the file tools only) leaves the door out too: it
// serves program on workerd (issue 17).
func newDirect(context.Context, Bridge, int, int, *sync.WaitGroup) (door any, closeDoor, release func()) {
	return nil, func() {}, func() {}
}
