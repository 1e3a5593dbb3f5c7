package kernel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
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
	Governance
}

// Request is one call into the kernel.
type Request struct {
	Tool   string
	Args   json.RawMessage
	Origin Origin
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
		if err := k.registerHook(h); err != nil {
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

func (k *Kernel) registerHook(h Hook) error {
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

func (k *Kernel) unregisterHook(id string) bool {
	k.gmu.Lock()
	defer k.gmu.Unlock()
	n := len(k.hooks)
	k.hooks = slices.DeleteFunc(k.hooks, func(o Hook) bool { return o.ID == id })
	return len(k.hooks) != n
}

func (k *Kernel) setBudgetGuard(g BudgetGuard, timeout time.Duration) {
	k.gmu.Lock()
	defer k.gmu.Unlock()
	k.budget, k.budgetTimeout = g, timeout
}

func (k *Kernel) pendingConfirmations() []PendingConfirmation {
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

func (k *Kernel) confirmToolUse(id string, approved bool, reason string) bool {
	return k.confirm != nil && k.confirm.respond(id, approved, reason)
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

// scope is what an invocation inherits from its caller.
type scope struct {
	parent string
	origin Origin
	stack  []string // tool names of the enclosing invocations
	inSlot bool     // an enclosing invocation holds a queue slot
	// limits are the restrictions of the enclosing invocations
	// (Call.Restrict); every one binds this call.
	limits []*Restriction
}

type ctxKey struct{}

// Invoke runs one call from the host or the agent loop. It never returns
// a nil result with a nil error. It returns an error only for what is not a
// tool result: the kernel is closed (ErrClosed), the tool is not registered
// (ErrNotRegistered), or the origin is one public code cannot create
// (ErrOrigin). An empty origin means OriginAgent.
func (k *Kernel) Invoke(ctx context.Context, req Request) (*Result, error) {
	switch req.Origin {
	case "":
		req.Origin = OriginAgent
	case OriginAgent, OriginNested, OriginHostTrusted, OriginHostGoverned:
	default:
		return nil, fmt.Errorf("%w: %q", ErrOrigin, req.Origin)
	}
	sc := scope{origin: req.Origin}
	// A call made with a context that came from inside a tool keeps that
	// tool's stack, so recursion cannot hide by bypassing the Invoker.
	if in, ok := ctx.Value(ctxKey{}).(*scope); ok {
		sc.stack, sc.inSlot, sc.parent, sc.limits = in.stack, in.inSlot, in.parent, in.limits
		if req.Origin != OriginNested {
			// Code running inside a tool only ever gets nested authority.
			sc.origin = OriginNested
		}
	}
	return k.invoke(ctx, req.Tool, req.Args, sc)
}

// denial is a gate's refusal.
type denial struct {
	reason     string
	retryable  bool
	retryAfter time.Duration
}

func (k *Kernel) invoke(ctx context.Context, name string, args json.RawMessage, sc scope) (*Result, error) {
	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		return nil, ErrClosed
	}
	k.wg.Add(1)
	k.mu.Unlock()
	defer k.wg.Done()

	t, ok := k.cfg.Registry.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrNotRegistered, name)
	}
	n := k.seq.Add(1)
	id := "call-" + strconv.FormatUint(n, 10)
	// Session close cancels every invocation, host-direct ones included.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(k.root, cancel)
	defer stop()

	inv := &invocation{k: k, t: t, id: id, seq: n, name: name, sc: sc,
		lc: lifecycle{violations: &k.violations}, san: &cleaner{p: k.cfg.Security}}
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	inv.args = args
	return inv.run(ctx), nil
}

// invocation is one pass through the pipeline.
type invocation struct {
	k    *Kernel
	t    Tool
	id   string
	seq  uint64
	name string
	args json.RawMessage
	sc   scope
	lc   lifecycle
	pub  json.RawMessage // args as events show them; nil until needed
	san  *cleaner        // the security provider for this invocation
}

// pubArgs is the argument object cleaned for events.
func (v *invocation) pubArgs() json.RawMessage {
	if v.pub == nil {
		v.pub = v.san.args(v.args)
	}
	return v.pub
}

func (v *invocation) ev(typ string, payload map[string]any) {
	v.k.emit(Event{Type: typ, Payload: payload, InvocationID: v.id, ParentID: v.sc.parent, Origin: v.sc.origin})
}

func (v *invocation) run(ctx context.Context) *Result {
	k := v.k
	// 1. The restrictions of the enclosing invocations, then the recursion
	// guard.
	for _, r := range v.sc.limits {
		if e := r.admit(v.name); e != nil {
			return v.reject(e, nil)
		}
	}
	if _, ok := v.t.(Orchestrator); ok && slices.Contains(v.sc.stack, v.name) {
		return v.reject(InvalidArgument("recursive %s calls are not allowed", v.name), nil)
	}
	v.lc.to(StateAdmitted)
	// 2. Schema validation, before any side effect.
	if e := validateWith(k.schemas, v.name, schemaOf(v.t), v.args); e != nil {
		return v.reject(e, nil)
	}
	v.lc.to(StateGatePending)
	// 3. Pre-hooks: block, retryable block, rewrite (validated again).
	if d, e := v.preHooks(ctx); e != nil {
		return v.reject(e, nil)
	} else if d != nil {
		if ctx.Err() != nil {
			return v.cancelled(ctx, "pre_tool_use hooks")
		}
		return v.reject(nil, d)
	}
	if ctx.Err() != nil {
		return v.cancelled(ctx, "gate")
	}
	v.ev(EventToolRequestBound, map[string]any{"tool_id": v.id, "tool_name": v.name,
		"snapshot": map[string]any{"origin": v.sc.origin, "parent_id": v.sc.parent}})
	// 4. Safety gate, skipped by trusted host calls.
	if !v.sc.origin.Trusted() {
		if d := v.gate(ctx); d != nil {
			if ctx.Err() != nil {
				return v.cancelled(ctx, "confirmation")
			}
			return v.reject(nil, d)
		}
	}
	// 5. Budget, before any side effect.
	if d := v.checkBudget(ctx); d != nil {
		if ctx.Err() != nil {
			return v.cancelled(ctx, "budget")
		}
		return v.reject(nil, d)
	}
	// 6. Queue slot (nested calls inside a slot run directly).
	inSlot := v.sc.inSlot
	if k.queue != nil && !inSlot {
		select {
		case k.queue <- struct{}{}:
			defer func() { <-k.queue }()
			inSlot = true
		case <-ctx.Done():
			return v.cancelled(ctx, "queue")
		}
	}
	// 7. Execute under timeout and settle grace.
	v.lc.to(StateRunning)
	start := time.Now()
	k.mu.Lock()
	k.active[v.id] = activeEntry{ActiveTool{ID: v.id, Name: v.name, StartedAtMs: start.UnixMilli(), ParentID: v.sc.parent, Origin: v.sc.origin}, v.seq}
	k.mu.Unlock()
	defer func() {
		k.mu.Lock()
		delete(k.active, v.id)
		k.mu.Unlock()
	}()
	v.ev(EventToolExecutionStart, map[string]any{"id": v.id, "name": v.name, "args": v.pubArgs()})
	res := v.execute(ctx, inSlot, start)
	// 8. Every failure has a kind; sanitise; cut output and bound metadata
	// to the artifact store; post-hooks; one terminal state.
	if res.ExitCode != 0 && res.ErrorKind == nil {
		res.ErrorKind = unclassified(res.Output)
	}
	v.san.result(res)
	k.cutOutput(v.name, res)
	k.boundMetadata(v.name, res)
	res = v.postHooks(ctx, res)
	state := StateCompleted
	switch {
	case res.ExitCode == 0:
	case res.ErrorKind != nil && res.ErrorKind.Type == ErrCancelled:
		state = StateCancelled
	default:
		state = StateFailed
	}
	return v.finish(res, state)
}

func schemaOf(t Tool) json.RawMessage {
	if sv, ok := t.(SchemaValidator); ok {
		if s := sv.ValidationSchema(); len(s) > 0 {
			return s
		}
	}
	return t.Parameters()
}

// finish enters the terminal state and emits tool_end, exactly once.
func (v *invocation) finish(res *Result, state State) *Result {
	res.Name = v.name
	if res.ExitCode == 0 && res.ErrorKind != nil {
		res.ExitCode = 1
	}
	v.lc.to(state)
	p := map[string]any{"id": v.id, "name": v.name, "args": v.pubArgs(), "output": res.Output, "exit_code": res.ExitCode}
	if res.Metadata != nil {
		p["metadata"] = res.Metadata
	}
	if res.ErrorKind != nil {
		p["error_kind"] = res.ErrorKind
	}
	v.ev(EventToolEnd, p)
	return res
}

// reject ends a call that did not run: e is a validation or guard error,
// d a gate denial (emits permission_denied, kind hook_denied).
func (v *invocation) reject(e *Error, d *denial) *Result {
	var res *Result
	if d != nil {
		reason := v.san.str(d.reason)
		v.ev(EventPermissionDenied, map[string]any{"tool_id": v.id, "tool_name": v.name, "args": v.pubArgs(), "reason": reason})
		kind := &ErrorKind{Type: ErrHookDenied, Reason: reason, Retryable: d.retryable, RetryAfterMs: d.retryAfter.Milliseconds()}
		out := fmt.Sprintf("Tool %s was denied: %s", v.name, reason)
		if d.retryable {
			out += fmt.Sprintf(" (retryable after %d ms)", d.retryAfter.Milliseconds())
		}
		res = &Result{Output: out, ExitCode: 1, ErrorKind: kind}
	} else {
		kd := e.Kind
		res = &Result{Output: e.Error(), ExitCode: 1, ErrorKind: &kd}
		v.san.result(res)
	}
	return v.finish(res, StateRejected)
}

func (v *invocation) cancelled(ctx context.Context, op string) *Result {
	kind := &ErrorKind{Type: ErrCancelled, Op: v.name}
	out := fmt.Sprintf("tool %s cancelled (%s): %v", v.name, op, context.Cause(ctx))
	return v.finish(&Result{Output: out, ExitCode: 1, ErrorKind: kind}, StateCancelled)
}

// unclassified is the kind of a failure that came back without one. The
// kernel cannot tell why the tool failed; invalid_argument{message} is the
// only kind that carries the tool's own words, and a failure the tool
// reports without a kind is, in this tool set, a refusal of the request
// (REFERENCE.md §3.6 has no "internal" kind). Panics and missing results
// are the kernel's own finding and are marked as such in the message.
func unclassified(output string) *ErrorKind {
	msg := output
	if len(msg) > MaxSchemaErrorBytes {
		cut := MaxSchemaErrorBytes
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	if msg == "" {
		msg = "the tool failed without saying why"
	}
	return &ErrorKind{Type: ErrInvalidArgument, Message: msg}
}

// bounded runs f with a timeout, recovering panics. It returns
// timedOut=true when f did not answer in time (f's goroutine is left to
// finish on its own; its context is cancelled).
func bounded[T any](ctx context.Context, d time.Duration, f func(context.Context) (T, error)) (res T, err error, timedOut bool) {
	cctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	type out struct {
		v   T
		err error
	}
	ch := make(chan out, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				ch <- out{err: fmt.Errorf("panic: %v", r)}
			}
		}()
		v, err := f(cctx)
		ch <- out{v, err}
	}()
	select {
	case o := <-ch:
		return o.v, o.err, false
	case <-cctx.Done():
		var zero T
		if ctx.Err() != nil {
			return zero, ctx.Err(), false
		}
		return zero, cctx.Err(), true
	}
}

func (k *Kernel) hooksFor(ev HookEvent, name string, args json.RawMessage) []Hook {
	k.gmu.RLock()
	defer k.gmu.RUnlock()
	var out []Hook
	for _, h := range k.hooks {
		if h.Event == ev && h.Matcher.Matches(name, args) {
			out = append(out, h)
		}
	}
	return out
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// MaxHookRounds bounds how many times the pre_tool_use chain runs for one
// call when hooks keep rewriting its arguments.
const MaxHookRounds = 8

// preHooks runs the matching pre_tool_use hooks in registration order.
// A rewrite starts the chain again from the first hook, with the matchers
// asked again for the new arguments, until one whole pass rewrites
// nothing: every hook's last answer was given for the arguments the tool
// will run with, so no rewrite, by an earlier hook or a later one, can
// steer a call around a hook that guards it. A hook must therefore answer
// a rewrite it made itself with no change (a rewrite is compared as JSON
// data, not bytes); hooks that are still rewriting after MaxHookRounds
// passes deny the call, naming them. skip ends the chain only in a pass
// that rewrote nothing.
func (v *invocation) preHooks(ctx context.Context) (*denial, *Error) {
	var rewriters []string
	for round := 1; ; round++ {
		rewrote := ""
		for _, h := range v.k.hooksFor(HookPreToolUse, v.name, v.args) {
			req := HookRequest{Event: HookPreToolUse, ToolID: v.id, ToolName: v.name, Args: v.args, Origin: v.sc.origin, ParentID: v.sc.parent}
			to := orDefault(h.Timeout, DefaultHookTimeout)
			r, err, timedOut := bounded(ctx, to, func(c context.Context) (HookResponse, error) { return h.Handler(c, req) })
			switch {
			case timedOut:
				return &denial{reason: fmt.Sprintf("hook %s did not answer within %v", h.ID, to)}, nil
			case err != nil:
				return &denial{reason: fmt.Sprintf("hook %s failed: %v", h.ID, err)}, nil
			}
			switch r.Action {
			case HookBlock:
				return &denial{reason: reasonOr(r.Reason, "blocked by hook "+h.ID), retryable: r.Retryable, retryAfter: r.Delay}, nil
			case HookRetry:
				return &denial{reason: reasonOr(r.Reason, "hook "+h.ID+" asks to retry later"), retryable: true, retryAfter: r.Delay}, nil
			case "", HookContinue, HookSkip:
			default:
				return &denial{reason: fmt.Sprintf("hook %s answered unknown action %q", h.ID, r.Action)}, nil
			}
			if len(r.Modified) > 0 && !sameJSON(r.Modified, v.args) {
				if e := validateWith(v.k.schemas, v.name, schemaOf(v.t), r.Modified); e != nil {
					e.Msg = "hook " + h.ID + " rewrote the arguments: " + e.Msg
					e.Kind.Message = e.Msg
					return nil, e
				}
				v.args = append(json.RawMessage(nil), r.Modified...)
				v.pub = nil
				rewrote = h.ID
				break
			}
			if r.Action == HookSkip {
				return nil, nil // no rewrite in this pass: a rewrite breaks it
			}
		}
		if rewrote == "" {
			return nil, nil
		}
		if !slices.Contains(rewriters, rewrote) {
			rewriters = append(rewriters, rewrote)
		}
		if round == MaxHookRounds {
			return &denial{reason: fmt.Sprintf("pre_tool_use hooks %s were still rewriting the arguments after %d passes; a hook must leave arguments it already rewrote unchanged",
				strings.Join(rewriters, ", "), MaxHookRounds)}, nil
		}
	}
}

// sameJSON reports whether a and b are the same JSON data, key order and
// spacing aside. Text that does not parse compares as bytes.
func sameJSON(a, b json.RawMessage) bool {
	if string(a) == string(b) {
		return true
	}
	var x, y any
	da, db := json.NewDecoder(bytes.NewReader(a)), json.NewDecoder(bytes.NewReader(b))
	da.UseNumber()
	db.UseNumber()
	if da.Decode(&x) != nil || db.Decode(&y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func reasonOr(r, def string) string {
	if r != "" {
		return r
	}
	return def
}

// postHooks runs the matching post_tool_use hooks; their failures and
// timeouts are ignored (the call already happened). A hook answering block
// or retry cannot undo the call; it withholds the result: the call ends as
// a hook_denied failure whose output says the side effect, if any, has
// happened. Later hooks do not run.
func (v *invocation) postHooks(ctx context.Context, res *Result) *Result {
	for _, h := range v.k.hooksFor(HookPostToolUse, v.name, v.args) {
		cp := *res
		req := HookRequest{Event: HookPostToolUse, ToolID: v.id, ToolName: v.name, Args: v.args, Origin: v.sc.origin, ParentID: v.sc.parent, Result: &cp}
		r, err, _ := bounded(ctx, orDefault(h.Timeout, DefaultHookTimeout), func(c context.Context) (HookResponse, error) { return h.Handler(c, req) })
		if err != nil {
			continue
		}
		switch r.Action {
		case HookSkip:
			return res
		case HookBlock, HookRetry:
			reason := v.san.str(reasonOr(r.Reason, "blocked by post_tool_use hook "+h.ID))
			effect := "its side effect, if any, has happened"
			if res.ExitCode != 0 {
				effect = "the call had failed"
			}
			out := fmt.Sprintf("Tool %s ran, but post_tool_use hook %s withheld its result: %s (%s; a post-hook cannot undo it)", v.name, h.ID, reason, effect)
			return &Result{Output: out, ExitCode: 1,
				ErrorKind: &ErrorKind{Type: ErrHookDenied, Reason: reason},
				Metadata:  map[string]any{"post_hook_blocked": map[string]any{"hook_id": h.ID, "reason": reason, "tool_exit_code": res.ExitCode}}}
		}
	}
	return res
}

// gate is the safety gate for untrusted origins: skill restriction,
// permission policy, confirmation.
func (v *invocation) gate(ctx context.Context) *denial {
	g := v.k.cfg.Governance
	if g.SkillRestriction.Enabled && !slices.ContainsFunc(g.SkillRestriction.AllowedTools, func(p string) bool { return matchName(p, v.name) }) {
		return &denial{reason: fmt.Sprintf("tool %s is not allowed by the active skill", v.name)}
	}
	fx := effectsOf(v.t, v.args)
	d, rule, content := g.Permission.decide(v.name, v.args, &fx)
	switch d {
	case DecisionAllow:
		return nil
	case DecisionDeny:
		switch {
		case rule == "":
			return &denial{reason: fmt.Sprintf("tool %s denied by the default permission decision", v.name)}
		case content:
			return &denial{reason: fmt.Sprintf("tool %s denied by permission rule %q: what it returns depends on the content of the file it names, which that rule keeps from view", v.name, rule)}
		}
		return &denial{reason: fmt.Sprintf("tool %s denied by permission rule %q", v.name, rule)}
	}
	return v.confirm(ctx)
}

func (v *invocation) confirm(ctx context.Context) *denial {
	k := v.k
	g := k.cfg.Governance
	var c Confirmer = g.Confirmer
	if c == nil && k.confirm != nil {
		c = k.confirm
	}
	if c == nil {
		return &denial{reason: fmt.Sprintf("tool %s needs confirmation and no confirmation manager is configured", v.name)}
	}
	to := orDefault(g.Confirmation.DefaultTimeout, DefaultConfirmationTimeout)
	v.ev(EventConfirmationRequired, map[string]any{"tool_id": v.id, "tool_name": v.name, "args": v.pubArgs(), "timeout_ms": to.Milliseconds()})
	req := ConfirmRequest{ToolID: v.id, ToolName: v.name, Args: v.args, Origin: v.sc.origin, ParentID: v.sc.parent, Timeout: to}
	var d ConfirmDecision
	var err error
	timedOut := false
	if m, own := c.(*confirmManager); own {
		// The kernel's own manager honours ctx: call it inline, so its
		// pending entry is gone when the call ends.
		cctx, cancel := context.WithTimeout(ctx, to)
		d, err = m.Confirm(cctx, req)
		timedOut = err != nil && ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded)
		cancel()
	} else {
		d, err, timedOut = bounded(ctx, to, func(c2 context.Context) (ConfirmDecision, error) { return c.Confirm(c2, req) })
	}
	if timedOut {
		if g.Confirmation.TimeoutAction == TimeoutAutoApprove {
			v.ev(EventConfirmationTimeout, map[string]any{"tool_id": v.id, "action_taken": "auto_approved"})
			return nil
		}
		v.ev(EventConfirmationTimeout, map[string]any{"tool_id": v.id, "action_taken": "rejected"})
		return &denial{reason: fmt.Sprintf("confirmation of %s timed out after %d ms", v.name, to.Milliseconds())}
	}
	if err != nil {
		if ctx.Err() != nil {
			return &denial{reason: "cancelled while waiting for confirmation"}
		}
		return &denial{reason: fmt.Sprintf("confirmation of %s failed: %v", v.name, err)}
	}
	p := map[string]any{"tool_id": v.id, "approved": d.Approved}
	if d.Reason != "" {
		p["reason"] = v.san.str(d.Reason)
	}
	v.ev(EventConfirmationReceived, p)
	if !d.Approved {
		return &denial{reason: reasonOr(d.Reason, "rejected by the user")}
	}
	return nil
}

func (v *invocation) checkBudget(ctx context.Context) *denial {
	k := v.k
	k.gmu.RLock()
	g, to := k.budget, k.budgetTimeout
	k.gmu.RUnlock()
	if g == nil {
		return nil
	}
	to = orDefault(to, DefaultBudgetTimeout)
	req := BudgetRequest{ToolID: v.id, ToolName: v.name, Args: v.args, Origin: v.sc.origin}
	d, err, timedOut := bounded(ctx, to, func(c context.Context) (BudgetDecision, error) { return g.CheckBeforeTool(c, req) })
	switch {
	case timedOut:
		return &denial{reason: fmt.Sprintf("Budget exhausted: the budget guard did not answer within %v", to)}
	case err != nil:
		return &denial{reason: fmt.Sprintf("Budget exhausted: the budget guard failed: %v", err)}
	}
	hit := func(kind string) {
		p := map[string]any{"resource": v.san.str(d.Resource), "kind": kind, "consumed": d.Consumed, "limit": d.Limit}
		if d.Message != "" {
			p["message"] = v.san.str(d.Message)
		}
		v.ev(EventBudgetThresholdHit, p)
	}
	switch d.Action {
	case "", BudgetAllow:
		return nil
	case BudgetSoft:
		hit("soft")
		return nil
	case BudgetHard:
		hit("hard")
	case BudgetDeny:
	default:
		return &denial{reason: fmt.Sprintf("Budget exhausted: the budget guard answered unknown action %q", d.Action)}
	}
	return &denial{reason: "Budget exhausted" + suffix(d.Message)}
}

func suffix(m string) string {
	if m == "" {
		return ""
	}
	return ": " + m
}

// execute runs the tool on its own goroutine under the tool timeout. When
// the call is cancelled or times out, the tool gets SettleGrace to return;
// after that the call ends without it (its late deltas are dropped).
func (v *invocation) execute(ctx context.Context, inSlot bool, start time.Time) *Result {
	k := v.k
	ectx := ctx
	if to := k.cfg.ToolTimeout; to > 0 {
		var c context.CancelFunc
		ectx, c = context.WithTimeout(ctx, to)
		defer c()
	}
	childOrigin := OriginNested
	if k.cfg.Registry.IsBuiltin(v.name) {
		childOrigin = nestedOrigin(v.sc.origin)
	}
	child := &scope{parent: v.id, origin: childOrigin, stack: append(slices.Clip(v.sc.stack), v.name), inSlot: inSlot, limits: v.sc.limits}
	ectx = context.WithValue(ectx, ctxKey{}, child)
	call := &Call{ID: v.id, ParentID: v.sc.parent, Name: v.name, Args: v.args, Origin: v.sc.origin,
		Invoker: &nestedInvoker{k: k, sc: *child}}
	if !v.sc.origin.Trusted() {
		call.Hidden, call.HiddenTree = k.cfg.Governance.Permission.Hidden(v.name)
		call.ContentHidden = k.contentHidden
	}
	var dmu sync.Mutex
	ended := false
	call.emit = func(d string) {
		d = v.san.str(d)
		dmu.Lock()
		defer dmu.Unlock()
		if !ended {
			v.ev(EventToolOutputDelta, map[string]any{"id": v.id, "name": v.name, "delta": d})
		}
	}
	defer func() {
		dmu.Lock()
		ended = true
		dmu.Unlock()
	}()

	type out struct {
		res *Result
		err error
	}
	ch := make(chan out, 1)
	go func() {
		r, err := runTool(ectx, v.t, call)
		ch <- out{r, err}
	}()
	var o out
	select {
	case o = <-ch:
	case <-ectx.Done():
		select {
		case o = <-ch:
		case <-time.After(SettleGrace):
			o = out{err: ectx.Err()}
		}
	}
	res, err := o.res, o.err
	if err == nil && ectx.Err() != nil && res.ExitCode == 0 {
		// The tool ignored cancellation and reported success; keep its result.
		return res
	}
	if err != nil {
		res = Failure(v.name, err)
		if ectx.Err() != nil {
			ms := time.Since(start).Milliseconds()
			if errors.Is(ectx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
				res.ErrorKind = &ErrorKind{Type: ErrTimeout, Op: v.name, DurationMs: k.cfg.ToolTimeout.Milliseconds()}
				res.Output = fmt.Sprintf("tool %s timed out after %dms", v.name, k.cfg.ToolTimeout.Milliseconds())
			} else {
				res.ErrorKind = &ErrorKind{Type: ErrCancelled, Op: v.name}
				res.Output = fmt.Sprintf("tool %s cancelled after %dms", v.name, ms)
			}
		}
	}
	return res
}

// runTool executes with panic recovery.
func runTool(ctx context.Context, t Tool, call *Call) (res *Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			msg := fmt.Sprintf("internal error: tool %s panicked: %v", call.Name, r)
			res, err = nil, &Error{Kind: ErrorKind{Type: ErrUnsupported, Message: msg}, Msg: msg}
		}
	}()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res, err = t.Execute(ctx, call)
	if err == nil && res == nil {
		msg := fmt.Sprintf("internal error: tool %s returned no result", call.Name)
		err = &Error{Kind: ErrorKind{Type: ErrUnsupported, Message: msg}, Msg: msg}
	}
	return res, err
}

func nestedOrigin(o Origin) Origin {
	switch o {
	case OriginHostTrusted, OriginHostNestedTrusted:
		return OriginHostNestedTrusted
	case OriginHostGoverned, OriginHostNestedGoverned:
		return OriginHostNestedGoverned
	default:
		return OriginNested
	}
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

// nestedInvoker is the only way tool code reaches other tools: every call
// goes through the full pipeline with the caller as parent, on its stack
// and inside its queue slot. Its origin is fixed by the kernel: plain
// nested for extension tools, the host policy for built-in orchestrators
// under a host call.
type nestedInvoker struct {
	k  *Kernel
	sc scope
}

func (n *nestedInvoker) Invoke(ctx context.Context, name string, args json.RawMessage) *Result {
	res, err := n.k.invoke(ctx, name, args, n.sc)
	if err != nil {
		kd := KindOf(err)
		switch {
		case errors.Is(err, ErrNotRegistered):
			kd = &ErrorKind{Type: ErrInvalidArgument, Message: err.Error()}
		case errors.Is(err, ErrClosed):
			kd = &ErrorKind{Type: ErrCancelled, Op: name}
		}
		return &Result{Name: name, Output: err.Error(), ExitCode: 1, ErrorKind: kd}
	}
	return res
}

func (n *nestedInvoker) Capabilities(name string, args json.RawMessage) (Capabilities, bool) {
	t, ok := n.k.cfg.Registry.Lookup(name)
	if !ok {
		return Conservative(), false
	}
	return safeCapabilities(t, args), true
}

// effectsOf is what a tool declares of a call (EffectDeclarer), or what
// its capabilities imply: it mutates unless read-only. A tool that panics
// is taken to do both.
func effectsOf(t Tool, args json.RawMessage) (fx Effects) {
	defer func() {
		if recover() != nil {
			fx = Effects{Mutates: true, ReadsContent: true}
		}
	}()
	if d, ok := t.(EffectDeclarer); ok {
		return d.Effects(args)
	}
	return Effects{Mutates: !t.Capabilities(args).ReadOnly}
}

func safeCapabilities(t Tool, args json.RawMessage) (c Capabilities) {
	defer func() {
		if recover() != nil {
			c = Conservative()
		}
	}()
	return t.Capabilities(args)
}

func (n *nestedInvoker) ToolNames() []string { return n.k.cfg.Registry.Names() }
