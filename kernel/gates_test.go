package kernel_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/workspace"
)

// TestPermissionPathsNormalised: path rules and hook path patterns see the
// path the workspace resolves, every path the call touches, and refuse to
// be bypassed by a spelling the resolver rejects.
func TestPermissionPathsNormalised(t *testing.T) {
	p := kernel.PermissionPolicy{
		Deny:  []string{"write(path:secrets/**)", "read(path:secrets/**)"},
		Allow: []string{"write(path:b.txt)", "read(path:src/**)", "edit(./docs/**)"},
	}
	w := func(path string) string {
		b, _ := json.Marshal(map[string]string{"file_path": path, "content": "x"})
		return string(b)
	}
	cases := []struct {
		name, tool, args string
		want             kernel.Decision
	}{
		{"plain deny", "write", w("secrets/k.txt"), kernel.DecisionDeny},
		{"dot-dot into the denied dir", "write", w("x/../secrets/k.txt"), kernel.DecisionDeny},
		{"dot segments", "write", w("././secrets/k.txt"), kernel.DecisionDeny},
		{"backslashes", "write", w(`secrets\k.txt`), kernel.DecisionDeny},
		{"doubled slashes", "write", w("secrets//k.txt"), kernel.DecisionDeny},
		{"dot-dot onto an allowed file", "write", w("q/../b.txt"), kernel.DecisionAllow},
		{"escape matches deny conservatively", "write", w("../secrets/k.txt"), kernel.DecisionDeny},
		{"absolute path matches deny conservatively", "write", w("/etc/passwd"), kernel.DecisionDeny},
		{"unresolvable path is never allowed", "edit", `{"file_path":"../docs/a.md"}`, kernel.DecisionAsk},
		{"bare pattern with ./ prefix", "edit", `{"file_path":"docs/x/../a.md"}`, kernel.DecisionAllow},
		{"read files[] touching a denied path", "read", `{"files":[{"path":"src/a.go"},{"path":"x/../secrets/k.txt"}]}`, kernel.DecisionDeny},
		{"read files[] all allowed", "read", `{"files":[{"path":"src/a.go"},{"path":"./src/b.go"}]}`, kernel.DecisionAllow},
		{"read files[] partly allowed asks", "read", `{"files":[{"path":"src/a.go"},{"path":"docs/b.md"}]}`, kernel.DecisionAsk},
		{"read file_path allowed", "read", `{"file_path":"src/../src/a.go"}`, kernel.DecisionAllow},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got, rule := p.Decide(tc.tool, json.RawMessage(tc.args)); got != tc.want {
				t.Errorf("Decide = %s (rule %q), want %s", got, rule, tc.want)
			}
		})
	}

	m := kernel.HookMatcher{PathPattern: "secrets/**"}
	for _, tc := range []struct {
		name, args string
		want       bool
	}{
		{"dot-dot", `{"file_path":"x/../secrets/k.txt"}`, true},
		{"backslash", `{"path":"secrets\\k.txt"}`, true},
		{"files[]", `{"files":[{"path":"a.txt"},{"path":"./secrets/k.txt"}]}`, true},
		{"escape", `{"file_path":"../secrets/k.txt"}`, true},
		{"other path", `{"file_path":"src/../a.txt"}`, false},
		{"no path", `{"pattern":"secrets/**"}`, false},
	} {
		t.Run("hook "+tc.name, func(t *testing.T) {
			if got := m.Matches("read", json.RawMessage(tc.args)); got != tc.want {
				t.Errorf("Matches = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestInvalidRulesRefused: a rule or matcher that cannot mean anything
// fails at construction (and at RegisterHook), naming what is wrong.
func TestInvalidRulesRefused(t *testing.T) {
	h := func(m kernel.HookMatcher) []kernel.Hook {
		return []kernel.Hook{{ID: "h1", Event: kernel.HookPreToolUse, Matcher: m, Handler: answer(kernel.HookResponse{})}}
	}
	cases := []struct {
		name string
		g    kernel.Governance
		want string
	}{
		{"unclosed parenthesis", kernel.Governance{Permission: kernel.PermissionPolicy{Deny: []string{"write(path:"}}}, `write(path:`},
		{"stray parenthesis", kernel.Governance{Permission: kernel.PermissionPolicy{Allow: []string{"write)"}}}, `write)`},
		{"invalid glob [", kernel.Governance{Permission: kernel.PermissionPolicy{Deny: []string{"read(path:[)"}}}, `invalid glob`},
		{"invalid glob a[", kernel.Governance{Permission: kernel.PermissionPolicy{Ask: []string{"read(a[)"}}}, `ask[0]`},
		{"empty rule", kernel.Governance{Permission: kernel.PermissionPolicy{Deny: []string{"read", " "}}}, `deny[1]`},
		{"empty pattern", kernel.Governance{Permission: kernel.PermissionPolicy{Deny: []string{"read()"}}}, `empty argument pattern`},
		{"unknown decision", kernel.Governance{Permission: kernel.PermissionPolicy{DefaultDecision: "sometimes"}}, `sometimes`},
		{"hook path glob [", kernel.Governance{Hooks: h(kernel.HookMatcher{PathPattern: "["})}, `h1`},
		{"hook path glob a[", kernel.Governance{Hooks: h(kernel.HookMatcher{PathPattern: "a["})}, `pathPattern`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := kernel.New(kernel.Config{Registry: kernel.NewRegistry(), Governance: tc.g})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New error %v, want one naming %q", err, tc.want)
			}
		})
	}
	f := newKernel(t, kernel.Governance{}, []kernel.Tool{newEffect("fx")})
	if err := f.k.RegisterHook(h(kernel.HookMatcher{PathPattern: "src/[a"})[0]); err == nil || !strings.Contains(err.Error(), "src/[a") {
		t.Fatalf("RegisterHook error %v, want one naming the pattern", err)
	}
	good := kernel.PermissionPolicy{Deny: []string{"bash(command:rm [a-z]*)", "write(path:src/**)", "mcp__*", "bash(git:*)"}}
	if err := good.Validate(); err != nil {
		t.Fatalf("valid rules refused: %v", err)
	}
}

// TestEveryFailureHasAKind: path-shape errors are invalid_argument, a tool
// reporting a failure without a kind gets one, a panic is unsupported.
func TestEveryFailureHasAKind(t *testing.T) {
	pe := func(err error) error { return &workspace.PathError{Op: "read", Path: "dir", Err: err} }
	for _, tc := range []struct {
		name string
		err  error
		want kernel.ErrorType
	}{
		{"is a directory", pe(workspace.ErrIsDir), kernel.ErrInvalidArgument},
		{"not a directory", pe(workspace.ErrNotDir), kernel.ErrInvalidArgument},
		{"exists", pe(fs.ErrExist), kernel.ErrInvalidArgument},
		{"bare conflict", pe(workspace.ErrConflict), kernel.ErrVersionConflict},
	} {
		t.Run("KindOf "+tc.name, func(t *testing.T) {
			k := kernel.KindOf(tc.err)
			if k == nil || k.Type != tc.want {
				t.Fatalf("KindOf = %+v, want %s", k, tc.want)
			}
			if k.Type == kernel.ErrInvalidArgument && !strings.Contains(k.Message, "dir") {
				t.Errorf("message %q does not name the path", k.Message)
			}
		})
	}
	for _, tc := range []struct {
		name string
		run  func(context.Context, *kernel.Call) (*kernel.Result, error)
		want kernel.ErrorType
		msg  string
	}{
		{"failed result without kind", func(context.Context, *kernel.Call) (*kernel.Result, error) {
			return &kernel.Result{Output: "could not frob", ExitCode: 2}, nil
		}, kernel.ErrInvalidArgument, "could not frob"},
		{"unclassified error", func(context.Context, *kernel.Call) (*kernel.Result, error) {
			return nil, errors.New("odd failure")
		}, kernel.ErrInvalidArgument, "odd failure"},
		{"is-a-directory error", func(context.Context, *kernel.Call) (*kernel.Result, error) {
			return nil, pe(workspace.ErrIsDir)
		}, kernel.ErrInvalidArgument, "is a directory"},
		{"panic", func(context.Context, *kernel.Call) (*kernel.Result, error) {
			panic("oops")
		}, kernel.ErrUnsupported, "internal error"},
		{"nil result", func(context.Context, *kernel.Call) (*kernel.Result, error) {
			return nil, nil
		}, kernel.ErrUnsupported, "returned no result"},
	} {
		t.Run("tool "+tc.name, func(t *testing.T) {
			fx := newEffect("fx")
			fx.onRun = tc.run
			f := newKernel(t, kernel.Governance{}, []kernel.Tool{fx})
			res := f.call(t, kernel.OriginHostTrusted, "fx", `{"msg":"x"}`)
			if res.ExitCode == 0 || res.ErrorKind == nil || res.ErrorKind.Type != tc.want || !strings.Contains(res.ErrorKind.Message, tc.msg) {
				t.Fatalf("exit %d kind %+v, want %s with %q", res.ExitCode, res.ErrorKind, tc.want, tc.msg)
			}
			end := f.rec.ofType(kernel.EventToolEnd)
			if k, _ := end[len(end)-1].Payload["error_kind"].(*kernel.ErrorKind); k == nil || k.Type != tc.want {
				t.Errorf("tool_end error_kind %v", end[len(end)-1].Payload["error_kind"])
			}
		})
	}
}

// TestSanitiserCleansEverything: output, deltas, every string field of an
// error kind, every string and key inside metadata (typed values and raw
// JSON too), the args of every event and of pending confirmations.
func TestSanitiserCleansEverything(t *testing.T) {
	const secret = "sk-SECRET-42"
	clean := kernel.SanitizerFunc(func(s string) string { return strings.ReplaceAll(s, secret, "[redacted]") })
	type typed struct {
		Before string   `json:"before"`
		Lines  []string `json:"lines"`
	}
	ok := newEffect("ok")
	ok.onRun = func(_ context.Context, call *kernel.Call) (*kernel.Result, error) {
		call.Emit("delta " + secret)
		return kernel.OK("out "+secret, map[string]any{
			"change":     map[string]any{"before": "KEY=" + secret, "after": "KEY=x", "n": 3},
			"list":       []any{"a", secret, map[string]string{secret: "v"}},
			"typed":      typed{Before: secret, Lines: []string{secret}},
			"raw":        json.RawMessage(`{"z":"` + secret + `","a":[1,"` + secret + `"]}`),
			"kind":       &kernel.ErrorKind{Type: kernel.ErrNotFound, Path: secret},
			"plain_keep": 1.5,
		}), nil
	}
	missing := newEffect("missing")
	missing.onRun = func(context.Context, *kernel.Call) (*kernel.Result, error) {
		return nil, &workspace.PathError{Op: "read", Path: "keys/" + secret + ".txt", Err: fs.ErrNotExist}
	}
	f := newKernel(t, kernel.Governance{Security: clean}, []kernel.Tool{ok, missing})
	args := `{"msg":"` + secret + `","file_path":"` + secret + `.txt"}`
	for _, name := range []string{"ok", "missing"} {
		res := f.call(t, kernel.OriginAgent, name, args)
		b, _ := json.Marshal(res)
		if strings.Contains(string(b), secret) {
			t.Errorf("%s result leaks the secret: %s", name, b)
		}
		if name == "missing" && (res.ErrorKind == nil || res.ErrorKind.Type != kernel.ErrNotFound || res.ErrorKind.Path != "keys/[redacted].txt") {
			t.Errorf("not_found kind %+v", res.ErrorKind)
		}
		if name == "ok" {
			raw, _ := json.Marshal(res.Metadata["raw"])
			if !strings.HasPrefix(string(raw), `{"z":"[redacted]","a":[1,`) {
				t.Errorf("raw metadata lost its order or was not cleaned: %s", raw)
			}
		}
	}
	evs := f.rec.all()
	if len(evs) < 6 {
		t.Fatalf("only %d events", len(evs))
	}
	for _, e := range evs {
		b, err := json.Marshal(e.Payload)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), secret) {
			t.Errorf("%s payload leaks the secret: %s", e.Type, b)
		}
	}

	// Pending confirmations show cleaned args; the confirmation itself
	// (policy) sees the real ones.
	fx := newEffect("fx")
	g := kernel.Governance{Security: clean, Permission: kernel.PermissionPolicy{Ask: []string{"fx"}},
		Confirmation: kernel.ConfirmationPolicy{Enabled: true}}
	f2 := newKernel(t, g, []kernel.Tool{fx})
	done := make(chan *kernel.Result, 1)
	go func() { done <- f2.call(t, kernel.OriginAgent, "fx", args) }()
	var pend []kernel.PendingConfirmation
	for deadline := time.Now().Add(5 * time.Second); len(pend) == 0 && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		pend = f2.k.PendingConfirmations() // sleeping yields: js/wasm has one thread and no preemption
	}
	if len(pend) != 1 {
		t.Fatalf("pending %v", pend)
	}
	if strings.Contains(string(pend[0].Args), secret) || !strings.Contains(string(pend[0].Args), "[redacted]") {
		t.Errorf("pending args %s", pend[0].Args)
	}
	f2.k.ConfirmToolUse(pend[0].ToolID, true, "")
	if res := <-done; res.ExitCode != 0 {
		t.Fatalf("approved call failed: %s", res.Output)
	}
	if got, _ := fx.lastArg.Load().(json.RawMessage); !strings.Contains(string(got), secret) {
		t.Errorf("the tool did not get the real args: %s", got)
	}
}

