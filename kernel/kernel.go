package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// ErrClosed is returned by Invoke after Close.
var ErrClosed = errors.New("session closed")

// ErrNotRegistered is wrapped when a call names no registered tool.
var ErrNotRegistered = errors.New("tool not registered")

// ErrOrigin is returned by Invoke for an origin public code may not create.
var ErrOrigin = errors.New("invalid invocation origin")

// Config builds a Kernel.
type Config struct {
	Registry *Registry
	// OnEvent receives every event, in order per invocation. It must not
	// block for long.
	OnEvent func(Event)
	// Listening, when set, reports whether anyone would see an event now;
	// while it says no, the kernel's progress events (tool_request_bound,
	// tool_execution_start, tool_output_delta, tool_end) are not built.
	Listening func() bool
	Governance
}

// Request is one call into the kernel.
type Request struct {
	Tool   string
	Args   json.RawMessage
	Origin Origin
	// Parent is the id of what caused a call made from outside any tool
	// (an agent run's id, so a UI can hang the model's calls under the
	// run); the call's events carry it as ParentID. A call made from
	// inside a tool keeps that tool as its parent.
	Parent string
}

// Kernel is the one invocation pipeline every call goes through.
type Kernel struct {
	cfg    Config
	root   context.Context
	cancel context.CancelFunc
	seq    atomic.Uint64

	schemas   *schemaCache
	artifacts *artifactStore
	confirm   *confirmManager // nil when there is no in-kernel manager
	queue     chan struct{}   // nil when there is no queue
	// contentHidden is Permission.ContentHidden(), built once.
	contentHidden func(string) bool

	violations atomic.Int64

	gmu           sync.RWMutex
	hooks         []Hook
	budget        BudgetGuard
	budgetTimeout time.Duration

	mu     sync.Mutex
	active map[string]activeEntry
	closed bool
	wg     sync.WaitGroup
}

type activeEntry struct {
	ActiveTool
	seq uint64
}

// New validates the config and returns a kernel.
func New(cfg Config) (*Kernel, error) {
	if cfg.Registry == nil {
		return nil, errors.New("kernel: nil registry")
	}
	g := cfg.Governance
	switch {
	case g.ToolTimeout < 0:
		return nil, fmt.Errorf("kernel: negative tool timeout %v", g.ToolTimeout)
	case g.BudgetTimeout < 0:
		return nil, fmt.Errorf("kernel: negative budget timeout %v", g.BudgetTimeout)
	case g.Confirmation.DefaultTimeout < 0:
		return nil, fmt.Errorf("kernel: negative confirmation timeout %v", g.Confirmation.DefaultTimeout)
	case g.Queue.MaxConcurrency < 0:
		return nil, fmt.Errorf("kernel: negative queue concurrency %d", g.Queue.MaxConcurrency)
	}
	switch g.Confirmation.TimeoutAction {
	case "", TimeoutReject, TimeoutAutoApprove:
	default:
		return nil, fmt.Errorf("kernel: confirmation timeoutAction %q: want %q or %q", g.Confirmation.TimeoutAction, TimeoutReject, TimeoutAutoApprove)
	}
	if err := g.Permission.Validate(); err != nil {
		return nil, fmt.Errorf("kernel: %w", err)
	}
	root, cancel := context.WithCancel(context.Background())
	k := &Kernel{cfg: cfg, root: root, cancel: cancel, active: map[string]activeEntry{},
		schemas: newSchemaCache(), artifacts: newArtifactStore(g.Artifacts), contentHidden: g.Permission.ContentHidden()}
	for _, h := range g.Hooks {
		if err := k.RegisterHook(h); err != nil {
			cancel()
			return nil, err
		}
	}
	k.budget, k.budgetTimeout = g.BudgetGuard, g.BudgetTimeout
	if g.Confirmer == nil && g.Confirmation.Enabled {
		k.confirm = newConfirmManager()
	}
	if g.Queue.MaxConcurrency > 0 {
		k.queue = make(chan struct{}, g.Queue.MaxConcurrency)
	}
	return k, nil
}

// Registry returns the kernel's registry.
func (k *Kernel) Registry() *Registry { return k.cfg.Registry }

// LifecycleViolations counts refused lifecycle transitions (a second
// terminal state, or going backwards). It is 0 unless the kernel has a bug.
func (k *Kernel) LifecycleViolations() int64 { return k.violations.Load() }

