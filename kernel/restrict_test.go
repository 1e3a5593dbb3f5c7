package kernel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/a3s-lab/code-wasm/kernel"
)

// scoped is a stand-in for `program`: it runs the calls of its arguments
// through call.Restrict with the allow-list and budget they give, and
// fails with the restriction's violation as program does.
type scoped struct{ name string }

func (s scoped) Name() string        { return s.name }
func (s scoped) Description() string { return "restricted orchestrator" }
func (s scoped) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"allowed":{"type":"array"},"max":{"type":"integer"},"calls":{"type":"array"},"parallel":{"type":"boolean"}},"required":["calls"]}`)
}
func (s scoped) Capabilities(json.RawMessage) kernel.Capabilities { return kernel.Conservative() }
func (s scoped) Execute(ctx context.Context, call *kernel.Call) (*kernel.Result, error) {
	var a struct {
		Allowed  []string `json:"allowed"`
		Max      int      `json:"max"`
		Calls    []child  `json:"calls"`
		Parallel bool     `json:"parallel"`
	}
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return nil, err
	}
	r := kernel.NewRestriction("test script", a.Allowed, a.Max)
	out := runChildren(ctx, call.Restrict(r), a.Calls, a.Parallel)
	if v := r.Violation(); v != nil {
		return nil, v
	}
	return kernel.OK(out, nil), nil
}

type child struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
}

// runChildren invokes calls (serially or all at once) and lists their
// outputs.
func runChildren(ctx context.Context, inv kernel.Invoker, calls []child, parallel bool) string {
	outs := make([]string, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		run := func() {
			r := inv.Invoke(ctx, c.Tool, c.Args)
			outs[i] = fmt.Sprintf("%s:%d:%s", c.Tool, r.ExitCode, r.Output)
		}
		if parallel {
			wg.Go(run)
		} else {
			run()
		}
	}
	wg.Wait()
	return strings.Join(outs, "\n")
}

// fan is a stand-in for `batch`: it runs its calls through its own
// Invoker and reports every child's outcome as a success.
type fan struct{ name string }

func (f fan) Name() string        { return f.name }
func (f fan) Description() string { return "unrestricted orchestrator" }
func (f fan) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"calls":{"type":"array"},"parallel":{"type":"boolean"}},"required":["calls"]}`)
}
func (f fan) Capabilities(json.RawMessage) kernel.Capabilities { return kernel.Conservative() }
func (f fan) Execute(ctx context.Context, call *kernel.Call) (*kernel.Result, error) {
	var a struct {
		Calls    []child `json:"calls"`
		Parallel bool    `json:"parallel"`
	}
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return nil, err
	}
	return kernel.OK(runChildren(ctx, call.Invoker, a.Calls, a.Parallel), nil), nil
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func calls(tool string, n int, args map[string]any) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		out[i] = map[string]any{"tool": tool, "args": args}
	}
	return out
}