// countingBatch cleans in batches and counts its calls.
type countingBatch struct{ one, all atomic.Int64 }

func (c *countingBatch) Sanitize(s string) string {
	c.one.Add(1)
	return strings.ReplaceAll(s, "SECRET", "***")
}

func (c *countingBatch) SanitizeAll(in []string) []string {
	c.all.Add(1)
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = strings.ReplaceAll(s, "SECRET", "***")
	}
	return out
}

// TestBatchSanitizer: a provider that cleans in batches gets one call for
// a result's metadata, not one per string.
func TestBatchSanitizer(t *testing.T) {
	fx := newEffect("fx")
	paths := make([]any, 500)
	for i := range paths {
		paths[i] = "dir/SECRET/" + strings.Repeat("x", i%7)
	}
	fx.onRun = func(context.Context, *kernel.Call) (*kernel.Result, error) {
		return kernel.OK("ok", map[string]any{"paths": paths}), nil
	}
	c := &countingBatch{}
	f := newKernel(t, kernel.Governance{Security: c}, []kernel.Tool{fx})
	res := f.call(t, kernel.OriginHostTrusted, "fx", `{"msg":"x"}`)
	got, _ := res.Metadata["paths"].([]any)
	if len(got) != 500 || got[499] != "dir/***/"+strings.Repeat("x", 499%7) {
		t.Fatalf("paths not cleaned in order: %d %v", len(got), got[len(got)-1])
	}
	if c.one.Load() > 10 || c.all.Load() > 3 {
		t.Errorf("%d Sanitize and %d SanitizeAll calls for one result", c.one.Load(), c.all.Load())
	}
}

