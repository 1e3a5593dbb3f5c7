package kernel

import (
	"context"
	"slices"
	"sync"
	"time"
)

// confirmManager is the kernel's own Confirmer: it keeps a pending list
// that Kernel.ConfirmToolUse answers.
type confirmManager struct {
	mu      sync.Mutex
	pending map[string]*pendingEntry
}

type pendingEntry struct {
	req      ConfirmRequest
	deadline time.Time
	answer   chan ConfirmDecision // cap 1
}

func newConfirmManager() *confirmManager {
	return &confirmManager{pending: map[string]*pendingEntry{}}
}

func (m *confirmManager) Confirm(ctx context.Context, req ConfirmRequest) (ConfirmDecision, error) {
	if err := ctx.Err(); err != nil {
		return ConfirmDecision{}, err
	}
	e := &pendingEntry{req: req, deadline: time.Now().Add(req.Timeout), answer: make(chan ConfirmDecision, 1)}
	m.mu.Lock()
	m.pending[req.ToolID] = e
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		delete(m.pending, req.ToolID)
		m.mu.Unlock()
	}()
	select {
	case d := <-e.answer:
		return d, nil
	case <-ctx.Done():
		return ConfirmDecision{}, ctx.Err()
	}
}

func (m *confirmManager) respond(id string, approved bool, reason string) bool {
	m.mu.Lock()
	e, ok := m.pending[id]
	if ok {
		delete(m.pending, id)
	}
	m.mu.Unlock()
	if !ok {
		return false
	}
	e.answer <- ConfirmDecision{Approved: approved, Reason: reason}
	return true
}

func (m *confirmManager) list() []PendingConfirmation {
	m.mu.Lock()
	es := make([]*pendingEntry, 0, len(m.pending))
	for _, e := range m.pending {
		es = append(es, e)
	}
	m.mu.Unlock()
	slices.SortFunc(es, func(a, b *pendingEntry) int { return a.deadline.Compare(b.deadline) })
	out := make([]PendingConfirmation, len(es))
	now := time.Now()
	for i, e := range es {
		out[i] = PendingConfirmation{ToolID: e.req.ToolID, ToolName: e.req.ToolName, Args: e.req.Args,
			RemainingMs: max(0, e.deadline.Sub(now).Milliseconds())}
	}
	return out
}
