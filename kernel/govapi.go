package kernel

import "time"

// RegisterHook adds a hook; a hook with the same ID is replaced.
func (k *Kernel) RegisterHook(h Hook) error { return k.registerHook(h) }

// UnregisterHook removes the hook with id and reports whether it existed.
func (k *Kernel) UnregisterHook(id string) bool { return k.unregisterHook(id) }

// SetBudgetGuard replaces the budget guard (nil removes it); timeout 0
// means 5 s.
func (k *Kernel) SetBudgetGuard(g BudgetGuard, timeout time.Duration) {
	k.setBudgetGuard(g, timeout)
}

// PendingConfirmations lists the calls waiting in the kernel's own
// confirmation manager, oldest first.
func (k *Kernel) PendingConfirmations() []PendingConfirmation { return k.pendingConfirmations() }

// ConfirmToolUse answers a pending confirmation; false if no call with
// that id is waiting.
func (k *Kernel) ConfirmToolUse(toolID string, approved bool, reason string) bool {
	return k.confirmToolUse(toolID, approved, reason)
}

// Artifact returns a stored full output by its a3s://tool-output/ URI.
func (k *Kernel) Artifact(uri string) (Artifact, bool) { return k.artifacts.get(uri) }
