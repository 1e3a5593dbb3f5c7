package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// ErrClosed is returned by Invoke after Close.
var ErrClosed = errors.New("session closed")

// ErrNotRegistered is wrapped when a call names no registered tool.
var ErrNotRegistered = errors.New("tool not registered")

// Governance is the policy the kernel enforces. The zero value is valid.
type Governance struct {
	// ToolTimeout bounds every invocation; 0 means no kernel timeout.
	ToolTimeout time.Duration
}

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

	mu     sync.Mutex
	active map[string]ActiveTool
	closed bool
	wg     sync.WaitGroup
}

// New validates the config and returns a kernel.
func New(cfg Config) (*Kernel, error) {
	if cfg.Registry == nil {
		return nil, errors.New("kernel: nil registry")
	}
	if cfg.ToolTimeout < 0 {
		return nil, fmt.Errorf("kernel: negative tool timeout %v", cfg.ToolTimeout)
	}
	root, cancel := context.WithCancel(context.Background())
	return &Kernel{cfg: cfg, root: root, cancel: cancel, active: map[string]ActiveTool{}}, nil
}

// Registry returns the kernel's registry.
func (k *Kernel) Registry() *Registry { return k.cfg.Registry }

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

// Invoke runs one call from the host or the agent loop. It never returns
// nil. It returns an error only for what is not a tool result: the kernel
// is closed, or the tool is not registered.
func (k *Kernel) Invoke(ctx context.Context, req Request) (*Result, error) {
	return k.invoke(ctx, req, "")
}

func (k *Kernel) invoke(ctx context.Context, req Request, parent string) (*Result, error) {
	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		return nil, ErrClosed
	}
	k.wg.Add(1)
	k.mu.Unlock()
	defer k.wg.Done()

	t, ok := k.cfg.Registry.Lookup(req.Tool)
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrNotRegistered, req.Tool)
	}
	id := "call-" + strconv.FormatUint(k.seq.Add(1), 10)
	// Session close cancels every invocation, host-direct ones included.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(k.root, cancel)
	defer stop()
	if k.cfg.ToolTimeout > 0 {
		var c2 context.CancelFunc
		ctx, c2 = context.WithTimeout(ctx, k.cfg.ToolTimeout)
		defer c2()
	}
	base := Event{InvocationID: id, ParentID: parent, Origin: req.Origin}
	ev := func(typ string, payload map[string]any) {
		e := base
		e.Type, e.Payload = typ, payload
		k.emit(e)
	}
	args := req.Args
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	ev(EventToolRequestBound, map[string]any{"tool_id": id, "tool_name": req.Tool, "snapshot": map[string]any{"origin": req.Origin}})

	start := time.Now()
	k.mu.Lock()
	k.active[id] = ActiveTool{ID: id, Name: req.Tool, StartedAtMs: start.UnixMilli(), ParentID: parent, Origin: req.Origin}
	k.mu.Unlock()
	defer func() {
		k.mu.Lock()
		delete(k.active, id)
		k.mu.Unlock()
	}()

	ev(EventToolExecutionStart, map[string]any{"id": id, "name": req.Tool, "args": args})
	call := &Call{ID: id, ParentID: parent, Name: req.Tool, Args: args, Origin: req.Origin}
	call.Invoker = &nestedInvoker{k: k, parent: id, origin: nestedOrigin(req.Origin)}
	var deltaMu sync.Mutex
	done := false
	call.emit = func(d string) {
		deltaMu.Lock()
		defer deltaMu.Unlock()
		if !done {
			ev(EventToolOutputDelta, map[string]any{"id": id, "name": req.Tool, "delta": d})
		}
	}
	res, err := runTool(ctx, t, call)
	deltaMu.Lock()
	done = true
	deltaMu.Unlock()
	if err != nil {
		res = Failure(req.Tool, err)
		if ctx.Err() != nil && res.ErrorKind != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				res.ErrorKind = &ErrorKind{Type: ErrTimeout, Op: req.Tool, DurationMs: time.Since(start).Milliseconds()}
				res.Output = fmt.Sprintf("tool %s timed out after %dms", req.Tool, time.Since(start).Milliseconds())
			} else {
				res.ErrorKind = &ErrorKind{Type: ErrCancelled, Op: req.Tool}
			}
		}
	}
	res.Name = req.Tool
	if res.ExitCode == 0 && res.ErrorKind != nil {
		res.ExitCode = 1
	}
	endPayload := map[string]any{"id": id, "name": req.Tool, "output": res.Output, "exit_code": res.ExitCode}
	if res.Metadata != nil {
		endPayload["metadata"] = res.Metadata
	}
	if res.ErrorKind != nil {
		endPayload["error_kind"] = res.ErrorKind
	}
	ev(EventToolEnd, endPayload)
	return res, nil
}

// runTool executes with panic recovery.
func runTool(ctx context.Context, t Tool, call *Call) (res *Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("tool %s panicked: %v", call.Name, r)
		}
	}()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res, err = t.Execute(ctx, call)
	if err == nil && res == nil {
		err = fmt.Errorf("tool %s returned no result", call.Name)
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
	out := make([]ActiveTool, 0, len(k.active))
	for _, a := range k.active {
		out = append(out, a)
	}
	k.mu.Unlock()
	slices.SortFunc(out, func(a, b ActiveTool) int {
		if a.StartedAtMs != b.StartedAtMs {
			return int(a.StartedAtMs - b.StartedAtMs)
		}
		return len(a.ID) - len(b.ID)
	})
	return out
}

// Close cancels every in-flight invocation and waits for them to finish.
// Later calls fail with ErrClosed. Close is idempotent.
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

type nestedInvoker struct {
	k      *Kernel
	parent string
	origin Origin
}

func (n *nestedInvoker) Invoke(ctx context.Context, name string, args json.RawMessage) *Result {
	res, err := n.k.invoke(ctx, Request{Tool: name, Args: args, Origin: n.origin}, n.parent)
	if err != nil {
		k := KindOf(err)
		if errors.Is(err, ErrNotRegistered) {
			k = &ErrorKind{Type: ErrInvalidArgument, Message: err.Error()}
		}
		return &Result{Name: name, Output: err.Error(), ExitCode: 1, ErrorKind: k}
	}
	return res
}

func (n *nestedInvoker) Capabilities(name string, args json.RawMessage) (Capabilities, bool) {
	t, ok := n.k.cfg.Registry.Lookup(name)
	if !ok {
		return Conservative(), false
	}
	return t.Capabilities(args), true
}

func (n *nestedInvoker) ToolNames() []string { return n.k.cfg.Registry.Names() }
