package core_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/internal/testkit"
	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/memfs"
)

// snapshot reads every file of the workspace.
var snapshot = testkit.Snapshot

// TestRejectedCallsChangeNothing is a property test: random calls that
// must be rejected (bad arguments, policy deny, hook block, over budget,
// path escape, batches of those) leave the memfs workspace byte-identical;
// valid writes in between change it exactly as a model predicts.
func TestRejectedCallsChangeNothing(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 42))
	ctx := context.Background()
	ws, err := workspace.New(memfs.New())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"secret/key.txt", "locked/frozen.txt", "a.txt"} {
		if _, err := ws.WriteFile(ctx, p, []byte("original "+p)); err != nil {
			t.Fatal(err)
		}
	}
	s, err := core.New(core.Options{Workspace: ws, Governance: kernel.Governance{
		Permission: kernel.PermissionPolicy{Deny: []string{"write(path:secret/**)"}, Allow: []string{"*"}},
		Hooks: []kernel.Hook{{ID: "lock", Event: kernel.HookPreToolUse, Matcher: kernel.HookMatcher{PathPattern: "locked/**"},
			Handler: func(context.Context, kernel.HookRequest) (kernel.HookResponse, error) {
				return kernel.HookResponse{Action: kernel.HookBlock, Reason: "locked"}, nil
			}}},
		BudgetGuard: kernel.BudgetGuardFunc(func(_ context.Context, r kernel.BudgetRequest) (kernel.BudgetDecision, error) {
			if strings.Contains(string(r.Args), "EXPENSIVE") {
				return kernel.BudgetDecision{Action: kernel.BudgetDeny, Message: "over budget"}, nil
			}
			return kernel.BudgetDecision{}, nil
		}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	w := func(path any, content any) string {
		b, _ := json.Marshal(map[string]any{"file_path": path, "content": content})
		return string(b)
	}
	paths := []string{"a.txt", "dir/b.txt", "c/d/e.txt"}
	rejected := []struct {
		kind string
		gen  func() (kernel.Origin, string, string)
	}{
		{"bad args: wrong type", func() (kernel.Origin, string, string) { return kernel.OriginAgent, "write", w(7, "x") }},
		{"bad args: missing content", func() (kernel.Origin, string, string) {
			return kernel.OriginHostTrusted, "write", `{"file_path":"a.txt"}`
		}},
		{"bad args: extra field", func() (kernel.Origin, string, string) {
			return kernel.OriginAgent, "write", `{"file_path":"a.txt","content":"x","mode":"evil"}`
		}},
		{"bad args: not JSON", func() (kernel.Origin, string, string) { return kernel.OriginAgent, "write", `{"file_path":"a.txt",` }},
		{"policy deny", func() (kernel.Origin, string, string) {
			return kernel.OriginHostGoverned, "write", w("secret/key.txt", fmt.Sprint("overwrite ", rng.IntN(1000)))
		}},
		{"hook block (trusted too)", func() (kernel.Origin, string, string) {
			return []kernel.Origin{kernel.OriginHostTrusted, kernel.OriginAgent}[rng.IntN(2)], "write", w("locked/frozen.txt", "thaw")
		}},
		{"over budget", func() (kernel.Origin, string, string) {
			return kernel.OriginHostTrusted, "write", w(paths[rng.IntN(len(paths))], "EXPENSIVE "+fmt.Sprint(rng.IntN(1000)))
		}},
		{"path escape", func() (kernel.Origin, string, string) {
			p := []string{"../escape.txt", "/etc/passwd", "a/../../x.txt", `..\win.txt`, "C:/x.txt", "dir/../../../x"}[rng.IntN(6)]
			return kernel.OriginHostTrusted, "write", w(p, "escaped")
		}},
		{"batch of rejected calls", func() (kernel.Origin, string, string) {
			return kernel.OriginAgent, "batch", `{"invocations":[` +
				`{"tool":"write","args":` + w("secret/key.txt", "x") + `},` +
				`{"tool":"write","args":` + w("../up.txt", "x") + `},` +
				`{"tool":"write","args":` + w("a.txt", "EXPENSIVE") + `},` +
				`{"tool":"write","args":{"file_path":"a.txt"}}]}`
		}},
		{"batch over 32", func() (kernel.Origin, string, string) {
			items := make([]string, 33)
			for i := range items {
				items[i] = `{"tool":"write","args":` + w(fmt.Sprintf("n%d.txt", i), "x") + `}`
			}
			return kernel.OriginHostTrusted, "batch", `{"invocations":[` + strings.Join(items, ",") + `]}`
		}},
	}

	model := snapshot(t, ws)
	counts := map[string]int{}
	for i := range 300 {
		if rng.IntN(4) == 0 {
			p, c := paths[rng.IntN(len(paths))], fmt.Sprintf("v%d-%d", i, rng.IntN(1e6))
			res, err := s.Kernel().Invoke(ctx, kernel.Request{Tool: "write", Args: json.RawMessage(w(p, c)), Origin: kernel.OriginAgent})
			if err != nil || res.ExitCode != 0 {
				t.Fatalf("valid write %s failed: %v %+v", p, err, res)
			}
			model[p] = c
			for d := p; strings.Contains(d, "/"); {
				d = d[:strings.LastIndex(d, "/")]
				model[d+"/"] = ""
			}
			if got := snapshot(t, ws); !maps.Equal(got, model) {
				t.Fatalf("after valid write: workspace %v, model %v", got, model)
			}
			continue
		}
		rc := rejected[rng.IntN(len(rejected))]
		origin, tool, args := rc.gen()
		before := snapshot(t, ws)
		res, err := s.Kernel().Invoke(ctx, kernel.Request{Tool: tool, Args: json.RawMessage(args), Origin: origin})
		if err != nil {
			t.Fatalf("%s: %v", rc.kind, err)
		}
		if res.ExitCode == 0 {
			t.Fatalf("%s (%s %s) succeeded: %s", rc.kind, origin, args, res.Output)
		}
		if after := snapshot(t, ws); !maps.Equal(before, after) {
			t.Fatalf("%s (%s %s) changed the workspace:\nbefore %v\nafter  %v", rc.kind, origin, args, before, after)
		}
		counts[rc.kind]++
	}
	for _, rc := range rejected {
		if counts[rc.kind] == 0 {
			t.Errorf("no %q case was generated", rc.kind)
		}
	}
	if v := s.Kernel().LifecycleViolations(); v != 0 {
		t.Errorf("%d lifecycle violations", v)
	}
}

// TestSessionGovernance: the session methods reach the kernel: hooks,
// budget guard, the confirmation pending list, artifacts; batch is always
// registered; Close cancels a running host-direct call.
func TestSessionGovernance(t *testing.T) {
	ctx := context.Background()
	s, err := core.New(core.Options{Governance: kernel.Governance{
		Permission:   kernel.PermissionPolicy{Ask: []string{"write"}, DefaultDecision: kernel.DecisionAllow},
		Confirmation: kernel.ConfirmationPolicy{Enabled: true},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.Contains(strings.Join(s.ToolNames(), ","), "batch") {
		t.Fatalf("batch not registered: %v", s.ToolNames())
	}
	if err := s.RegisterHook(kernel.Hook{ID: "no-tmp", Event: kernel.HookPreToolUse, Matcher: kernel.HookMatcher{PathPattern: "tmp/**"},
		Handler: func(context.Context, kernel.HookRequest) (kernel.HookResponse, error) {
			return kernel.HookResponse{Action: kernel.HookBlock, Reason: "no tmp"}, nil
		}}); err != nil {
		t.Fatal(err)
	}
	res, err := s.WriteFile(ctx, "tmp/x", "y")
	if err != nil || res.ErrorKind == nil || res.ErrorKind.Reason != "no tmp" {
		t.Fatalf("hook: %v %+v", err, res)
	}
	s.SetBudgetGuard(kernel.BudgetGuardFunc(func(context.Context, kernel.BudgetRequest) (kernel.BudgetDecision, error) {
		return kernel.BudgetDecision{Action: kernel.BudgetDeny}, nil
	}), 0)
	if res, _ := s.WriteFile(ctx, "a", "b"); res.ErrorKind == nil || !strings.Contains(res.ErrorKind.Reason, "Budget exhausted") {
		t.Fatalf("budget: %+v", res)
	}
	s.SetBudgetGuard(nil, 0)

	done := make(chan *kernel.Result, 1)
	go func() {
		r, _ := s.GovernedTool(ctx, "write", map[string]any{"file_path": "ok.txt", "content": "z"})
		done <- r
	}()
	var pend []kernel.PendingConfirmation
	for len(pend) == 0 {
		select {
		case r := <-done:
			t.Fatalf("governed write ended without confirmation: %+v", r)
		case <-time.After(time.Millisecond):
		}
		pend = s.PendingConfirmations()
	}
	if _, _, err := s.Workspace().ReadFile(ctx, "ok.txt"); err == nil {
		t.Fatal("written before confirmation")
	}
	if !s.ConfirmToolUse(pend[0].ToolID, true, "") {
		t.Fatal("confirm failed")
	}
	if r := <-done; r.ExitCode != 0 {
		t.Fatalf("approved call failed: %+v", r)
	}
	if _, ok := s.Artifact("a3s://tool-output/x/y"); ok {
		t.Error("unknown artifact found")
	}
}
