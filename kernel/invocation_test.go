package kernel_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/kernel"
)

func hook(id string, ev kernel.HookEvent, m kernel.HookMatcher, f kernel.HookHandler) kernel.Hook {
	return kernel.Hook{ID: id, Event: ev, Matcher: m, Handler: f, Timeout: 200 * time.Millisecond}
}

func answer(r kernel.HookResponse) kernel.HookHandler {
	return func(context.Context, kernel.HookRequest) (kernel.HookResponse, error) { return r, nil }
}

func budget(d kernel.BudgetDecision, err error) kernel.BudgetGuard {
	return kernel.BudgetGuardFunc(func(context.Context, kernel.BudgetRequest) (kernel.BudgetDecision, error) { return d, err })
}

// approver answers every confirmation the same way.
type approver struct {
	ok    bool
	stall bool
}

func (a approver) Confirm(ctx context.Context, _ kernel.ConfirmRequest) (kernel.ConfirmDecision, error) {
	if a.stall {
		<-ctx.Done()
		return kernel.ConfirmDecision{}, ctx.Err()
	}
	return kernel.ConfirmDecision{Approved: a.ok, Reason: "because"}, nil
}

var allowAll = kernel.PermissionPolicy{Allow: []string{"*"}}

// TestStages checks each stage of the pipeline alone: what it rejects,
// with which error kind, and that a rejection happens before the tool's
// side effect.
func TestStages(t *testing.T) {
	stall := func(ctx context.Context, _ kernel.HookRequest) (kernel.HookResponse, error) {
		<-ctx.Done()
		return kernel.HookResponse{}, ctx.Err()
	}
	cases := []struct {
		name     string
		g        kernel.Governance
		origin   kernel.Origin
		args     string
		wantKind kernel.ErrorType
		wantRuns int64
		wantOut  string   // substring of the output
		events   []string // must appear for the invocation
		noEvents []string // must not appear
		// zeroPolicy keeps a zero permission policy; otherwise a case that
		// sets none gets allowAll, so it tests its own stage.
		zeroPolicy bool
	}{
		{name: "zero governance: agent call asks, no manager, denied", args: `{"msg":"x"}`, zeroPolicy: true,
			wantKind: kernel.ErrHookDenied, wantOut: "no confirmation manager", events: []string{kernel.EventPermissionDenied}},
		{name: "zero governance: governed host call denied", args: `{"msg":"x"}`, zeroPolicy: true, origin: kernel.OriginHostGoverned,
			wantKind: kernel.ErrHookDenied, wantOut: "no confirmation manager"},
		{name: "zero governance: nested call denied", args: `{"msg":"x"}`, zeroPolicy: true, origin: kernel.OriginNested,
			wantKind: kernel.ErrHookDenied, wantOut: "no confirmation manager"},
		{name: "zero governance: trusted host call runs", args: `{"msg":"x"}`, zeroPolicy: true, origin: kernel.OriginHostTrusted, wantRuns: 1},
		{name: "zero policy with confirmation enabled asks the in-kernel manager", args: `{"msg":"x"}`, zeroPolicy: true,
			g:        kernel.Governance{Confirmation: kernel.ConfirmationPolicy{Enabled: true, DefaultTimeout: 30 * time.Millisecond}},
			wantKind: kernel.ErrHookDenied, wantOut: "timed out after 30 ms", events: []string{kernel.EventConfirmationRequired, kernel.EventConfirmationTimeout}},
		{name: "valid call runs", args: `{"msg":"hi"}`, wantRuns: 1, wantOut: "hi",
			events: []string{kernel.EventToolRequestBound, kernel.EventToolExecutionStart, kernel.EventToolEnd}},
		{name: "schema: missing required", args: `{}`, wantKind: kernel.ErrInvalidArgument, wantOut: "msg",
			noEvents: []string{kernel.EventToolRequestBound, kernel.EventToolExecutionStart}},
		{name: "schema: wrong type", args: `{"msg":3}`, wantKind: kernel.ErrInvalidArgument, wantOut: "/msg"},
		{name: "schema: unknown field", args: `{"msg":"x","nope":1}`, wantKind: kernel.ErrInvalidArgument, wantOut: "nope"},
		{name: "schema: not JSON", args: `{"msg":`, wantKind: kernel.ErrInvalidArgument, wantOut: "not valid JSON"},
		{name: "pre-hook block", args: `{"msg":"x"}`, wantKind: kernel.ErrHookDenied, wantOut: "no thanks",
			g:      kernel.Governance{Hooks: []kernel.Hook{hook("h", kernel.HookPreToolUse, kernel.HookMatcher{}, answer(kernel.HookResponse{Action: kernel.HookBlock, Reason: "no thanks"}))}},
			events: []string{kernel.EventPermissionDenied}, noEvents: []string{kernel.EventToolRequestBound}},
		{name: "pre-hook retryable block", args: `{"msg":"x"}`, wantKind: kernel.ErrHookDenied, wantOut: "retryable after 250 ms",
			g: kernel.Governance{Hooks: []kernel.Hook{hook("h", kernel.HookPreToolUse, kernel.HookMatcher{}, answer(kernel.HookResponse{Action: kernel.HookRetry, Delay: 250 * time.Millisecond}))}}},
		{name: "pre-hook error denies", args: `{"msg":"x"}`, wantKind: kernel.ErrHookDenied, wantOut: "failed: boom",
			g: kernel.Governance{Hooks: []kernel.Hook{hook("h", kernel.HookPreToolUse, kernel.HookMatcher{}, func(context.Context, kernel.HookRequest) (kernel.HookResponse, error) {
				return kernel.HookResponse{}, errors.New("boom")
			})}}},
		{name: "pre-hook stall denies", args: `{"msg":"x"}`, wantKind: kernel.ErrHookDenied, wantOut: "did not answer",
			g: kernel.Governance{Hooks: []kernel.Hook{hook("h", kernel.HookPreToolUse, kernel.HookMatcher{}, stall)}}},
		{name: "pre-hook other tool does not match", args: `{"msg":"x"}`, wantRuns: 1,
			g: kernel.Governance{Hooks: []kernel.Hook{hook("h", kernel.HookPreToolUse, kernel.HookMatcher{Tool: "write"}, answer(kernel.HookResponse{Action: kernel.HookBlock}))}}},
		{name: "pre-hook path pattern matches", args: `{"msg":"x","file_path":"secret/a.txt"}`, wantKind: kernel.ErrHookDenied,
			g: kernel.Governance{Hooks: []kernel.Hook{hook("h", kernel.HookPreToolUse, kernel.HookMatcher{PathPattern: "secret/**"}, answer(kernel.HookResponse{Action: kernel.HookBlock}))}}},
		{name: "pre-hook path pattern misses", args: `{"msg":"x","file_path":"src/a.txt"}`, wantRuns: 1,
			g: kernel.Governance{Hooks: []kernel.Hook{hook("h", kernel.HookPreToolUse, kernel.HookMatcher{PathPattern: "secret/**"}, answer(kernel.HookResponse{Action: kernel.HookBlock}))}}},
		{name: "pre-hook command pattern", args: `{"msg":"x","command":"rm -rf /"}`, wantKind: kernel.ErrHookDenied,
			g: kernel.Governance{Hooks: []kernel.Hook{hook("h", kernel.HookPreToolUse, kernel.HookMatcher{CommandPattern: "rm *"}, answer(kernel.HookResponse{Action: kernel.HookBlock}))}}},
		{name: "pre-hook rewrite", args: `{"msg":"x"}`, wantRuns: 1, wantOut: "rewritten",
			g: kernel.Governance{Hooks: []kernel.Hook{hook("h", kernel.HookPreToolUse, kernel.HookMatcher{}, answer(kernel.HookResponse{Modified: json.RawMessage(`{"msg":"rewritten"}`)}))}}},
		{name: "pre-hook rewrite breaking the schema", args: `{"msg":"x"}`, wantKind: kernel.ErrInvalidArgument, wantOut: "rewrote",
			g: kernel.Governance{Hooks: []kernel.Hook{hook("h", kernel.HookPreToolUse, kernel.HookMatcher{}, answer(kernel.HookResponse{Modified: json.RawMessage(`{"msg":42}`)}))}}},
		{name: "skill restriction off by default", args: `{"msg":"x"}`, wantRuns: 1, g: kernel.Governance{SkillRestriction: kernel.SkillRestriction{AllowedTools: []string{"other"}}}},
		{name: "skill restriction on", args: `{"msg":"x"}`, wantKind: kernel.ErrHookDenied, wantOut: "active skill",
			g: kernel.Governance{SkillRestriction: kernel.SkillRestriction{Enabled: true, AllowedTools: []string{"other"}}}},
		{name: "permission disabled allows", args: `{"msg":"x"}`, wantRuns: 1, g: kernel.Governance{Permission: kernel.PermissionPolicy{Disabled: true, Deny: []string{"*"}}}},
		{name: "permission deny", args: `{"msg":"x"}`, wantKind: kernel.ErrHookDenied, wantOut: "permission rule",
			g: kernel.Governance{Permission: kernel.PermissionPolicy{Deny: []string{"fx"}, Allow: []string{"*"}}}, events: []string{kernel.EventPermissionDenied}},
		{name: "permission deny beats allow", args: `{"msg":"x","file_path":"src/a.go"}`, wantKind: kernel.ErrHookDenied,
			g: kernel.Governance{Permission: kernel.PermissionPolicy{Deny: []string{"fx(path:src/**)"}, Allow: []string{"fx"}}}},
		{name: "permission arg pattern misses", args: `{"msg":"x","file_path":"docs/a.md"}`, wantRuns: 1,
			g: kernel.Governance{Permission: kernel.PermissionPolicy{Deny: []string{"fx(path:src/**)"}, Allow: []string{"fx"}}}},
		{name: "permission default ask without manager denies", args: `{"msg":"x"}`, wantKind: kernel.ErrHookDenied, wantOut: "no confirmation manager",
			g: kernel.Governance{Permission: kernel.PermissionPolicy{DefaultDecision: kernel.DecisionAsk}}, noEvents: []string{kernel.EventConfirmationRequired}},
		{name: "permission default decision allow", args: `{"msg":"x"}`, wantRuns: 1,
			g: kernel.Governance{Permission: kernel.PermissionPolicy{DefaultDecision: kernel.DecisionAllow}}},
		{name: "confirmation approved", args: `{"msg":"x"}`, wantRuns: 1,
			g:      kernel.Governance{Permission: kernel.PermissionPolicy{Ask: []string{"fx"}}, Confirmer: approver{ok: true}},
			events: []string{kernel.EventConfirmationRequired, kernel.EventConfirmationReceived}},
		{name: "confirmation rejected", args: `{"msg":"x"}`, wantKind: kernel.ErrHookDenied, wantOut: "because",
			g:      kernel.Governance{Permission: kernel.PermissionPolicy{DefaultDecision: kernel.DecisionAsk}, Confirmer: approver{ok: false}},
			events: []string{kernel.EventConfirmationRequired, kernel.EventConfirmationReceived, kernel.EventPermissionDenied}},
		{name: "confirmation timeout rejects", args: `{"msg":"x"}`, wantKind: kernel.ErrHookDenied, wantOut: "timed out",
			g: kernel.Governance{Permission: kernel.PermissionPolicy{DefaultDecision: kernel.DecisionAsk}, Confirmer: approver{stall: true},
				Confirmation: kernel.ConfirmationPolicy{DefaultTimeout: 30 * time.Millisecond}},
			events: []string{kernel.EventConfirmationTimeout}},
		{name: "confirmation timeout auto-approves", args: `{"msg":"x"}`, wantRuns: 1,
			g: kernel.Governance{Permission: kernel.PermissionPolicy{DefaultDecision: kernel.DecisionAsk}, Confirmer: approver{stall: true},
				Confirmation: kernel.ConfirmationPolicy{DefaultTimeout: 30 * time.Millisecond, TimeoutAction: kernel.TimeoutAutoApprove}},
			events: []string{kernel.EventConfirmationTimeout}},
		{name: "in-kernel manager timeout rejects", args: `{"msg":"x"}`, wantKind: kernel.ErrHookDenied, wantOut: "timed out after 30 ms",
			g: kernel.Governance{Permission: kernel.PermissionPolicy{DefaultDecision: kernel.DecisionAsk},
				Confirmation: kernel.ConfirmationPolicy{Enabled: true, DefaultTimeout: 30 * time.Millisecond}},
			events: []string{kernel.EventConfirmationRequired, kernel.EventConfirmationTimeout}},
		{name: "in-kernel manager timeout auto-approves", args: `{"msg":"x"}`, wantRuns: 1,
			g: kernel.Governance{Permission: kernel.PermissionPolicy{DefaultDecision: kernel.DecisionAsk},
				Confirmation: kernel.ConfirmationPolicy{Enabled: true, DefaultTimeout: 30 * time.Millisecond, TimeoutAction: kernel.TimeoutAutoApprove}},
			events: []string{kernel.EventConfirmationTimeout}},
		{name: "budget soft continues", args: `{"msg":"x"}`, wantRuns: 1,
			g:      kernel.Governance{BudgetGuard: budget(kernel.BudgetDecision{Action: kernel.BudgetSoft, Resource: "tokens", Consumed: 90, Limit: 100}, nil)},
			events: []string{kernel.EventBudgetThresholdHit}},
		{name: "budget hard denies", args: `{"msg":"x"}`, wantKind: kernel.ErrHookDenied, wantOut: "Budget exhausted",
			g:      kernel.Governance{BudgetGuard: budget(kernel.BudgetDecision{Action: kernel.BudgetHard}, nil)},
			events: []string{kernel.EventBudgetThresholdHit, kernel.EventPermissionDenied}, noEvents: []string{kernel.EventToolExecutionStart}},
		{name: "budget deny", args: `{"msg":"x"}`, wantKind: kernel.ErrHookDenied, wantOut: "Budget exhausted",
			g: kernel.Governance{BudgetGuard: budget(kernel.BudgetDecision{Action: kernel.BudgetDeny}, nil)}},
		{name: "budget error denies", args: `{"msg":"x"}`, wantKind: kernel.ErrHookDenied, wantOut: "guard failed",
			g: kernel.Governance{BudgetGuard: budget(kernel.BudgetDecision{}, errors.New("db down"))}},
		{name: "budget stall denies", args: `{"msg":"x"}`, wantKind: kernel.ErrHookDenied, wantOut: "did not answer",
			g: kernel.Governance{BudgetTimeout: 30 * time.Millisecond, BudgetGuard: kernel.BudgetGuardFunc(func(ctx context.Context, _ kernel.BudgetRequest) (kernel.BudgetDecision, error) {
				<-ctx.Done()
				return kernel.BudgetDecision{}, ctx.Err()
			})}},
		{name: "tool timeout", args: `{"msg":"x","sleep_ms":5000}`, wantRuns: 1, wantKind: kernel.ErrTimeout, wantOut: "timed out after 20ms",
			g: kernel.Governance{ToolTimeout: 20 * time.Millisecond}},
		{name: "sanitised output", args: `{"msg":"key=SECRET"}`, wantRuns: 1, wantOut: "key=[redacted]",
			g: kernel.Governance{Security: kernel.SanitizerFunc(func(s string) string { return strings.ReplaceAll(s, "SECRET", "[redacted]") })}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fx := newEffect("fx")
			f := newKernel(t, tc.g, []kernel.Tool{fx})
			if tc.zeroPolicy {
				f = newKernelExact(t, tc.g, []kernel.Tool{fx})
			}
			origin := tc.origin
			if origin == "" {
				origin = kernel.OriginAgent
			}
			res := f.call(t, origin, "fx", tc.args)
			if got := kindOf(res); got != tc.wantKind {
				t.Fatalf("kind = %q, want %q (output %q)", got, tc.wantKind, res.Output)
			}
			if (tc.wantKind == "") != (res.ExitCode == 0) {
				t.Errorf("exit code %d with kind %q", res.ExitCode, kindOf(res))
			}
			if got := fx.runs.Load(); got != tc.wantRuns {
				t.Errorf("tool ran %d times, want %d", got, tc.wantRuns)
			}
			if !strings.Contains(res.Output, tc.wantOut) {
				t.Errorf("output %q does not contain %q", res.Output, tc.wantOut)
			}
			id := f.lastID(t)
			types := f.rec.types(id)
			if n := countOf(types, kernel.EventToolEnd); n != 1 {
				t.Errorf("%d tool_end events, want 1: %v", n, types)
			}
			for _, e := range tc.events {
				if !slices.Contains(types, e) {
					t.Errorf("no %s event: %v", e, types)
				}
			}
			for _, e := range tc.noEvents {
				if slices.Contains(types, e) {
					t.Errorf("unexpected %s event: %v", e, types)
				}
			}
			if res.ErrorKind != nil && res.ErrorKind.Type == kernel.ErrHookDenied && !slices.Contains(types, kernel.EventPermissionDenied) {
				t.Errorf("a denial without permission_denied: %v", types)
			}
		})
	}
}

