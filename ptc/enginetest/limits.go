package enginetest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/ptc"
)

// watched wraps an engine: it counts the ctx calls that reach the Bridge
// and notes how long after its context ended each Run returned.
type watched struct {
	ptc.Engine
	calls atomic.Int64

	mu   sync.Mutex
	late time.Duration // the longest a Run took after its context ended
}

type bridgeFunc func(context.Context, string, json.RawMessage) (json.RawMessage, error)

func (f bridgeFunc) Call(ctx context.Context, m string, a json.RawMessage) (json.RawMessage, error) {
	return f(ctx, m, a)
}

func (w *watched) Run(ctx context.Context, p *ptc.Program, b ptc.Bridge) (json.RawMessage, error) {
	var ended atomic.Pointer[time.Time]
	stop := context.AfterFunc(ctx, func() { now := time.Now(); ended.Store(&now) })
	defer stop()
	v, err := w.Engine.Run(ctx, p, bridgeFunc(func(ctx context.Context, m string, a json.RawMessage) (json.RawMessage, error) {
		w.calls.Add(1)
		return b.Call(ctx, m, a)
	}))
	if at := ended.Load(); at != nil {
		w.mu.Lock()
		w.late = max(w.late, time.Since(*at))
		w.mu.Unlock()
	}
	return v, err
}

func (w *watched) lateness() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.late
}