// TestRestrictionBindsEveryDepth: finding 2. A restriction set on a call
// binds every invocation that call causes, through any orchestrator, at
// any depth, and its budget counts each of them; the kernel refuses the
// rest with REFERENCE.md §2.13's texts, before they run.
func TestRestrictionBindsEveryDepth(t *testing.T) {
	msg := map[string]any{"msg": "x"}
	cases := []struct {
		name     string
		args     map[string]any
		wantErr  string // the orchestrator's failure; "" for success
		writes   int64  // runs of the "write" tool
		reads    int64  // runs of the "read" tool
		viaCtxOK bool
	}{
		// The case: allowed [read, fan] reaches write as a fan child.
		{name: "orchestrator child outside the list", wantErr: "tool 'write' is not allowed for this test script",
			args: map[string]any{"allowed": []string{"read", "fan"}, "calls": []map[string]any{{"tool": "fan", "args": map[string]any{"calls": calls("write", 1, msg)}}}}},
		{name: "two orchestrators deep", wantErr: "tool 'write' is not allowed for this test script",
			args: map[string]any{"allowed": []string{"read", "fan", "fan2"}, "calls": []map[string]any{{"tool": "fan", "args": map[string]any{
				"calls": []map[string]any{{"tool": "fan2", "args": map[string]any{"calls": calls("write", 1, msg)}}}}}}}},
		{name: "allowed children run", reads: 3,
			args: map[string]any{"allowed": []string{"read", "fan"}, "calls": []map[string]any{{"tool": "fan", "args": map[string]any{"calls": calls("read", 3, msg)}}}}},
		{name: "a refusal is sticky: later allowed calls are refused too", wantErr: "tool 'write' is not allowed", reads: 1,
			args: map[string]any{"allowed": []string{"read", "fan"}, "calls": []map[string]any{{"tool": "fan", "args": map[string]any{
				"calls": append(append(calls("read", 1, msg), calls("write", 1, msg)...), calls("read", 2, msg)...)}}}}},
		// maxToolCalls counts every invocation the script causes, the
		// orchestrator included: fan + 4 reads = 5 > 4.
		{name: "budget counts nested calls and the orchestrator", wantErr: "test script exceeded maxToolCalls=4", reads: 3,
			args: map[string]any{"max": 4, "calls": []map[string]any{{"tool": "fan", "args": map[string]any{"calls": calls("read", 4, msg)}}}}},
		{name: "budget exactly spent", reads: 4,
			args: map[string]any{"max": 5, "calls": []map[string]any{{"tool": "fan", "args": map[string]any{"calls": calls("read", 4, msg)}}}}},
		{name: "budget under parallel children", wantErr: "exceeded maxToolCalls=6", reads: 5,
			args: map[string]any{"max": 6, "calls": []map[string]any{{"tool": "fan", "args": map[string]any{"parallel": true, "calls": calls("read", 20, msg)}}}}},
		{name: "an empty list allows nothing", wantErr: "tool 'read' is not allowed",
			args: map[string]any{"allowed": []string{}, "calls": calls("read", 1, msg)}},
		// An inner restriction cannot widen an outer one.
		{name: "nested restrictions both bind", wantErr: "tool 'write' is not allowed for this test script",
			args: map[string]any{"allowed": []string{"scoped2", "read"}, "calls": []map[string]any{{"tool": "scoped2", "args": map[string]any{
				"allowed": []string{"write"}, "calls": calls("write", 1, msg)}}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			write, read := newEffect("write"), newEffect("read")
			write.caps.ReadOnly = false
			f := newKernel(t, kernel.Governance{}, []kernel.Tool{write, read, scoped{"scoped"}, scoped{"scoped2"}, fan{"fan"}, fan{"fan2"}})
			res := f.call(t, kernel.OriginAgent, "scoped", mustJSON(tc.args))
			if tc.wantErr == "" {
				if res.ExitCode != 0 {
					t.Fatalf("exit %d: %s", res.ExitCode, res.Output)
				}
			} else if res.ExitCode == 0 || !strings.Contains(res.Output, tc.wantErr) || kindOf(res) != kernel.ErrInvalidArgument {
				t.Fatalf("exit %d kind %s output %q, want %q", res.ExitCode, kindOf(res), res.Output, tc.wantErr)
			}
			if w, r := write.runs.Load(), read.runs.Load(); w != tc.writes || r != tc.reads {
				t.Fatalf("write ran %d times, read %d; want %d, %d", w, r, tc.writes, tc.reads)
			}
		})
	}
}

// TestRestrictionRefusalIsAnEvent: a refused nested call ends as a
// rejected invocation (tool_end, invalid_argument) under its parent, never
// reaching tool_execution_start.
func TestRestrictionRefusalIsAnEvent(t *testing.T) {
	write := newEffect("write")
	f := newKernel(t, kernel.Governance{}, []kernel.Tool{write, scoped{"scoped"}, fan{"fan"}})
	f.call(t, kernel.OriginAgent, "scoped", mustJSON(map[string]any{"allowed": []string{"fan"},
		"calls": []map[string]any{{"tool": "fan", "args": map[string]any{"calls": calls("write", 1, map[string]any{"msg": "x"})}}}}))
	var ends int
	for _, e := range f.rec.ofType(kernel.EventToolEnd) {
		if e.Payload["name"] != "write" {
			continue
		}
		ends++
		if e.ParentID == "" || !strings.Contains(e.Payload["output"].(string), "not allowed") {
			t.Errorf("tool_end of the refused write: parent %q payload %v", e.ParentID, e.Payload)
		}
		for _, typ := range f.rec.types(e.InvocationID) {
			if typ == kernel.EventToolExecutionStart {
				t.Errorf("the refused write started")
			}
		}
	}
	if ends != 1 {
		t.Fatalf("%d tool_end events for write", ends)
	}
}

// TestRestrictionFollowsTheContext: a tool inside the restricted scope that
// calls Kernel.Invoke with its own context (not its Invoker) is bound too:
// the scope travels with the context.
func TestRestrictionFollowsTheContext(t *testing.T) {
	write := newEffect("write")
	var k *kernel.Kernel
	direct := newEffect("direct")
	direct.onRun = func(ctx context.Context, call *kernel.Call) (*kernel.Result, error) {
		res, err := k.Invoke(ctx, kernel.Request{Tool: "write", Args: json.RawMessage(`{"msg":"x"}`), Origin: kernel.OriginHostTrusted})
		if err != nil {
			return nil, err
		}
		return res, nil
	}
	f := newKernel(t, kernel.Governance{}, []kernel.Tool{write, direct, scoped{"scoped"}})
	k = f.k
	res := f.call(t, kernel.OriginAgent, "scoped", mustJSON(map[string]any{"allowed": []string{"direct"}, "calls": calls("direct", 1, map[string]any{"msg": "x"})}))
	if res.ExitCode == 0 || !strings.Contains(res.Output, "tool 'write' is not allowed for this test script") || write.runs.Load() != 0 {
		t.Fatalf("exit %d %q, write ran %d", res.ExitCode, res.Output, write.runs.Load())
	}
}

// TestRestrictionCheck: Check answers as the kernel would without counting,
// and keeps its refusal; a Call made outside a kernel still gets its own
// calls checked.
func TestRestrictionCheck(t *testing.T) {
	r := kernel.NewRestriction("S", []string{"a"}, 2)
	for range 3 {
		if err := r.Check("a"); err != nil {
			t.Fatalf("Check counted: %v", err)
		}
	}
	if err := r.Check("b"); err == nil || err.Error() != "tool 'b' is not allowed for this S" {
		t.Fatalf("Check(b) = %v", err)
	}
	if err := r.Check("a"); err == nil || r.Violation() == nil {
		t.Fatalf("a refusal was not kept: %v", err)
	}

	r = kernel.NewRestriction("S", nil, 1)
	call := &kernel.Call{Name: "x", Invoker: stubInvoker{}}
	inv := call.Restrict(r)
	if res := inv.Invoke(context.Background(), "any", nil); res.ExitCode != 0 {
		t.Fatalf("first call: %q", res.Output)
	}
	if res := inv.Invoke(context.Background(), "any", nil); res.ExitCode == 0 || res.Output != "S exceeded maxToolCalls=1" {
		t.Fatalf("second call: exit %d %q", res.ExitCode, res.Output)
	}
}

type stubInvoker struct{}

func (stubInvoker) Invoke(_ context.Context, name string, _ json.RawMessage) *kernel.Result {
	return &kernel.Result{Name: name, Output: "ok"}
}
func (stubInvoker) Capabilities(string, json.RawMessage) (kernel.Capabilities, bool) {
	return kernel.Conservative(), true
}
func (stubInvoker) ToolNames() []string { return nil }