func countOf(s []string, v string) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}

// TestStageOrder checks REFERENCE §3.2's order by logging each stage as it
// is reached: pre-hook → tool_request_bound → confirmation → budget →
// tool_execution_start → tool → deltas → post-hook → tool_end.
func TestStageOrder(t *testing.T) {
	var mu sync.Mutex
	var log []string
	add := func(s string) {
		mu.Lock()
		log = append(log, s)
		mu.Unlock()
	}
	fx := newEffect("fx")
	fx.onRun = func(ctx context.Context, call *kernel.Call) (*kernel.Result, error) {
		add("execute")
		call.Emit("d1")
		call.Emit("d2")
		return kernel.OK("done", nil), nil
	}
	g := kernel.Governance{
		Permission: kernel.PermissionPolicy{Ask: []string{"fx"}},
		Confirmer: confirmFunc(func(context.Context, kernel.ConfirmRequest) (kernel.ConfirmDecision, error) {
			add("confirm")
			return kernel.ConfirmDecision{Approved: true}, nil
		}),
		BudgetGuard: kernel.BudgetGuardFunc(func(context.Context, kernel.BudgetRequest) (kernel.BudgetDecision, error) {
			add("budget")
			return kernel.BudgetDecision{}, nil
		}),
		Hooks: []kernel.Hook{
			hook("pre", kernel.HookPreToolUse, kernel.HookMatcher{}, func(context.Context, kernel.HookRequest) (kernel.HookResponse, error) {
				add("pre_hook")
				return kernel.HookResponse{}, nil
			}),
			hook("post", kernel.HookPostToolUse, kernel.HookMatcher{}, func(_ context.Context, r kernel.HookRequest) (kernel.HookResponse, error) {
				add("post_hook:" + r.Result.Output)
				return kernel.HookResponse{}, nil
			}),
		},
	}
	reg := kernel.NewRegistry()
	if err := reg.RegisterBuiltin(fx); err != nil {
		t.Fatal(err)
	}
	k, err := kernel.New(kernel.Config{Registry: reg, Governance: g, OnEvent: func(e kernel.Event) { add(e.Type) }})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	res, err := k.Invoke(context.Background(), kernel.Request{Tool: "fx", Args: json.RawMessage(`{"msg":"x"}`), Origin: kernel.OriginAgent})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("call failed: %v %+v", err, res)
	}
	want := []string{"pre_hook", kernel.EventToolRequestBound, kernel.EventConfirmationRequired, "confirm", kernel.EventConfirmationReceived,
		"budget", kernel.EventToolExecutionStart, "execute", kernel.EventToolOutputDelta, kernel.EventToolOutputDelta, "post_hook:done", kernel.EventToolEnd}
	if !slices.Equal(log, want) {
		t.Errorf("stage order\n got %v\nwant %v", log, want)
	}
}

