package kernel_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/a3s-lab/code-wasm/kernel"
)

// TestHammerClose: 1,000 concurrent invocations of every kind (valid,
// invalid, hook-denied, policy-asked, sleeping, nested, over a one-slot
// queue) race a Close. Every invocation that started ends exactly once,
// with exactly one tool_end; no event follows a tool_end; nothing leaks.
func TestHammerClose(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const n = 1000
	rec := newRecorder()
	reg := kernel.NewRegistry()
	for _, tl := range []kernel.Tool{newEffect("fx"), newEffect("guarded"), orchestrator{"program"}} {
		if err := reg.RegisterBuiltin(tl); err != nil {
			t.Fatal(err)
		}
	}
	k, err := kernel.New(kernel.Config{Registry: reg, OnEvent: rec.on, Governance: kernel.Governance{
		ToolTimeout:  2 * time.Second,
		Queue:        kernel.QueueConfig{MaxConcurrency: 8},
		Permission:   kernel.PermissionPolicy{Allow: []string{"fx", "program"}, Ask: []string{"guarded"}},
		Confirmation: kernel.ConfirmationPolicy{Enabled: true, DefaultTimeout: time.Minute},
		Hooks: []kernel.Hook{{ID: "deny-x", Event: kernel.HookPreToolUse, Matcher: kernel.HookMatcher{PathPattern: "x/**"},
			Handler: func(ctx context.Context, r kernel.HookRequest) (kernel.HookResponse, error) {
				return kernel.HookResponse{Action: kernel.HookBlock}, nil
			}}},
		BudgetGuard: kernel.BudgetGuardFunc(func(ctx context.Context, r kernel.BudgetRequest) (kernel.BudgetDecision, error) {
			return kernel.BudgetDecision{Action: kernel.BudgetSoft}, nil
		}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	calls := []struct{ tool, args string }{
		{"fx", `{"msg":"ok"}`},
		{"fx", `{"msg":1}`},
		{"fx", `{"msg":"x","file_path":"x/y"}`},
		{"fx", `{"msg":"sleep","sleep_ms":50}`},
		{"guarded", `{"msg":"waits for a human"}`},
		{"program", `{"tool":"fx","args":{"msg":"nested","sleep_ms":5}}`},
	}
	origins := []kernel.Origin{kernel.OriginAgent, kernel.OriginHostTrusted, kernel.OriginHostGoverned, kernel.OriginNested}
	var started, closedErr atomic.Int64
	var wg sync.WaitGroup
	for i := range n {
		c := calls[i%len(calls)]
		o := origins[(i/len(calls))%len(origins)]
		wg.Go(func() {
			res, err := k.Invoke(context.Background(), kernel.Request{Tool: c.tool, Args: json.RawMessage(c.args), Origin: o})
			switch {
			case errors.Is(err, kernel.ErrClosed):
				closedErr.Add(1)
			case err != nil:
				t.Errorf("invoke: %v", err)
			case res == nil:
				t.Error("nil result")
			default:
				started.Add(1)
			}
		})
		if i == n/2 {
			wg.Go(func() {
				time.Sleep(10 * time.Millisecond)
				k.Close()
			})
		}
	}
	wg.Wait()
	k.Close()
	if v := k.LifecycleViolations(); v != 0 {
		t.Errorf("%d lifecycle violations", v)
	}
	rec.check(t)
	ends := map[string]int{}
	bound := map[string]bool{}
	for _, e := range rec.all() {
		switch e.Type {
		case kernel.EventToolEnd:
			ends[e.InvocationID]++
		case kernel.EventToolRequestBound, kernel.EventToolExecutionStart:
			bound[e.InvocationID] = true
		}
	}
	for id, c := range ends {
		if c != 1 {
			t.Errorf("%s: %d tool_end events", id, c)
		}
	}
	for id := range bound {
		if ends[id] != 1 {
			t.Errorf("%s started but has %d tool_end", id, ends[id])
		}
	}
	if len(k.Active()) != 0 || len(k.PendingConfirmations()) != 0 {
		t.Errorf("after close: active %v pending %v", k.Active(), k.PendingConfirmations())
	}
	t.Logf("%d invocations returned results, %d refused as closed, %d tool_end events", started.Load(), closedErr.Load(), len(ends))
	if started.Load()+closedErr.Load() != n {
		t.Errorf("accounted for %d of %d calls", started.Load()+closedErr.Load(), n)
	}
}