// RegisterHook adds a hook; a hook with the same ID is replaced.
func (k *Kernel) RegisterHook(h Hook) error {
	if h.ID == "" {
		return errors.New("hook: empty id")
	}
	if h.Handler == nil {
		return fmt.Errorf("hook %q: nil handler", h.ID)
	}
	if h.Event != HookPreToolUse && h.Event != HookPostToolUse {
		return fmt.Errorf("hook %q: event %q: want %q or %q", h.ID, h.Event, HookPreToolUse, HookPostToolUse)
	}
	if h.Timeout < 0 {
		return fmt.Errorf("hook %q: negative timeout", h.ID)
	}
	if err := h.Matcher.Validate(); err != nil {
		return fmt.Errorf("hook %q: %w", h.ID, err)
	}
	k.gmu.Lock()
	defer k.gmu.Unlock()
	k.hooks = slices.DeleteFunc(k.hooks, func(o Hook) bool { return o.ID == h.ID })
	k.hooks = append(k.hooks, h)
	return nil
}

// UnregisterHook removes the hook with id and reports whether it existed.
func (k *Kernel) UnregisterHook(id string) bool {
	k.gmu.Lock()
	defer k.gmu.Unlock()
	n := len(k.hooks)
	k.hooks = slices.DeleteFunc(k.hooks, func(o Hook) bool { return o.ID == id })
	return len(k.hooks) != n
}

// SetBudgetGuard replaces the budget guard (nil removes it); timeout 0
// means 5 s.
func (k *Kernel) SetBudgetGuard(g BudgetGuard, timeout time.Duration) {
	k.gmu.Lock()
	defer k.gmu.Unlock()
	k.budget, k.budgetTimeout = g, timeout
}

// PendingConfirmations lists the calls waiting in the kernel's own
// confirmation manager, oldest first.
func (k *Kernel) PendingConfirmations() []PendingConfirmation {
	if k.confirm == nil {
		return []PendingConfirmation{}
	}
	l := k.confirm.list()
	// One cleaner for the listing: a failing provider is asked once.
	c := &cleaner{p: k.cfg.Security}
	for i := range l {
		l[i].Args = c.args(l[i].Args)
	}
	return l
}

// ConfirmToolUse answers a pending confirmation; false if no call with
// that id is waiting.
func (k *Kernel) ConfirmToolUse(id string, approved bool, reason string) bool {
	return k.confirm != nil && k.confirm.respond(id, approved, reason)
}

// listening reports whether an event built now would reach anyone. With
// a security provider every event is built: the provider sees each
// payload's arguments to clean them, and what it is asked does not depend
// on who subscribes (the protocol transcripts of a host provider).
func (k *Kernel) listening() bool {
	return k.cfg.OnEvent != nil && (k.cfg.Listening == nil || k.cfg.Security != nil || k.cfg.Listening())
}

func (k *Kernel) emit(e Event) {
	if k.cfg.OnEvent == nil {
		return
	}
	e.Version = 1
	if e.TimeMs == 0 {
		e.TimeMs = time.Now().UnixMilli()
	}
	k.cfg.OnEvent(e)
}

// Active lists the invocations running now, oldest first.
func (k *Kernel) Active() []ActiveTool {
	k.mu.Lock()
	es := make([]activeEntry, 0, len(k.active))
	for _, a := range k.active {
		es = append(es, a)
	}
	k.mu.Unlock()
	slices.SortFunc(es, func(a, b activeEntry) int {
		if a.seq < b.seq {
			return -1
		}
		return 1
	})
	out := make([]ActiveTool, len(es))
	for i, e := range es {
		out[i] = e.ActiveTool
	}
	return out
}

// Close cancels every in-flight invocation and waits for them to finish
// (each within its settle grace). Later calls fail with ErrClosed. Close
// is idempotent.
func (k *Kernel) Close() {
	k.mu.Lock()
	k.closed = true
	k.mu.Unlock()
	k.cancel()
	k.wg.Wait()
}

// Closed reports whether Close was called.
func (k *Kernel) Closed() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.closed
}

// Artifact returns a stored full output by its a3s://tool-output/ URI.
func (k *Kernel) Artifact(uri string) (Artifact, bool) { return k.artifacts.get(uri) }