type confirmFunc func(context.Context, kernel.ConfirmRequest) (kernel.ConfirmDecision, error)

func (f confirmFunc) Confirm(ctx context.Context, r kernel.ConfirmRequest) (kernel.ConfirmDecision, error) {
	return f(ctx, r)
}

// TestTrustedHostCall: a trusted host call skips a policy deny and
// confirmation, but not a pre-hook block or the budget.
func TestTrustedHostCall(t *testing.T) {
	deny := kernel.PermissionPolicy{Deny: []string{"*"}}
	t.Run("skips policy deny", func(t *testing.T) {
		fx := newEffect("fx")
		f := newKernel(t, kernel.Governance{Permission: deny}, []kernel.Tool{fx})
		if res := f.call(t, kernel.OriginHostTrusted, "fx", `{"msg":"x"}`); res.ExitCode != 0 {
			t.Fatalf("trusted call denied: %+v", res)
		}
		if res := f.call(t, kernel.OriginHostGoverned, "fx", `{"msg":"x"}`); kindOf(res) != kernel.ErrHookDenied {
			t.Fatalf("governed call not denied: %+v", res)
		}
		if fx.runs.Load() != 1 {
			t.Errorf("runs = %d, want 1", fx.runs.Load())
		}
		ev := f.rec.ofType(kernel.EventToolRequestBound)
		if len(ev) != 2 || ev[0].Origin != kernel.OriginHostTrusted || ev[1].Payload["snapshot"].(map[string]any)["origin"] != kernel.OriginHostGoverned {
			t.Errorf("tool_request_bound origins wrong: %+v", ev)
		}
	})
	t.Run("does not skip a pre-hook block", func(t *testing.T) {
		fx := newEffect("fx")
		f := newKernel(t, kernel.Governance{Hooks: []kernel.Hook{hook("h", kernel.HookPreToolUse, kernel.HookMatcher{}, answer(kernel.HookResponse{Action: kernel.HookBlock, Reason: "frozen"}))}}, []kernel.Tool{fx})
		res := f.call(t, kernel.OriginHostTrusted, "fx", `{"msg":"x"}`)
		if kindOf(res) != kernel.ErrHookDenied || res.ErrorKind.Reason != "frozen" || fx.runs.Load() != 0 {
			t.Fatalf("trusted call not blocked by hook: %+v runs=%d", res, fx.runs.Load())
		}
	})
	t.Run("does not skip the budget", func(t *testing.T) {
		fx := newEffect("fx")
		f := newKernel(t, kernel.Governance{BudgetGuard: budget(kernel.BudgetDecision{Action: kernel.BudgetDeny}, nil)}, []kernel.Tool{fx})
		res := f.call(t, kernel.OriginHostTrusted, "fx", `{"msg":"x"}`)
		if kindOf(res) != kernel.ErrHookDenied || fx.runs.Load() != 0 {
			t.Fatalf("trusted call not stopped by budget: %+v", res)
		}
	})
}

