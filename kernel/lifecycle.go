package kernel

import (
	"sync"
	"sync/atomic"
)

// State is an invocation's lifecycle state (REFERENCE.md §3.1):
// Created → Admitted → GatePending → Running → one terminal state.
type State int

const (
	StateCreated State = iota
	StateAdmitted
	StateGatePending
	StateRunning
	StateCompleted
	StateRejected
	StateCancelled
	StateFailed
)

var stateNames = [...]string{"created", "admitted", "gate_pending", "running", "completed", "rejected", "cancelled", "failed"}

func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "unknown"
}

// Terminal reports whether s ends an invocation.
func (s State) Terminal() bool { return s >= StateCompleted }

// lifecycle enforces exactly one terminal transition; a second one, or any
// transition after it, is refused and counted in the kernel's violations.
type lifecycle struct {
	mu         sync.Mutex
	state      State
	violations *atomic.Int64
}

func (l *lifecycle) to(s State) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.state.Terminal() || s < l.state {
		l.violations.Add(1)
		return false
	}
	l.state = s
	return true
}

func (l *lifecycle) current() State {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.state
}