// TestMetadataBounded: metadata over 64 KiB keeps head/tail previews and
// points to the artifact holding the whole JSON.
func TestMetadataBounded(t *testing.T) {
	big := strings.Repeat("x", 5_000_000)
	fx := newEffect("fx")
	fx.onRun = func(context.Context, *kernel.Call) (*kernel.Result, error) {
		raw, _ := json.Marshal(big)
		return kernel.OK("done", map[string]any{"script_result": json.RawMessage(raw), "small": "keep me", "n": 7,
			"many": []any{strings.Repeat("a", 100_000), strings.Repeat("b", 100_000)}}), nil
	}
	f := newKernel(t, kernel.Governance{}, []kernel.Tool{fx})
	res := f.call(t, kernel.OriginHostTrusted, "fx", `{"msg":"x"}`)
	b, _ := json.Marshal(res.Metadata)
	if len(b) > kernel.MaxMetadataBytes {
		t.Fatalf("metadata is %d bytes", len(b))
	}
	if res.Metadata["small"] != "keep me" || res.Metadata["n"] != 7 {
		t.Errorf("small values lost: %v %v", res.Metadata["small"], res.Metadata["n"])
	}
	sr, _ := res.Metadata["script_result"].(string)
	if !strings.HasPrefix(sr, "xxxx") || !strings.HasSuffix(sr, "xxxx") || !strings.Contains(sr, "bytes omitted") {
		t.Errorf("script_result preview %.80q…", sr)
	}
	ref, _ := res.Metadata["metadata_artifact"].(map[string]any)
	uri, _ := ref["artifact_uri"].(string)
	a, ok := f.k.Artifact(uri)
	if !ok {
		t.Fatalf("no artifact at %q (%v)", uri, ref)
	}
	var full map[string]any
	if err := json.Unmarshal([]byte(a.Content), &full); err != nil || full["script_result"] != big {
		t.Fatalf("artifact does not hold the full metadata: %v", err)
	}
}