// TestConfirmationManager: the in-kernel manager keeps a pending list,
// approve and reject by id; no side effect before approval.
func TestConfirmationManager(t *testing.T) {
	for _, approve := range []bool{true, false} {
		name := map[bool]string{true: "approve", false: "reject"}[approve]
		t.Run(name, func(t *testing.T) {
			fx := newEffect("fx")
			f := newKernel(t, kernel.Governance{
				Permission:   kernel.PermissionPolicy{Ask: []string{"fx"}},
				Confirmation: kernel.ConfirmationPolicy{Enabled: true},
			}, []kernel.Tool{fx})
			done := make(chan *kernel.Result, 1)
			go func() {
				res, _ := f.k.Invoke(context.Background(), kernel.Request{Tool: "fx", Args: json.RawMessage(`{"msg":"x"}`), Origin: kernel.OriginHostGoverned})
				done <- res
			}()
			var pending []kernel.PendingConfirmation
			for range 500 {
				if pending = f.k.PendingConfirmations(); len(pending) > 0 {
					break
				}
				time.Sleep(2 * time.Millisecond)
			}
			if len(pending) != 1 || pending[0].ToolName != "fx" || pending[0].RemainingMs <= 0 || pending[0].RemainingMs > 30000 {
				t.Fatalf("pending = %+v", pending)
			}
			if fx.runs.Load() != 0 {
				t.Fatal("tool ran before confirmation")
			}
			if f.k.ConfirmToolUse("call-nope", true, "") {
				t.Error("confirmed an unknown id")
			}
			if !f.k.ConfirmToolUse(pending[0].ToolID, approve, "reviewed") {
				t.Fatal("ConfirmToolUse found nothing pending")
			}
			res := <-done
			if approve != (res.ExitCode == 0) || fx.runs.Load() != map[bool]int64{true: 1, false: 0}[approve] {
				t.Fatalf("approve=%v: %+v runs=%d", approve, res, fx.runs.Load())
			}
			if len(f.k.PendingConfirmations()) != 0 {
				t.Error("pending list not emptied")
			}
			rec := f.rec.ofType(kernel.EventConfirmationReceived)
			if len(rec) != 1 || rec[0].Payload["approved"] != approve || rec[0].Payload["reason"] != "reviewed" {
				t.Errorf("confirmation_received = %+v", rec)
			}
		})
	}
}

