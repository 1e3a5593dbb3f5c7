package kernel_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/kernel"
)

// pathGuard blocks a call whose file_path starts with secrets/, and
// records every file_path it was shown.
type pathGuard struct {
	mu   sync.Mutex
	seen []string
}

func (g *pathGuard) handler(_ context.Context, req kernel.HookRequest) (kernel.HookResponse, error) {
	var a struct {
		FilePath string `json:"file_path"`
	}
	_ = json.Unmarshal(req.Args, &a)
	g.mu.Lock()
	g.seen = append(g.seen, a.FilePath)
	g.mu.Unlock()
	if strings.HasPrefix(a.FilePath, "secrets/") {
		return kernel.HookResponse{Action: kernel.HookBlock, Reason: "secrets are guarded"}, nil
	}
	return kernel.HookResponse{}, nil
}

func rewriteTo(args string) kernel.HookHandler {
	return answer(kernel.HookResponse{Modified: json.RawMessage(args)})
}

// TestEveryGuardSeesTheFinalArguments: finding 4. After any pre-hook
// rewrites the arguments, the chain runs again from the first hook until a
// pass rewrites nothing, so every hook (an earlier one that already said
// continue included), the permission policy and confirmation judge the
// arguments the tool runs with.
func TestEveryGuardSeesTheFinalArguments(t *testing.T) {
	const secret = `{"msg":"x","file_path":"secrets/k.txt"}`
	cases := []struct {
		name    string
		hooks   func(g *pathGuard) []kernel.Hook
		policy  kernel.PermissionPolicy
		wantOut string // "" means the call runs
	}{
		// The case: the guard answered continue for a.txt, a later hook
		// moved the call to secrets/.
		{name: "a later hook rewrites past an earlier guard", wantOut: "secrets are guarded",
			hooks: func(g *pathGuard) []kernel.Hook {
				return []kernel.Hook{hook("guard", kernel.HookPreToolUse, kernel.HookMatcher{}, g.handler),
					hook("redirect", kernel.HookPreToolUse, kernel.HookMatcher{}, rewriteTo(secret))}
			}},
		{name: "the last of several hooks rewrites", wantOut: "secrets are guarded",
			hooks: func(g *pathGuard) []kernel.Hook {
				return []kernel.Hook{hook("guard", kernel.HookPreToolUse, kernel.HookMatcher{}, g.handler),
					hook("noop", kernel.HookPreToolUse, kernel.HookMatcher{}, answer(kernel.HookResponse{})),
					hook("redirect", kernel.HookPreToolUse, kernel.HookMatcher{Tool: "fx"}, rewriteTo(secret))}
			}},
		{name: "a rewrite answered with skip does not skip the earlier guard", wantOut: "secrets are guarded",
			hooks: func(g *pathGuard) []kernel.Hook {
				return []kernel.Hook{hook("guard", kernel.HookPreToolUse, kernel.HookMatcher{}, g.handler),
					hook("redirect", kernel.HookPreToolUse, kernel.HookMatcher{}, answer(kernel.HookResponse{Action: kernel.HookSkip, Modified: json.RawMessage(secret)}))}
			}},
		{name: "a rewrite into a path the policy denies", wantOut: `permission rule "fx(path:secrets/**)"`,
			policy: kernel.PermissionPolicy{Deny: []string{"fx(path:secrets/**)"}, Allow: []string{"*"}},
			hooks: func(*pathGuard) []kernel.Hook {
				return []kernel.Hook{hook("redirect", kernel.HookPreToolUse, kernel.HookMatcher{}, rewriteTo(secret))}
			}},
		{name: "a rewrite into the denied path with a dot-dot spelling", wantOut: `permission rule "fx(path:secrets/**)"`,
			policy: kernel.PermissionPolicy{Deny: []string{"fx(path:secrets/**)"}, Allow: []string{"*"}},
			hooks: func(*pathGuard) []kernel.Hook {
				return []kernel.Hook{hook("redirect", kernel.HookPreToolUse, kernel.HookMatcher{}, rewriteTo(`{"msg":"x","file_path":"a/../secrets/k.txt"}`))}
			}},
		{name: "an idempotent rewriter settles (key order and spacing aside)",
			hooks: func(g *pathGuard) []kernel.Hook {
				return []kernel.Hook{hook("guard", kernel.HookPreToolUse, kernel.HookMatcher{}, g.handler),
					hook("redirect", kernel.HookPreToolUse, kernel.HookMatcher{}, rewriteTo(`{ "file_path" : "b.txt", "msg":"x" }`))}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := &pathGuard{}
			fx := newEffect("fx")
			gov := kernel.Governance{Hooks: tc.hooks(g), Permission: tc.policy}
			f := newKernel(t, gov, []kernel.Tool{fx})
			res := f.call(t, kernel.OriginAgent, "fx", `{"msg":"x","file_path":"a.txt"}`)
			if tc.wantOut != "" {
				if res.ExitCode == 0 || kindOf(res) != kernel.ErrHookDenied || !strings.Contains(res.Output, tc.wantOut) || fx.runs.Load() != 0 {
					t.Fatalf("exit %d %q, runs %d; want denial %q", res.ExitCode, res.Output, fx.runs.Load(), tc.wantOut)
				}
				return
			}
			if res.ExitCode != 0 || fx.runs.Load() != 1 {
				t.Fatalf("exit %d %q", res.ExitCode, res.Output)
			}
			ran := fx.lastArg.Load().(json.RawMessage)
			var a struct {
				FilePath string `json:"file_path"`
			}
			_ = json.Unmarshal(ran, &a)
			if last := g.seen[len(g.seen)-1]; last != a.FilePath {
				t.Fatalf("the guard last saw %q, the tool ran with %q", last, a.FilePath)
			}
		})
	}
}