// TestPostHookBlock: a post-hook cannot undo the call; its block withholds
// the result, which becomes a hook_denied failure saying the effect
// happened.
func TestPostHookBlock(t *testing.T) {
	fx := newEffect("fx")
	g := kernel.Governance{Hooks: []kernel.Hook{
		hook("guard", kernel.HookPostToolUse, kernel.HookMatcher{}, answer(kernel.HookResponse{Action: kernel.HookBlock, Reason: "output has a key"})),
	}}
	f := newKernel(t, g, []kernel.Tool{fx})
	res := f.call(t, kernel.OriginHostTrusted, "fx", `{"msg":"the key is 42"}`)
	if fx.runs.Load() != 1 {
		t.Fatalf("tool ran %d times", fx.runs.Load())
	}
	if res.ExitCode == 0 || kindOf(res) != kernel.ErrHookDenied || res.ErrorKind.Reason != "output has a key" {
		t.Fatalf("exit %d kind %+v", res.ExitCode, res.ErrorKind)
	}
	if !strings.Contains(res.Output, "has happened") || strings.Contains(res.Output, "the key is 42") {
		t.Errorf("output %q", res.Output)
	}
	if _, leaked := res.Metadata["msg"]; leaked {
		t.Errorf("the tool's metadata was not withheld: %v", res.Metadata)
	}
	end := f.rec.ofType(kernel.EventToolEnd)
	if p := end[len(end)-1].Payload; p["exit_code"] != 1 || strings.Contains(p["output"].(string), "the key is 42") {
		t.Errorf("tool_end %v", p)
	}
}