// TestDeltasBeforeEndAndSanitised: deltas are sanitised and arrive before
// tool_end; a delta from a goroutine the tool leaked after returning is
// dropped.
func TestDeltasBeforeEndAndSanitised(t *testing.T) {
	fx := newEffect("fx")
	late := make(chan struct{})
	lateDone := make(chan struct{})
	fx.onRun = func(ctx context.Context, call *kernel.Call) (*kernel.Result, error) {
		call.Emit("token=SECRET part 1")
		call.Emit("part 2")
		go func() {
			defer close(lateDone)
			<-late
			call.Emit("too late SECRET")
		}()
		return kernel.OK("out SECRET", nil), nil
	}
	f := newKernel(t, kernel.Governance{Security: kernel.SanitizerFunc(func(s string) string { return strings.ReplaceAll(s, "SECRET", "***") })}, []kernel.Tool{fx})
	res := f.call(t, kernel.OriginHostTrusted, "fx", `{"msg":"x"}`)
	close(late)
	<-lateDone
	if res.Output != "out ***" {
		t.Errorf("output %q not sanitised", res.Output)
	}
	id := f.lastID(t)
	types := f.rec.types(id)
	want := []string{kernel.EventToolRequestBound, kernel.EventToolExecutionStart, kernel.EventToolOutputDelta, kernel.EventToolOutputDelta, kernel.EventToolEnd}
	if !slices.Equal(types, want) {
		t.Errorf("events %v, want %v", types, want)
	}
	for _, e := range f.rec.ofType(kernel.EventToolOutputDelta) {
		if strings.Contains(e.Payload["delta"].(string), "SECRET") {
			t.Errorf("delta not sanitised: %v", e.Payload)
		}
	}
}