// TestConfirmationSeesTheFinalArguments: the human confirms the rewritten
// call, not the one the model made.
func TestConfirmationSeesTheFinalArguments(t *testing.T) {
	var got json.RawMessage
	conf := confirmFunc(func(_ context.Context, req kernel.ConfirmRequest) (kernel.ConfirmDecision, error) {
		got = req.Args
		return kernel.ConfirmDecision{Approved: true}, nil
	})
	fx := newEffect("fx")
	f := newKernel(t, kernel.Governance{Confirmer: conf, Permission: kernel.PermissionPolicy{Ask: []string{"fx"}},
		Hooks: []kernel.Hook{hook("redirect", kernel.HookPreToolUse, kernel.HookMatcher{}, rewriteTo(`{"msg":"x","file_path":"b.txt"}`))}}, []kernel.Tool{fx})
	if res := f.call(t, kernel.OriginAgent, "fx", `{"msg":"x","file_path":"a.txt"}`); res.ExitCode != 0 {
		t.Fatalf("exit %d %q", res.ExitCode, res.Output)
	}
	if !strings.Contains(string(got), "b.txt") {
		t.Fatalf("confirmation saw %s", got)
	}
	for _, e := range f.rec.ofType(kernel.EventConfirmationRequired) {
		if !strings.Contains(string(e.Payload["args"].(json.RawMessage)), "b.txt") {
			t.Errorf("confirmation_required shows %s", e.Payload["args"])
		}
	}
}

// TestRewritingHooksThatNeverSettle: two hooks rewriting against each other
// (or one that changes what it already changed) fail the call clearly,
// naming them, after MaxHookRounds passes: no loop, nothing runs.
func TestRewritingHooksThatNeverSettle(t *testing.T) {
	n := 0
	var mu sync.Mutex
	counter := func(_ context.Context, req kernel.HookRequest) (kernel.HookResponse, error) {
		mu.Lock()
		defer mu.Unlock()
		n++
		return kernel.HookResponse{Modified: json.RawMessage(`{"msg":"v` + strings.Repeat("x", n) + `"}`)}, nil
	}
	cases := []struct {
		name  string
		hooks []kernel.Hook
		names string
	}{
		{"two hooks rewrite alternately", []kernel.Hook{
			hook("ping", kernel.HookPreToolUse, kernel.HookMatcher{}, rewriteTo(`{"msg":"ping"}`)),
			hook("pong", kernel.HookPreToolUse, kernel.HookMatcher{}, rewriteTo(`{"msg":"pong"}`))}, "ping, pong"},
		{"one hook never settles", []kernel.Hook{hook("grow", kernel.HookPreToolUse, kernel.HookMatcher{}, counter)}, "grow"},
		{"a rewrite that moves the call between two hooks' matchers", []kernel.Hook{
			hook("to-b", kernel.HookPreToolUse, kernel.HookMatcher{PathPattern: "a.txt"}, rewriteTo(`{"msg":"x","file_path":"b.txt"}`)),
			hook("to-a", kernel.HookPreToolUse, kernel.HookMatcher{PathPattern: "b.txt"}, rewriteTo(`{"msg":"x","file_path":"a.txt"}`))}, "to-b, to-a"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fx := newEffect("fx")
			f := newKernel(t, kernel.Governance{Hooks: tc.hooks}, []kernel.Tool{fx})
			start := time.Now()
			res := f.call(t, kernel.OriginAgent, "fx", `{"msg":"x","file_path":"a.txt"}`)
			if res.ExitCode == 0 || kindOf(res) != kernel.ErrHookDenied || fx.runs.Load() != 0 ||
				!strings.Contains(res.Output, "hooks "+tc.names+" were still rewriting the arguments after 8 passes") {
				t.Fatalf("exit %d %q runs %d", res.ExitCode, res.Output, fx.runs.Load())
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Fatalf("took %v", d)
			}
		})
	}
}

// TestRewriteInsideANestedCall: a batch child's arguments rewritten into a
// guarded path are caught by the guard, as at the top level.
func TestRewriteInsideANestedCall(t *testing.T) {
	g := &pathGuard{}
	write := newEffect("write")
	f := newKernel(t, kernel.Governance{Hooks: []kernel.Hook{
		hook("guard", kernel.HookPreToolUse, kernel.HookMatcher{}, g.handler),
		hook("redirect", kernel.HookPreToolUse, kernel.HookMatcher{Tool: "write"}, rewriteTo(`{"msg":"x","file_path":"secrets/k.txt"}`)),
	}}, []kernel.Tool{write, fan{"fan"}})
	res := f.call(t, kernel.OriginAgent, "fan", mustJSON(map[string]any{"calls": calls("write", 2, map[string]any{"msg": "x", "file_path": "a.txt"})}))
	if write.runs.Load() != 0 || strings.Count(res.Output, "write:1:Tool write was denied: secrets are guarded") != 2 {
		t.Fatalf("runs %d output %q", write.runs.Load(), res.Output)
	}
}
