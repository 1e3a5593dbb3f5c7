package kernel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/internal/testkit"
	"github.com/a3s-lab/code-wasm/kernel"
)

// effectTool counts its executions (its "side effect"), streams its msg as
// deltas and echoes it. It sleeps for sleep_ms, honouring cancellation.
type effectTool struct {
	name    string
	caps    kernel.Capabilities
	schema  string
	runs    atomic.Int64
	lastArg atomic.Value // json.RawMessage
	onRun   func(ctx context.Context, call *kernel.Call) (*kernel.Result, error)
}

const effectSchema = `{"type":"object","properties":{"msg":{"type":"string"},"sleep_ms":{"type":"integer","minimum":0},"file_path":{"type":"string"},"command":{"type":"string"},"deltas":{"type":"array","items":{"type":"string"}}},"required":["msg"],"additionalProperties":false}`

func newEffect(name string) *effectTool {
	return &effectTool{name: name, caps: kernel.Conservative(), schema: effectSchema}
}

func (t *effectTool) Name() string                                     { return t.name }
func (t *effectTool) Description() string                              { return "test tool " + t.name }
func (t *effectTool) Parameters() json.RawMessage                      { return json.RawMessage(t.schema) }
func (t *effectTool) Capabilities(json.RawMessage) kernel.Capabilities { return t.caps }
func (t *effectTool) Execute(ctx context.Context, call *kernel.Call) (*kernel.Result, error) {
	t.runs.Add(1)
	t.lastArg.Store(call.Args)
	if t.onRun != nil {
		return t.onRun(ctx, call)
	}
	var a struct {
		Msg     string   `json:"msg"`
		SleepMs int      `json:"sleep_ms"`
		Deltas  []string `json:"deltas"`
	}
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return nil, kernel.InvalidArgument("%v", err)
	}
	for _, d := range a.Deltas {
		call.Emit(d)
	}
	if a.SleepMs > 0 {
		select {
		case <-time.After(time.Duration(a.SleepMs) * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return kernel.OK(a.Msg, map[string]any{"msg": a.Msg}), nil
}

// orchestrator is a stand-in for `program`: it calls {tool, args} through
// its Invoker, and reports the child's result as its own.
type orchestrator struct{ name string }

func (o orchestrator) Name() string        { return o.name }
func (o orchestrator) Description() string { return "stand-in orchestrator" }
func (o orchestrator) Orchestrates()       {}
func (o orchestrator) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"tool":{"type":"string"},"args":{"type":"object"}},"required":["tool","args"]}`)
}
func (o orchestrator) Capabilities(json.RawMessage) kernel.Capabilities { return kernel.Conservative() }
func (o orchestrator) Execute(ctx context.Context, call *kernel.Call) (*kernel.Result, error) {
	var a struct {
		Tool string          `json:"tool"`
		Args json.RawMessage `json:"args"`
	}
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return nil, err
	}
	r := call.Invoker.Invoke(ctx, a.Tool, a.Args)
	return &kernel.Result{Output: r.Output, ExitCode: r.ExitCode, ErrorKind: r.ErrorKind}, nil
}

// recorder keeps every event, and checks invariants as they arrive.
type recorder struct {
	mu     sync.Mutex
	events []kernel.Event
	ended  map[string]bool
	bad    []string
}

func newRecorder() *recorder { return &recorder{ended: map[string]bool{}} }

func (r *recorder) on(e kernel.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e.InvocationID != "" && r.ended[e.InvocationID] {
		r.bad = append(r.bad, fmt.Sprintf("%s after tool_end of %s", e.Type, e.InvocationID))
	}
	if e.Type == kernel.EventToolEnd {
		r.ended[e.InvocationID] = true
	}
	r.events = append(r.events, e)
}

func (r *recorder) all() []kernel.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// types lists the event types of one invocation, in order.
func (r *recorder) types(id string) []string {
	var out []string
	for _, e := range r.all() {
		if e.InvocationID == id {
			out = append(out, e.Type)
		}
	}
	return out
}

func (r *recorder) ofType(typ string) []kernel.Event {
	var out []kernel.Event
	for _, e := range r.all() {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func (r *recorder) check(t *testing.T) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range r.bad {
		t.Error("event order:", b)
	}
}

type fixture struct {
	k   *kernel.Kernel
	rec *recorder
	reg *kernel.Registry
}

// newKernel builds a kernel over the given tools (registered as built-ins
// unless listed in dynamic) with g as governance. A test of another stage
// that sets no permission policy gets allowAll (the zero policy denies
// agent calls: see newKernelExact and the zero-governance cases).
func newKernel(t *testing.T, g kernel.Governance, tools []kernel.Tool, dynamic ...kernel.Tool) *fixture {
	t.Helper()
	if p := g.Permission; !p.Disabled && p.DefaultDecision == "" && len(p.Deny)+len(p.Allow)+len(p.Ask) == 0 {
		g.Permission = allowAll
	}
	return newKernelExact(t, g, tools, dynamic...)
}

// newKernelExact is newKernel with g as given.
func newKernelExact(t *testing.T, g kernel.Governance, tools []kernel.Tool, dynamic ...kernel.Tool) *fixture {
	t.Helper()
	reg := kernel.NewRegistry()
	for _, tl := range tools {
		if err := reg.RegisterBuiltin(tl); err != nil {
			t.Fatal(err)
		}
	}
	for _, tl := range dynamic {
		if err := reg.RegisterDynamic(tl); err != nil {
			t.Fatal(err)
		}
	}
	rec := newRecorder()
	k, err := kernel.New(kernel.Config{Registry: reg, OnEvent: rec.on, Governance: g})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		k.Close()
		rec.check(t)
		if v := k.LifecycleViolations(); v != 0 {
			t.Errorf("%d lifecycle violations (second terminal state)", v)
		}
	})
	return &fixture{k: k, rec: rec, reg: reg}
}

func (f *fixture) call(t *testing.T, origin kernel.Origin, tool, args string) *kernel.Result {
	t.Helper()
	res, err := f.k.Invoke(context.Background(), kernel.Request{Tool: tool, Args: json.RawMessage(args), Origin: origin})
	if err != nil {
		t.Fatalf("Invoke(%s): %v", tool, err)
	}
	return res
}

var kindOf = testkit.KindOf

// lastID is the invocation id of the last tool_end.
func (f *fixture) lastID(t *testing.T) string {
	t.Helper()
	ends := f.rec.ofType(kernel.EventToolEnd)
	if len(ends) == 0 {
		t.Fatal("no tool_end")
	}
	return ends[len(ends)-1].InvocationID
}