// TestArtifactStore: an output over 100 KiB keeps its head and points to
// the artifact holding the full text.
func TestArtifactStore(t *testing.T) {
	fx := newEffect("fx")
	big := strings.Repeat("0123456789abcdef", 10<<10) // 160 KiB
	fx.onRun = func(context.Context, *kernel.Call) (*kernel.Result, error) { return kernel.OK(big, nil), nil }
	f := newKernel(t, kernel.Governance{}, []kernel.Tool{fx})
	res := f.call(t, kernel.OriginAgent, "fx", `{"msg":"x"}`)
	if !strings.HasPrefix(res.Output, big[:kernel.MaxOutputBytes]) || len(res.Output) > kernel.MaxOutputBytes+200 {
		t.Fatalf("output not cut to the 100 KiB head: %d bytes", len(res.Output))
	}
	meta, _ := res.Metadata["artifact"].(map[string]any)
	uri, _ := meta["artifact_uri"].(string)
	if !strings.HasPrefix(uri, "a3s://tool-output/fx/") || !strings.HasSuffix(res.Output, "[Full output artifact: "+uri+"]") {
		t.Fatalf("no artifact pointer: meta=%v tail=%q", meta, res.Output[len(res.Output)-100:])
	}
	a, ok := f.k.Artifact(uri)
	if !ok || a.Content != big || a.OriginalBytes != len(big) || a.ShownBytes != kernel.MaxOutputBytes {
		t.Fatalf("artifact %v ok=%v", a.URI, ok)
	}
	if _, ok := f.k.Artifact("a3s://tool-output/fx/nope"); ok {
		t.Error("unknown artifact found")
	}
}

// TestArtifactEviction: the store keeps at most MaxArtifacts, oldest out.
func TestArtifactEviction(t *testing.T) {
	fx := newEffect("fx")
	fx.onRun = func(_ context.Context, call *kernel.Call) (*kernel.Result, error) {
		var a struct{ Msg string }
		json.Unmarshal(call.Args, &a)
		return kernel.OK(strings.Repeat(a.Msg, kernel.MaxOutputBytes+1), nil), nil
	}
	f := newKernel(t, kernel.Governance{Artifacts: kernel.ArtifactLimits{MaxArtifacts: 2}}, []kernel.Tool{fx})
	var uris []string
	for _, m := range []string{"a", "b", "c"} {
		res := f.call(t, kernel.OriginAgent, "fx", `{"msg":"`+m+`"}`)
		uris = append(uris, res.Metadata["artifact"].(map[string]any)["artifact_uri"].(string))
	}
	for i, want := range []bool{false, true, true} {
		if _, ok := f.k.Artifact(uris[i]); ok != want {
			t.Errorf("artifact %d present=%v, want %v", i, ok, want)
		}
	}
}

// TestRecursionGuard: an orchestrator already on the stack cannot be
// called again, directly or through another orchestrator.
func TestRecursionGuard(t *testing.T) {
	fx := newEffect("fx")
	f := newKernel(t, kernel.Governance{}, []kernel.Tool{fx, orchestrator{"program"}, orchestrator{"batch"}})
	cases := []struct {
		name, args string
		wantOK     bool
		wantMsg    string
	}{
		{"program calls a tool", `{"tool":"program","args":{"tool":"fx","args":{"msg":"x"}}}`, true, ""},
		{"program calls program", `{"tool":"program","args":{"tool":"program","args":{"tool":"fx","args":{"msg":"x"}}}}`, false, "recursive program calls are not allowed"},
		{"program → batch → program", `{"tool":"program","args":{"tool":"batch","args":{"tool":"program","args":{"tool":"fx","args":{"msg":"x"}}}}}`, false, "recursive program calls are not allowed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var a struct {
				Tool string
				Args json.RawMessage
			}
			json.Unmarshal([]byte(tc.args), &a)
			res := f.call(t, kernel.OriginAgent, a.Tool, string(a.Args))
			if (res.ExitCode == 0) != tc.wantOK || !strings.Contains(res.Output, tc.wantMsg) {
				t.Fatalf("got %+v", res)
			}
		})
	}
	// A tool that escapes the Invoker with the kernel's public Invoke and
	// its own context is still seen as nested, on the same stack.
	esc := newEffect("escape")
	var k *kernel.Kernel
	esc.onRun = func(ctx context.Context, call *kernel.Call) (*kernel.Result, error) {
		r, err := k.Invoke(ctx, kernel.Request{Tool: "program", Args: json.RawMessage(`{"tool":"fx","args":{"msg":"x"}}`), Origin: kernel.OriginHostTrusted})
		if err != nil {
			return nil, err
		}
		return r, nil
	}
	f2 := newKernel(t, kernel.Governance{Permission: kernel.PermissionPolicy{Allow: []string{"escape", "program"}, Deny: []string{"fx"}}},
		[]kernel.Tool{newEffect("fx"), orchestrator{"program"}}, esc)
	k = f2.k
	res := f2.call(t, kernel.OriginHostTrusted, "escape", `{"msg":"x"}`)
	if kindOf(res) != kernel.ErrHookDenied {
		t.Fatalf("escaped call gained trusted authority: %+v", res)
	}
}

