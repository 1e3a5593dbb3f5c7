package kernel_test

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"testing"

	"github.com/a3s-lab/code-wasm/kernel"
)

// inlineTool is an effectTool that says whether its calls may run inline
// (a panic in Inline counts as no).
type inlineTool struct {
	*effectTool
	inline func() bool
}

func (t *inlineTool) Inline(json.RawMessage) bool { return t.inline() }

// goroutineID is the number runtime.Stack prints for the calling goroutine.
func goroutineID() string {
	b := make([]byte, 64)
	b = b[:runtime.Stack(b, false)]
	b, _, _ = bytes.Cut(bytes.TrimPrefix(b, []byte("goroutine ")), []byte(" "))
	return string(b)
}

// A tool that says Inline runs its call on the goroutine that invoked the
// kernel; one that says no, or whose Inline panics, and a tool without
// Inline run on a goroutine of their own. Each call goes through the whole
// pipeline either way (its events, its result).
func TestInlineCallsRunOnTheCallersGoroutine(t *testing.T) {
	for _, c := range []struct {
		name   string
		inline func() bool // nil: no Inline method
		want   bool
	}{
		{"says yes", func() bool { return true }, true},
		{"says no", func() bool { return false }, false},
		{"panics", func() bool { panic("no") }, false},
		{"no method", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEffect("fx")
			var ran string
			e.onRun = func(context.Context, *kernel.Call) (*kernel.Result, error) {
				ran = goroutineID()
				return kernel.OK("done", nil), nil
			}
			var tool kernel.Tool = e
			if c.inline != nil {
				tool = &inlineTool{effectTool: e, inline: c.inline}
			}
			f := newKernel(t, kernel.Governance{}, []kernel.Tool{tool})
			caller := goroutineID()
			res := f.call(t, kernel.OriginHostTrusted, "fx", `{"msg":"m"}`)
			if res.ExitCode != 0 || res.Output != "done" {
				t.Fatalf("result %+v", res)
			}
			if got := ran == caller; got != c.want {
				t.Fatalf("ran on the caller's goroutine: %v, want %v (caller %s, tool %s)", got, c.want, caller, ran)
			}
			if len(f.rec.ofType(kernel.EventToolEnd)) != 1 {
				t.Fatal("no tool_end")
			}
		})
	}
}

// An inline call is governed as any other: a deny rule refuses a model's
// call of it before it runs, and its arguments are still checked against
// its schema first.
func TestInlineCallsAreGoverned(t *testing.T) {
	e := newEffect("fx")
	tool := &inlineTool{effectTool: e, inline: func() bool { return true }}
	f := newKernel(t, kernel.Governance{Permission: kernel.PermissionPolicy{Deny: []string{"fx"}, DefaultDecision: kernel.DecisionAllow}}, []kernel.Tool{tool})
	if res := f.call(t, kernel.OriginAgent, "fx", `{"msg":"m"}`); res.ExitCode == 0 || kindOf(res) != kernel.ErrHookDenied {
		t.Fatalf("a denied inline call: %+v", res)
	}
	if res := f.call(t, kernel.OriginHostTrusted, "fx", `{"nope":1}`); res.ExitCode == 0 || kindOf(res) != kernel.ErrInvalidArgument {
		t.Fatalf("an inline call with bad arguments: %+v", res)
	}
	if n := e.runs.Load(); n != 0 {
		t.Fatalf("the tool ran %d times", n)
	}
}
