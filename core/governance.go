package core

import (
	"time"

	"github.com/a3s-lab/code-wasm/kernel"
)

// RegisterHook adds a pre_tool_use or post_tool_use hook (a hook with the
// same id is replaced). The handler may be slow or fail: the kernel bounds
// it with the hook's timeout (default 5 s), and a pre-hook that errors or
// stalls denies the call.
func (s *Session) RegisterHook(h kernel.Hook) error { return s.k.RegisterHook(h) }

// UnregisterHook removes a hook by id.
func (s *Session) UnregisterHook(id string) bool { return s.k.UnregisterHook(id) }

// SetBudgetGuard installs (or, with nil, removes) the guard asked before
// every tool side effect. timeout 0 means 5 s; a guard that errors or
// stalls denies the call ("Budget exhausted").
func (s *Session) SetBudgetGuard(g kernel.BudgetGuard, timeout time.Duration) {
	s.k.SetBudgetGuard(g, timeout)
}

// PendingConfirmations lists the calls waiting for a human decision in the
// session's confirmation manager (Confirmation.Enabled with no custom
// Confirmer).
func (s *Session) PendingConfirmations() []kernel.PendingConfirmation {
	return s.k.PendingConfirmations()
}

// ConfirmToolUse approves or rejects a pending call; false if no call with
// that id is waiting.
func (s *Session) ConfirmToolUse(toolID string, approved bool, reason string) bool {
	return s.k.ConfirmToolUse(toolID, approved, reason)
}

// Artifact returns the full output behind an a3s://tool-output/ URI that a
// cut result pointed to.
func (s *Session) Artifact(uri string) (kernel.Artifact, bool) { return s.k.Artifact(uri) }