// TestNestedOrigins: built-in orchestrators under a host call pass on the
// host policy; under an agent call, and from extension tools, children are
// plain nested calls governed by the policy.
func TestNestedOrigins(t *testing.T) {
	policy := kernel.Governance{Permission: kernel.PermissionPolicy{Allow: []string{"program", "ext"}, Deny: []string{"fx"}}}
	ext := orchestrator{"ext"}
	cases := []struct {
		name      string
		origin    kernel.Origin
		tool      string
		wantOK    bool
		wantChild kernel.Origin
	}{
		{"trusted host → program → fx", kernel.OriginHostTrusted, "program", true, kernel.OriginHostNestedTrusted},
		{"governed host → program → fx", kernel.OriginHostGoverned, "program", false, kernel.OriginHostNestedGoverned},
		{"agent → program → fx", kernel.OriginAgent, "program", false, kernel.OriginNested},
		{"trusted host → extension → fx", kernel.OriginHostTrusted, "ext", false, kernel.OriginNested},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fx := newEffect("fx")
			f := newKernel(t, policy, []kernel.Tool{fx, orchestrator{"program"}}, ext)
			res := f.call(t, tc.origin, tc.tool, `{"tool":"fx","args":{"msg":"x"}}`)
			if (res.ExitCode == 0) != tc.wantOK {
				t.Fatalf("got %+v", res)
			}
			var child, parent kernel.Event
			for _, e := range f.rec.ofType(kernel.EventToolEnd) {
				if e.Payload["name"] == "fx" {
					child = e
				} else {
					parent = e
				}
			}
			if child.Origin != tc.wantChild || child.ParentID == "" || child.ParentID != parent.InvocationID {
				t.Errorf("child origin %q parent %q (outer %q), want origin %q", child.Origin, child.ParentID, parent.InvocationID, tc.wantChild)
			}
		})
	}
	t.Run("public Invoke refuses host-nested origins", func(t *testing.T) {
		f := newKernel(t, kernel.Governance{}, []kernel.Tool{newEffect("fx")})
		_, err := f.k.Invoke(context.Background(), kernel.Request{Tool: "fx", Args: json.RawMessage(`{"msg":"x"}`), Origin: kernel.OriginHostNestedTrusted})
		if !errors.Is(err, kernel.ErrOrigin) {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestQueueNestedNoDeadlock: with one queue slot, an orchestrator's nested
// call runs inside its slot instead of waiting for it.
func TestQueueNestedNoDeadlock(t *testing.T) {
	f := newKernel(t, kernel.Governance{Queue: kernel.QueueConfig{MaxConcurrency: 1}, ToolTimeout: 5 * time.Second}, []kernel.Tool{newEffect("fx"), orchestrator{"program"}})
	res := f.call(t, kernel.OriginHostTrusted, "program", `{"tool":"fx","args":{"msg":"inner"}}`)
	if res.ExitCode != 0 || res.Output != "inner" {
		t.Fatalf("got %+v", res)
	}
	// And the queue does bound concurrency: two sleepers take two turns.
	fx := newEffect("slow")
	var cur, peak int64
	var mu sync.Mutex
	fx.onRun = func(ctx context.Context, call *kernel.Call) (*kernel.Result, error) {
		mu.Lock()
		cur++
		peak = max(peak, cur)
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		cur--
		mu.Unlock()
		return kernel.OK("", nil), nil
	}
	f2 := newKernel(t, kernel.Governance{Queue: kernel.QueueConfig{MaxConcurrency: 1}}, []kernel.Tool{fx})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { f2.call(t, kernel.OriginAgent, "slow", `{"msg":"x"}`) })
	}
	wg.Wait()
	if peak != 1 {
		t.Errorf("peak concurrency %d with one slot", peak)
	}
}

// TestCloseCancelsHostDirect: closing cancels a running host-direct call,
// which ends as cancelled; later calls fail with ErrClosed.
func TestCloseCancelsHostDirect(t *testing.T) {
	f := newKernel(t, kernel.Governance{}, []kernel.Tool{newEffect("fx")})
	done := make(chan *kernel.Result, 1)
	go func() {
		res, _ := f.k.Invoke(context.Background(), kernel.Request{Tool: "fx", Args: json.RawMessage(`{"msg":"x","sleep_ms":60000}`), Origin: kernel.OriginHostTrusted})
		done <- res
	}()
	for len(f.k.Active()) == 0 {
		time.Sleep(time.Millisecond)
	}
	if a := f.k.Active(); a[0].Name != "fx" || a[0].Origin != kernel.OriginHostTrusted {
		t.Errorf("active = %+v", a)
	}
	f.k.Close()
	res := <-done
	if kindOf(res) != kernel.ErrCancelled {
		t.Fatalf("got %+v", res)
	}
	if len(f.k.Active()) != 0 {
		t.Error("still active after close")
	}
	if _, err := f.k.Invoke(context.Background(), kernel.Request{Tool: "fx", Args: json.RawMessage(`{"msg":"x"}`)}); !errors.Is(err, kernel.ErrClosed) {
		t.Errorf("after close: %v", err)
	}
}

// TestSettleGrace: a tool that ignores cancellation is abandoned after the
// settle grace; the call still ends as timeout, once.
func TestSettleGrace(t *testing.T) {
	fx := newEffect("stubborn")
	release := make(chan struct{})
	fx.onRun = func(ctx context.Context, call *kernel.Call) (*kernel.Result, error) {
		<-release
		call.Emit("after the end")
		return kernel.OK("late", nil), nil
	}
	defer close(release)
	f := newKernel(t, kernel.Governance{ToolTimeout: 10 * time.Millisecond}, []kernel.Tool{fx})
	res := f.call(t, kernel.OriginAgent, "stubborn", `{"msg":"x"}`)
	if kindOf(res) != kernel.ErrTimeout || res.ErrorKind.DurationMs != 10 || res.ErrorKind.Op != "stubborn" {
		t.Fatalf("got %+v", res)
	}
}

// TestPanicIsFailure: a panicking tool is a failed result, not a crash.
func TestPanicIsFailure(t *testing.T) {
	fx := newEffect("fx")
	fx.onRun = func(context.Context, *kernel.Call) (*kernel.Result, error) { panic("kaboom") }
	f := newKernel(t, kernel.Governance{}, []kernel.Tool{fx})
	res := f.call(t, kernel.OriginAgent, "fx", `{"msg":"x"}`)
	if res.ExitCode != 1 || !strings.Contains(res.Output, "kaboom") {
		t.Fatalf("got %+v", res)
	}
}

// TestSchemaLimits: a schema over 256 KiB and a broken schema are refused
// (and cached once each); errors are capped at 8 lines and 4 KiB.
func TestSchemaLimits(t *testing.T) {
	huge := newEffect("huge")
	huge.schema = `{"type":"object","description":"` + strings.Repeat("x", kernel.MaxSchemaBytes) + `"}`
	broken := newEffect("broken")
	broken.schema = `{"type":"nonsense"}`
	many := newEffect("many")
	props := []string{}
	req := []string{}
	for i := range 20 {
		n := "p" + string(rune('a'+i))
		props = append(props, `"`+n+`":{"type":"string"}`)
		req = append(req, `"`+n+`"`)
	}
	many.schema = `{"type":"object","properties":{` + strings.Join(props, ",") + `}}`
	f := newKernel(t, kernel.Governance{}, []kernel.Tool{huge, broken, many})
	for _, name := range []string{"huge", "broken", "huge", "broken"} {
		res := f.call(t, kernel.OriginAgent, name, `{"msg":"x"}`)
		if kindOf(res) != kernel.ErrInvalidArgument || !strings.Contains(res.Output, "schema") {
			t.Errorf("%s: %+v", name, res.Output)
		}
	}
	if n := f.k.SchemaCacheLen(); n != 2 {
		t.Errorf("schema cache has %d entries, want 2", n)
	}
	bad := map[string]int{}
	for i := range 20 {
		bad["p"+string(rune('a'+i))] = i
	}
	b, _ := json.Marshal(bad)
	res := f.call(t, kernel.OriginAgent, "many", string(b))
	lines := strings.Count(res.Output, "\n- at ")
	if kindOf(res) != kernel.ErrInvalidArgument || lines != kernel.MaxSchemaErrors || !strings.Contains(res.Output, "and 12 more") || len(res.Output) > kernel.MaxSchemaErrorBytes {
		t.Errorf("%d error lines, %d bytes: %s", lines, len(res.Output), res.Output)
	}
}

// TestPermissionRules covers the rule grammar.
func TestPermissionRules(t *testing.T) {
	p := kernel.PermissionPolicy{
		Deny:  []string{"bash(command:rm *)", "write(path:secret/**)", "mcp__evil__*"},
		Allow: []string{"read", "write(path:src/**)", "bash(git *)", "Grep"},
		Ask:   []string{"write"},
	}
	cases := []struct {
		name, tool, args string
		want             kernel.Decision
	}{
		{"plain allow", "read", `{"file_path":"a"}`, kernel.DecisionAllow},
		{"case-insensitive name", "grep", `{"pattern":"x"}`, kernel.DecisionAllow},
		{"path allow", "write", `{"file_path":"src/a/b.go","content":""}`, kernel.DecisionAllow},
		{"path ask", "write", `{"file_path":"docs/a.md","content":""}`, kernel.DecisionAsk},
		{"path deny", "write", `{"file_path":"secret/k","content":""}`, kernel.DecisionDeny},
		{"command deny", "bash", `{"command":"rm -rf x"}`, kernel.DecisionDeny},
		{"bare command allow", "bash", `{"command":"git status"}`, kernel.DecisionAllow},
		{"default ask", "bash", `{"command":"ls"}`, kernel.DecisionAsk},
		{"name glob deny", "mcp__evil__x", `{}`, kernel.DecisionDeny},
		{"malformed args default", "edit", `not json`, kernel.DecisionAsk},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got, _ := p.Decide(tc.tool, json.RawMessage(tc.args)); got != tc.want {
				t.Errorf("Decide = %s, want %s", got, tc.want)
			}
		})
	}
}

// TestConfigValidation: bad governance fails at construction.
func TestConfigValidation(t *testing.T) {
	for name, g := range map[string]kernel.Governance{
		"negative timeout":   {ToolTimeout: -1},
		"bad action":         {Confirmation: kernel.ConfirmationPolicy{TimeoutAction: "maybe"}},
		"bad default":        {Permission: kernel.PermissionPolicy{DefaultDecision: "perhaps"}},
		"hook without id":    {Hooks: []kernel.Hook{{Event: kernel.HookPreToolUse, Handler: answer(kernel.HookResponse{})}}},
		"hook bad event":     {Hooks: []kernel.Hook{{ID: "h", Event: "sometimes", Handler: answer(kernel.HookResponse{})}}},
		"negative queue":     {Queue: kernel.QueueConfig{MaxConcurrency: -2}},
		"negative budget to": {BudgetTimeout: -1},
	} {
		if _, err := kernel.New(kernel.Config{Registry: kernel.NewRegistry(), Governance: g}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
