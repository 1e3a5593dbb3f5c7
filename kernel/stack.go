package kernel

// growStack grows a new tool goroutine's stack at once, while it holds
// no frames: its frame needs 16 KB, so the runtime doubles the 8 KB stack
// to 32 KB in one copy of two frames. Grown on demand, the stack was
// copied again at each doubling with the argument decode's frames on it
// (morestack/copystack: 30 of a warm tool('read')'s 371 µs in a V8 profile
// under js/wasm). Reusing grown goroutines instead broke deep recursion
// under js/wasm (RATIONALE.md "Why are the kernel's tool goroutines not
// reused?"); a stack grown to a fixed 32 KB here behaves as a fresh one
// beyond that size.
//
//go:noinline
func growStack() {
	var frame [16 << 10]byte
	keepFrame(&frame)
}

// keepFrame keeps growStack's frame on its stack (the pointer does not
// escape) and from being optimised away.
//
//go:noinline
func keepFrame(*[16 << 10]byte) {}

// GrowStack is growStack for a goroutine a tool starts of its own (the
// program tool's engine run): call it first thing in the new goroutine.
func GrowStack() { growStack() }
