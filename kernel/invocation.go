package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

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
	sc := scope{origin: req.Origin, parent: req.Parent}
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
	return k.invokeTool(ctx, t, name, args, sc), nil
}

// InvokeHost runs t, an operation of the host's own that is not in the
// registry (the session's exact-content calls: readText, writeBytes,
// exportFiles, …), as a trusted host call (OriginHostTrusted): schema
// validation, hooks, budget, queue, timeout, sanitised output, events and
// the lifecycle apply as to session.tool. Its error is only ErrClosed.
func (k *Kernel) InvokeHost(ctx context.Context, t Tool, args json.RawMessage) (*Result, error) {
	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		return nil, ErrClosed
	}
	k.wg.Add(1)
	k.mu.Unlock()
	defer k.wg.Done()
	return k.invokeTool(ctx, t, t.Name(), args, scope{origin: OriginHostTrusted}), nil
}

func (k *Kernel) invokeTool(ctx context.Context, t Tool, name string, args json.RawMessage, sc scope) *Result {
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
	return inv.run(ctx)
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
	if e := validateWith(k.schemas, v.name, schemaOf(v.t), v.args, isBuiltin(v.t)); e != nil {
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
	if k.listening() {
		v.ev(EventToolRequestBound, map[string]any{"tool_id": v.id, "tool_name": v.name,
			"snapshot": map[string]any{"origin": v.sc.origin, "parent_id": v.sc.parent}})
	}
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
	if k.listening() {
		v.ev(EventToolExecutionStart, map[string]any{"id": v.id, "name": v.name, "args": v.pubArgs()})
	}
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

func isBuiltin(t Tool) bool {
	_, ok := t.(BuiltinSchema)
	return ok
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
	if !v.k.listening() {
		return res
	}
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
		_, content := v.t.(ContentSearcher)
		call.Hidden, call.HiddenTree = k.cfg.Governance.Permission.Hidden(v.name, content)
		call.ContentHidden = k.contentHidden
	}
	var dmu sync.Mutex
	ended := false
	call.emit = func(d string) {
		d = v.san.str(d)
		dmu.Lock()
		defer dmu.Unlock()
		if !ended && v.k.listening() {
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
	var o out
	if in, ok := v.t.(Inliner); ok && safeInline(in, v.args) {
		o.res, o.err = runTool(ectx, v.t, call)
	} else {
		ch := make(chan out, 1)
		go func() {
			growStack()
			r, err := runTool(ectx, v.t, call)
			ch <- out{r, err}
		}()
		select {
		case o = <-ch:
		case <-ectx.Done():
			select {
			case o = <-ch:
			case <-time.After(SettleGrace):
				o = out{err: ectx.Err()}
			}
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

// safeInline is in.Inline(args); a panic says no.
func safeInline(in Inliner, args json.RawMessage) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return in.Inline(args)
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
