package kernel

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"
)

// Restriction bounds every invocation a call causes, at any depth: the
// nested calls it makes, their own nested calls (a batch inside a
// program, whatever orchestrator comes later), and so on. It holds an
// allow-list of tool names and a call budget shared by all of them. A tool
// creates one with NewRestriction and makes its nested calls through
// Call.Restrict; the kernel then refuses, before any other stage, every
// invocation in that scope that names a tool outside the list or would go
// past the budget. Every registered invocation in the scope counts,
// including the orchestrators among them (a batch of 5 counts 6), and
// including those later refused by validation or the gate: an attempt is
// a call. The first refusal is kept (Violation) and every later
// invocation in the scope is refused with it. Safe for concurrent use.
type Restriction struct {
	label string
	tools []string // nil: any tool
	max   int64    // 0: no budget
	n     atomic.Int64

	mu   sync.Mutex
	viol *Error
}

// NewRestriction returns a restriction to the tools named (nil allows any;
// an empty list none) and at most maxCalls invocations (0: no bound).
// label names the restricted caller in refusals, which read "tool 'x' is
// not allowed for this <label>" and "<label> exceeded maxToolCalls=N"
// (REFERENCE.md §2.13 with label "PTC script").
func NewRestriction(label string, tools []string, maxCalls int) *Restriction {
	r := &Restriction{label: label, max: int64(max(maxCalls, 0))}
	if tools != nil {
		r.tools = slices.Clone(tools)
	}
	return r
}

// Violation is the first refusal, or nil.
func (r *Restriction) Violation() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.viol == nil {
		return nil
	}
	return r.viol
}

// Check refuses, as the kernel would, a call of name made now, without
// counting it: an orchestrator may ask before it crosses into the kernel
// (and, refused, never cross). A refusal is kept as the Violation.
func (r *Restriction) Check(name string) error {
	if e := r.check(name, r.n.Load()+1); e != nil {
		return e
	}
	return nil
}

// admit counts one invocation of name and refuses it when it is outside
// the restriction.
func (r *Restriction) admit(name string) *Error {
	return r.check(name, r.n.Add(1))
}

// check refuses name as the n-th call.
func (r *Restriction) check(name string, n int64) *Error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.viol != nil {
		return r.viol
	}
	switch {
	case r.tools != nil && !slices.Contains(r.tools, name):
		r.viol = InvalidArgument("tool '%s' is not allowed for this %s", name, r.label)
	case r.max > 0 && n > r.max:
		r.viol = InvalidArgument("%s exceeded maxToolCalls=%d", r.label, r.max)
	}
	return r.viol
}

// Restrict returns an Invoker whose calls, and every invocation they cause
// at any depth, are bound by r as well as by the restrictions this call is
// already under. A Call that did not come from a kernel (a test's) gets
// an Invoker that checks its own calls only.
func (c *Call) Restrict(r *Restriction) Invoker {
	if n, ok := c.Invoker.(*nestedInvoker); ok {
		sc := n.sc
		sc.limits = append(slices.Clip(sc.limits), r)
		return &nestedInvoker{k: n.k, sc: sc}
	}
	return restricted{c.Invoker, r}
}

// restricted is Restrict's Invoker for a Call made outside a kernel.
type restricted struct {
	Invoker
	r *Restriction
}

func (x restricted) Invoke(ctx context.Context, name string, args json.RawMessage) *Result {
	if e := x.r.admit(name); e != nil {
		return &Result{Name: name, Output: e.Error(), ExitCode: 1, ErrorKind: &e.Kind}
	}
	return x.Invoker.Invoke(ctx, name, args)
}
