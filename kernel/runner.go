package kernel

import "sync/atomic"

// runners hands a tool's run to a goroutine waiting for one; idleRunners
// counts the waiting ones, at most maxIdleRunners.
var (
	runners     = make(chan func())
	idleRunners atomic.Int32
)

const maxIdleRunners = 8

// spawn runs f on a runner that waits for work, or on a new one if none
// waits. A runner keeps its grown stack: a new goroutine per tool call
// grew its stack from 8 KB again in the tool's argument decode
// (encoding/json), and morestack/copystack was ~8% of a warm
// tool('read')'s time under js/wasm in Node (internal/jsbridge.spawn does
// the same for the calls from JS). f must not panic: runTool recovers.
func spawn(f func()) {
	select {
	case runners <- f:
	default:
		go runner(f)
	}
}

func runner(f func()) {
	for {
		f()
		if idleRunners.Add(1) > maxIdleRunners {
			idleRunners.Add(-1)
			return
		}
		f = <-runners
		idleRunners.Add(-1)
	}
}