// limits checks the engine's own bounds (the program-engine contract):
// memory, ctx-call flow control, result and argument size, and stopping
// at the deadline. Each case ends with the canary: the next program on
// the same engine starts clean.
func limits(t *testing.T, e ptc.Engine) {
	files := map[string]string{"a.txt": "alpha\n"}
	clean := func(t *testing.T, h *Harness) {
		t.Helper()
		c := h.Program(t, map[string]any{"source": canary})
		var got any
		ScriptResult(t, c, &got)
		if c.ExitCode != 0 || got != "clean" {
			t.Fatalf("the next program is not clean: exit %d %v %q", c.ExitCode, got, c.Output)
		}
	}
	// timeLimit is generous: these assert outcomes, not speed.
	const timeLimit = 20000

	t.Run("memory_1gib_fails_the_program", func(t *testing.T) {
		for _, c := range []struct{ name, body string }{
			{"array_buffer", "new ArrayBuffer(2 ** 30);"},
			{"typed_array", "new Uint8Array(2 ** 30);"},
			{"string_repeat", "'x'.repeat(2 ** 30);"},
			{"string_doubling", "let s = 'x'.repeat(1 << 20); for (let i = 0; i < 10; i++) s = s + s;"},
			{"push_buffers", "const keep = []; for (let i = 0; i < 1024; i++) keep.push(new Float64Array(1 << 17));"},
			{"push_strings", "const keep = []; for (let i = 0; i < 1024; i++) keep.push('x'.repeat(1 << 20) + i);"},
			{"wasm_memory", "new WebAssembly.Memory({ initial: 16384 });"},
		} {
			t.Run(c.name, func(t *testing.T) {
				h := NewHarness(t, e, files)
				start := time.Now()
				res := h.Program(t, map[string]any{"source": src("async function run(ctx) {", "  "+c.body, "  return 'allocated';", "}"),
					"limits": map[string]any{"timeoutMs": timeLimit}})
				if res.ExitCode == 0 {
					t.Fatalf("1 GiB allocated: %q", res.Output)
				}
				t.Logf("%s: %q after %v", c.name, res.Output, time.Since(start).Round(time.Millisecond))
				clean(t, h)
			})
		}
		t.Run("caught_inside_the_script", func(t *testing.T) {
			h := NewHarness(t, e, files)
			res := h.Program(t, map[string]any{"source": src("async function run(ctx) {",
				"  const out = [];",
				"  for (const f of [() => new ArrayBuffer(2 ** 30), () => 'x'.repeat(2 ** 30), () => { const k = []; for (;;) k.push(new Float64Array(1 << 17)); }]) {",
				"    try { f(); out.push('allocated'); } catch (e) { out.push('caught'); }",
				"  }",
				"  return out;",
				"}"), "limits": map[string]any{"timeoutMs": timeLimit}})
			var got []string
			ScriptResult(t, res, &got)
			if strings.Contains(res.Output, "allocated") || (res.ExitCode == 0 && strings.Join(got, ",") != "caught,caught,caught") {
				t.Fatalf("exit %d %v %q", res.ExitCode, got, res.Output)
			}
			clean(t, h)
		})
	})

	t.Run("concurrent_1000_ctx_calls", func(t *testing.T) {
		w := &watched{Engine: e}
		h := NewHarness(t, w, files)
		res := h.Program(t, map[string]any{"source": src("async function run(ctx) {",
			"  const texts = await Promise.all(Array.from({ length: 1000 }, () => ctx.readFile('a.txt')));",
			"  return { n: texts.length, all: texts.every((t) => t === 'alpha\\n') };",
			"}"), "limits": map[string]any{"maxToolCalls": 1000, "timeoutMs": 60000}})
		var got struct {
			N   int
			All bool
		}
		ScriptResult(t, res, &got)
		if res.ExitCode != 0 || got.N != 1000 || !got.All || w.calls.Load() != 1000 {
			t.Fatalf("exit %d %+v, %d bridge calls: %.300q", res.ExitCode, got, w.calls.Load(), res.Output)
		}
		clean(t, h)
	})

	t.Run("concurrent_1000_ctx_calls_past_max_tool_calls", func(t *testing.T) {
		for _, limit := range []int{0, 1, 20} {
			w := &watched{Engine: e}
			h := NewHarness(t, w, files)
			args := map[string]any{"source": src("async function run(ctx) {",
				"  const r = await Promise.allSettled(Array.from({ length: 1000 }, () => ctx.readFile('a.txt')));",
				"  return r.filter((x) => x.status === 'fulfilled').length;",
				"}"), "limits": map[string]any{"timeoutMs": 60000}}
			want := ptc.DefaultMaxToolCalls
			if limit > 0 {
				want = limit
				args["limits"].(map[string]any)["maxToolCalls"] = limit
			}
			res := h.Program(t, args)
			msg := fmt.Sprintf("PTC script exceeded maxToolCalls=%d", want)
			if res.ExitCode == 0 || res.Output != msg || len(ToolCalls(t, res)) != want || w.calls.Load() != int64(want) {
				t.Fatalf("maxToolCalls %d: exit %d %q, %d tool calls, %d bridge calls", want, res.ExitCode, res.Output, len(ToolCalls(t, res)), w.calls.Load())
			}
			clean(t, h)
		}
	})

	t.Run("flood_after_the_limit_costs_the_host_nothing", func(t *testing.T) {
		for _, c := range []struct{ name, body string }{
			{"un_awaited_readFile", "for (let i = 0; i < 1e6; i++) ctx.readFile('a.txt');"},
			{"un_awaited_tool", "for (let i = 0; i < 1e6; i++) ctx.tool('read', { file_path: 'a.txt' });"},
			{"caught_promises", "const ps = []; for (let i = 0; i < 1e5; i++) ps.push(ctx.readFile('a.txt').catch(() => 0)); await Promise.all(ps);"},
		} {
			t.Run(c.name, func(t *testing.T) {
				w := &watched{Engine: e}
				h := NewHarness(t, w, files)
				const timeout = 10000
				start := time.Now()
				res := h.Program(t, map[string]any{"source": src("async function run(ctx) {", "  "+c.body, "  return 'flooded';", "}"),
					"limits": map[string]any{"timeoutMs": timeout}})
				el := time.Since(start)
				if res.ExitCode == 0 || w.calls.Load() > ptc.DefaultMaxToolCalls || el > timeout*time.Millisecond+ptc.SettleGrace+stopSlack {
					t.Fatalf("exit %d %q after %v, %d bridge calls", res.ExitCode, res.Output, el, w.calls.Load())
				}
				t.Logf("%q after %v, %d bridge calls", res.Output, el.Round(time.Millisecond), w.calls.Load())
				clean(t, h)
			})
		}
	})

	t.Run("result_and_arguments_bounded", func(t *testing.T) {
		w := &watched{Engine: e}
		h := NewHarness(t, w, files)
		res := h.Program(t, map[string]any{"source": src("async function run(ctx) {", "  return 'x'.repeat(20 << 20);", "}")})
		want := fmt.Sprintf("the program result is %d bytes of JSON; the limit is %d", 20<<20+2, ptc.DefaultMaxResultBytes)
		if res.ExitCode == 0 || !strings.Contains(res.Output, want) {
			t.Fatalf("exit %d %.300q, want %q", res.ExitCode, res.Output, want)
		}
		// Multi-byte text counts in UTF-8 bytes.
		res = h.Program(t, map[string]any{"source": src("async function run(ctx) {", "  return { s: 'é'.repeat(600000) };", "}")})
		want = fmt.Sprintf("the program result is %d bytes of JSON; the limit is %d", 1200000+8, ptc.DefaultMaxResultBytes)
		if res.ExitCode == 0 || !strings.Contains(res.Output, want) {
			t.Fatalf("exit %d %.300q, want %q", res.ExitCode, res.Output, want)
		}
		res = h.Program(t, map[string]any{"source": src("async function run(ctx) {",
			"  const out = [];",
			"  for (const f of [() => ctx.readFile('x'.repeat(2 << 20)), () => ctx.tool('read', { file_path: 'a.txt', pad: 'y'.repeat(1 << 20) })]) {",
			"    try { await f(); out.push('sent'); } catch (e) { out.push(e.message); }",
			"  }",
			"  out.push(await ctx.readFile('a.txt'));",
			"  return out;",
			"}")})
		var got []string
		ScriptResult(t, res, &got)
		wantArgs := []string{
			fmt.Sprintf("the arguments of ctx.readFile are %d bytes of JSON; the limit is %d", 2<<20+4, ptc.DefaultMaxResultBytes),
			fmt.Sprintf("the arguments of ctx.tool are %d bytes of JSON; the limit is %d", 1<<20+len(`["read",{"file_path":"a.txt","pad":""}]`), ptc.DefaultMaxResultBytes),
			"alpha\n",
		}
		if res.ExitCode != 0 || strings.Join(got, "|") != strings.Join(wantArgs, "|") || w.calls.Load() != 1 {
			t.Fatalf("exit %d %q, %d bridge calls\n got %q\nwant %q", res.ExitCode, res.Output, w.calls.Load(), got, wantArgs)
		}
		clean(t, h)
	})

	t.Run("deadline_stops_allocation", func(t *testing.T) {
		for _, c := range []struct {
			name, body string
			timeout    int
		}{
			{"churn", "for (;;) { const x = new Array(1e5).fill(0); x.length = 0; }", 300},
			{"churn_strings", "let s = ''; for (;;) { s = 'y'.repeat(1 << 16) + Math.random(); }", 300},
			{"thrash_near_the_limit", "const keep = []; try { for (;;) keep.push(new Float64Array(1 << 16)); } catch (e) {} for (;;) { try { keep.push({ a: [1, 2, 3] }); } catch (e) { keep.length -= 1; } }", 3000},
		} {
			t.Run(c.name, func(t *testing.T) {
				w := &watched{Engine: e}
				h := NewHarness(t, w, files)
				res := h.Program(t, map[string]any{"source": src("async function run(ctx) {", "  "+c.body, "}"),
					"limits": map[string]any{"timeoutMs": c.timeout}})
				if res.ExitCode == 0 {
					t.Fatalf("exit 0: %q", res.Output)
				}
				// The contract is SettleGrace; stopSlack keeps a busy
				// machine from failing an engine that met it late.
				if late := w.lateness(); late > ptc.SettleGrace+stopSlack {
					t.Fatalf("the engine returned %v after its context ended, want <= %v (%q)", late, ptc.SettleGrace+stopSlack, res.Output)
				}
				t.Logf("%q; returned %v after the deadline", res.Output, w.lateness().Round(time.Millisecond))
				clean(t, h)
			})
		}
	})
}