// TestRewriteCannotDodgeAPathHook: a pre-hook that rewrites the path into
// one a (earlier-registered) path hook guards is caught by that hook.
func TestRewriteCannotDodgeAPathHook(t *testing.T) {
	fx := newEffect("fx")
	g := kernel.Governance{Hooks: []kernel.Hook{
		hook("guard", kernel.HookPreToolUse, kernel.HookMatcher{PathPattern: "b.txt"}, answer(kernel.HookResponse{Action: kernel.HookBlock, Reason: "b is protected"})),
		hook("redirect", kernel.HookPreToolUse, kernel.HookMatcher{PathPattern: "a.txt"}, answer(kernel.HookResponse{Modified: json.RawMessage(`{"msg":"x","file_path":"q/../b.txt"}`)})),
	}}
	f := newKernel(t, g, []kernel.Tool{fx})
	res := f.call(t, kernel.OriginHostTrusted, "fx", `{"msg":"x","file_path":"a.txt"}`)
	if kindOf(res) != kernel.ErrHookDenied || !strings.Contains(res.Output, "b is protected") || fx.runs.Load() != 0 {
		t.Fatalf("exit %d %q runs %d", res.ExitCode, res.Output, fx.runs.Load())
	}
	res = f.call(t, kernel.OriginHostTrusted, "fx", `{"msg":"x","file_path":"c.txt"}`)
	if res.ExitCode != 0 || fx.runs.Load() != 1 {
		t.Fatalf("unrelated call: exit %d %q", res.ExitCode, res.Output)
	}
}
