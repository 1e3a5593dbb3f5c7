package enginetest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/a3s-lab/code-wasm/internal/testkit"
	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/ptc"
	"github.com/a3s-lab/code-wasm/tools"
	"github.com/a3s-lab/code-wasm/workspace"
)

// Harness is a kernel with the built-in tools and the program tool on one
// engine, over a memory workspace.
type Harness struct {
	WS *workspace.Workspace
	K  *kernel.Kernel
}

// NewHarness builds a harness and writes files into its workspace.
func NewHarness(t testing.TB, e ptc.Engine, files map[string]string) *Harness {
	t.Helper()
	ws := testkit.Workspace(t, files)
	reg := kernel.NewRegistry()
	for _, tl := range tools.Builtins(ws) {
		if err := reg.RegisterBuiltin(tl); err != nil {
			t.Fatal(err)
		}
	}
	if err := reg.RegisterBuiltin(ptc.New(ptc.Config{Engine: e, Workspace: ws})); err != nil {
		t.Fatal(err)
	}
	k, err := kernel.New(kernel.Config{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	return &Harness{WS: ws, K: k}
}

// Program runs the program tool with args (type "script" unless given).
func (h *Harness) Program(t testing.TB, args map[string]any) *kernel.Result {
	t.Helper()
	a := maps.Clone(args)
	if _, ok := a["type"]; !ok {
		a["type"] = "script"
	}
	raw, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.K.Invoke(context.Background(), kernel.Request{Tool: "program", Args: raw, Origin: kernel.OriginHostTrusted})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Snapshot returns every file of the workspace.
func (h *Harness) Snapshot(t testing.TB) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := h.WS.Walk(context.Background(), ".", func(p string, e workspace.Entry) error {
		if e.Kind == workspace.KindFile {
			b, _, err := h.WS.ReadFile(context.Background(), p)
			if err != nil {
				return err
			}
			out[p] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// ScriptResult decodes metadata.script_result into v.
func ScriptResult(t testing.TB, res *kernel.Result, v any) {
	t.Helper()
	b, err := json.Marshal(res.Metadata["script_result"])
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("script_result %s: %v", b, err)
	}
}

// ToolCalls returns metadata.program.tool_calls.
func ToolCalls(t testing.TB, res *kernel.Result) []ptc.ToolCall {
	t.Helper()
	p, ok := res.Metadata["program"].(map[string]any)
	if !ok {
		t.Fatalf("no metadata.program in %v", res.Metadata)
	}
	calls, ok := p["tool_calls"].([]ptc.ToolCall)
	if !ok {
		t.Fatalf("tool_calls is %T", p["tool_calls"])
	}
	return calls
}

func src(lines ...string) string { return strings.Join(lines, "\n") + "\n" }

// Warm runs one trivial program on e with the default timeout, so a
// one-time start of the engine (the native engine compiles QuickJS once
// per process, about 0.5 s) is not charged to a test's short timeout.
func Warm(t *testing.T, e ptc.Engine) {
	t.Helper()
	h := NewHarness(t, e, nil)
	if res := h.Program(t, map[string]any{"source": "async function run() { return 1 }"}); res.ExitCode != 0 {
		t.Fatalf("the engine does not run a trivial program: %s", res.Output)
	}
}

// Run is the engine conformance suite.
func Run(t *testing.T, e ptc.Engine) {
	Warm(t, e)
	files := map[string]string{}
	for i := range 16 {
		files[fmt.Sprintf("f/%02d.txt", i)] = fmt.Sprintf("file %d\nsecond line\n", i)
	}
	files["big.txt"] = strings.Repeat("é€", 200) + "\n" // 2- and 3-byte runes

	t.Run("promise_all_fanout_16", func(t *testing.T) {
		h := NewHarness(t, e, files)
		res := h.Program(t, map[string]any{
			"source": src(
				"async function run(ctx, inputs) {",
				"  const names = Array.from({length: 16}, (_, i) => 'f/' + String(i).padStart(2, '0') + '.txt');",
				"  const texts = await Promise.all(names.map((n) => ctx.readFile(n)));",
				"  return { summary: 'read ' + texts.length, first: texts.map((t) => t.split('\\n')[0]) };",
				"}"),
			"limits": map[string]any{"maxToolCalls": 16},
		})
		if res.ExitCode != 0 {
			t.Fatalf("exit %d: %s", res.ExitCode, res.Output)
		}
		var got struct{ First []string }
		ScriptResult(t, res, &got)
		if len(got.First) != 16 {
			t.Fatalf("got %d results", len(got.First))
		}
		for i, f := range got.First {
			if want := fmt.Sprintf("file %d", i); f != want {
				t.Errorf("result %d = %q, want %q (line numbers must be stripped)", i, f, want)
			}
		}
		calls := ToolCalls(t, res)
		if len(calls) != 16 {
			t.Fatalf("%d tool_calls, want 16", len(calls))
		}
		for _, c := range calls {
			if c.ToolName != "read" || !c.Success || c.ExitCode != 0 || c.OutputBytes == 0 {
				t.Errorf("tool call %+v", c)
			}
		}
		if !strings.HasPrefix(res.Output, "Program script completed.\nread 16\n") || !strings.Contains(res.Output, "Tool calls (16):") {
			t.Errorf("output:\n%s", res.Output)
		}
	})

	t.Run("allow_list", func(t *testing.T) {
		cases := []struct {
			name, call string
			allowed    []string
			wantErr    string
		}{
			{"write_not_in_list", "ctx.tool('write', {file_path: 'x.txt', content: 'pwned'})", []string{"read"}, "tool 'write' is not allowed for this PTC script"},
			{"proxy_absent", "(typeof ctx.tools.write === 'undefined' ? ctx.tool('write', {file_path: 'x.txt', content: 'p'}) : 'proxy present')", []string{"read"}, "tool 'write' is not allowed for this PTC script"},
			{"unknown_tool", "ctx.tool('nope', {})", nil, "tool 'nope' is not allowed for this PTC script"},
			{"caught_still_fails", "ctx.tool('write', {file_path: 'x.txt', content: 'p'}).catch(() => 'swallowed')", []string{"read"}, "tool 'write' is not allowed for this PTC script"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				h := NewHarness(t, e, files)
				before := h.Snapshot(t)
				args := map[string]any{"source": src("async function run(ctx) {", "  return await "+c.call+";", "}")}
				if c.allowed != nil {
					args["allowed_tools"] = c.allowed
				}
				res := h.Program(t, args)
				if res.ExitCode == 0 || res.Output != c.wantErr {
					t.Fatalf("exit %d output %q, want failure %q", res.ExitCode, res.Output, c.wantErr)
				}
				if after := h.Snapshot(t); !maps.Equal(before, after) {
					t.Fatalf("workspace changed by a rejected call")
				}
			})
		}
		t.Run("tools_proxy_lists_allowed", func(t *testing.T) {
			h := NewHarness(t, e, files)
			res := h.Program(t, map[string]any{
				"source":        src("async function run(ctx) {", "  const r = await ctx.tools.read({file_path: 'f/01.txt'});", "  return {keys: Object.keys(ctx.tools).sort(), out: r.output, text: r.text, exit: r.exitCode, name: r.name};", "}"),
				"allowed_tools": []string{"read"},
			})
			var got struct {
				Keys            []string
				Out, Text, Name string
				Exit            int
			}
			ScriptResult(t, res, &got)
			if res.ExitCode != 0 || strings.Join(got.Keys, ",") != "read" || got.Name != "read" || got.Exit != 0 ||
				got.Out != "     1\tfile 1\n     2\tsecond line\n" || got.Text != "file 1\nsecond line\n" {
				t.Fatalf("exit %d %q %+v", res.ExitCode, res.Output, got)
			}
		})
	})

	// A ctx call's rejection is made outside the script's frames, with the
	// stack trace limit at 0 for the while (prelude.js hostError): the
	// script's own limit and prepareStackTrace are as it set them, its
	// hook still sees each such error (with no call sites), and its own
	// errors keep their frames.
	t.Run("ctx_errors_keep_the_scripts_stack_settings", func(t *testing.T) {
		h := NewHarness(t, e, files)
		res := h.Program(t, map[string]any{
			"source": src("async function run(ctx) {",
				"  const out = {};",
				"  Error.stackTraceLimit = 7;",
				"  try { await ctx.tool('') } catch (e) { out.plain = [e.message, e.stack, e instanceof Error] }",
				"  out.limit = Error.stackTraceLimit;",
				"  const seen = [];",
				"  Error.prepareStackTrace = (e, sites) => { seen.push(sites.length); return 'mine ' + sites.length };",
				"  try { await ctx.tool('read', 5) } catch (e) { out.hooked = [e.message, e.stack] }",
				"  out.own = new Error('own').stack;",
				"  Error.prepareStackTrace = undefined;",
				"  Error.stackTraceLimit = Infinity;",
				"  try { await ctx.tool('') } catch (e) { out.inf = String(Error.stackTraceLimit) }",
				"  Error.stackTraceLimit = 10;",
				"  Error.prepareStackTrace = (e, sites) => 'limit ' + Error.stackTraceLimit + ', ' + sites.length + ' sites';",
				"  try { await ctx.tool('') } catch (e) { out.seenLimit = e.stack }",
				"  Error.prepareStackTrace = undefined;",
				"  out.seen = seen;",
				"  out.later = new Error('later').stack;",
				"  return out;",
				"}"),
			"limits": map[string]any{"maxToolCalls": 6},
		})
		if res.ExitCode != 0 {
			t.Fatalf("exit %d: %s", res.ExitCode, res.Output)
		}
		var got struct {
			Plain, Hooked  []any
			Limit          any
			Inf, SeenLimit string
			Own, Later     string
			Seen           []int
		}
		ScriptResult(t, res, &got)
		if len(got.Plain) != 3 || got.Plain[0] != "ctx.tool(name, args): name must be a non-empty string" || got.Plain[1] != "" || got.Plain[2] != true {
			t.Errorf("refused call's error: %v", got.Plain)
		}
		if got.Limit != float64(7) {
			t.Errorf("Error.stackTraceLimit after a refused call = %v, want 7", got.Limit)
		}
		if got.Inf != "Infinity" {
			t.Errorf("Error.stackTraceLimit after a refused call = %v, want Infinity", got.Inf)
		}
		if got.SeenLimit != "limit 10, 0 sites" {
			t.Errorf("the script's prepareStackTrace, for a refused call's error: %q, want the limit it set, no sites", got.SeenLimit)
		}
		if len(got.Hooked) != 2 || got.Hooked[0] != `ctx.tool("read", args): args must be an object` || got.Hooked[1] != "mine 0" {
			t.Errorf("error under the script's prepareStackTrace: %v", got.Hooked)
		}
		if !strings.HasPrefix(got.Own, "mine ") || got.Own == "mine 0" || len(got.Seen) < 2 || got.Seen[0] != 0 {
			t.Errorf("the script's own error under its hook: %q, hook saw %v", got.Own, got.Seen)
		}
		if !strings.Contains(got.Later, "at run (") {
			t.Errorf("a later error of the script has no frame of run: %q", got.Later)
		}
	})

	t.Run("max_tool_calls", func(t *testing.T) {
		h := NewHarness(t, e, files)
		res := h.Program(t, map[string]any{
			"source": src("async function run(ctx) {",
				"  let n = 0;",
				"  for (let i = 0; i < 5; i++) { try { await ctx.readFile('f/00.txt'); n++; } catch (e) { } }",
				"  return n;",
				"}"),
			"limits": map[string]any{"maxToolCalls": 3},
		})
		if res.ExitCode == 0 || res.Output != "PTC script exceeded maxToolCalls=3" {
			t.Fatalf("exit %d %q", res.ExitCode, res.Output)
		}
		if n := len(ToolCalls(t, res)); n != 3 {
			t.Fatalf("%d tool calls ran, want 3", n)
		}
	})

	t.Run("max_output_bytes_utf8_safe", func(t *testing.T) {
		h := NewHarness(t, e, files)
		for _, limit := range []int{1, 8, 9, 10, 101} {
			res := h.Program(t, map[string]any{
				"source": src("async function run(ctx) {",
					"  const r = await ctx.read('big.txt');",
					"  return {out: r.output, truncated: r.truncated === true};",
					"}"),
				"limits": map[string]any{"maxOutputBytes": limit},
			})
			var got struct {
				Out       string
				Truncated bool
			}
			ScriptResult(t, res, &got)
			if res.ExitCode != 0 || len(got.Out) > limit || len(got.Out) < limit-2 || !utf8.ValidString(got.Out) || strings.ContainsRune(got.Out, utf8.RuneError) || !got.Truncated {
				t.Fatalf("limit %d: exit %d, %d bytes %q truncated=%v", limit, res.ExitCode, len(got.Out), got.Out, got.Truncated)
			}
			if c := ToolCalls(t, res); len(c) != 1 || !c[0].Truncated || c[0].OutputBytes <= limit {
				t.Fatalf("limit %d: tool_calls %+v", limit, c)
			}
		}
	})

	t.Run("timeout_stops_infinite_loops", func(t *testing.T) {
		cases := []struct{ name, body string }{
			{"sync_loop", "for(;;){}"},
			{"loop_after_await", "await ctx.readFile('f/00.txt'); for(;;){}"},
			{"never_settles", "await new Promise(() => {});"},
			{"loop_in_microtask", "await null; while (true) { Math.random(); }"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				h := NewHarness(t, e, files)
				start := time.Now()
				res := h.Program(t, map[string]any{
					"source": src("async function run(ctx) {", "  "+c.body, "}"),
					"limits": map[string]any{"timeoutMs": 300},
				})
				el := time.Since(start)
				if res.ExitCode == 0 || res.Output != "program script timed out after 300 ms" || res.ErrorKind == nil || res.ErrorKind.Type != kernel.ErrTimeout {
					t.Fatalf("exit %d %q kind %v", res.ExitCode, res.Output, res.ErrorKind)
				}
				if el > 300*time.Millisecond+ptc.SettleGrace+stopSlack {
					t.Fatalf("took %v, want <= timeoutMs + 500 ms", el)
				}
			})
		}
	})

	t.Run("exception_message_and_line", func(t *testing.T) {
		cases := []struct {
			name   string
			source string
			want   string
		}{
			{"sync_throw", src("async function run(ctx) {", "  const x = 1;", "  throw new Error('boom');", "}"), "program script error: boom (line 3)"},
			{"after_await", src("async function run(ctx) {", "  await ctx.readFile('f/00.txt');", "", "  throw new Error('late ' + 42);", "}"), "program script error: late 42 (line 4)"},
			{"type_error", src("async function run(ctx) {", "  const o = {};", "  o.missing();", "}"), "program script error: TypeError: "},
			{"export_default", src("// search", "export default async function run(ctx, inputs) {", "  throw new RangeError('bad ' + inputs.n);", "}"), "program script error: RangeError: bad undefined (line 3)"},
			{"tool_failure_thrown", src("async function run(ctx) {", "  return await ctx.readFile('missing.txt');", "}"), "program script error: read failed"},
			{"syntax_error", src("async function run(ctx) {", "  return {;", "}"), "program script error: SyntaxError"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				h := NewHarness(t, e, files)
				res := h.Program(t, map[string]any{"source": c.source})
				if res.ExitCode == 0 || !strings.HasPrefix(res.Output, c.want) {
					t.Fatalf("exit %d %q, want prefix %q", res.ExitCode, res.Output, c.want)
				}
				if c.name == "type_error" && !strings.HasSuffix(res.Output, "(line 3)") {
					t.Fatalf("%q lacks the line", res.Output)
				}
			})
		}
	})

	t.Run("inputs_round_trip", func(t *testing.T) {
		h := NewHarness(t, e, files)
		inputs := map[string]any{"s": "héllo \u2028 \"q\" \\ 😀", "n": 1.5, "i": -7, "b": true, "z": nil,
			"a": []any{1.0, "two", []any{}, map[string]any{}}, "o": map[string]any{"deep": map[string]any{"k": "v"}}}
		res := h.Program(t, map[string]any{"source": src("export default async function run(ctx, inputs) {", "  return inputs;", "}"), "inputs": inputs})
		var got map[string]any
		ScriptResult(t, res, &got)
		want, _ := json.Marshal(inputs)
		gotJ, _ := json.Marshal(got)
		if res.ExitCode != 0 || string(want) != string(gotJ) {
			t.Fatalf("exit %d %q\n got %s\nwant %s", res.ExitCode, res.Output, gotJ, want)
		}
	})

	t.Run("cancelled_by_caller", func(t *testing.T) {
		for _, body := range []string{"for(;;){}", "await new Promise(() => {});"} {
			h := NewHarness(t, e, files)
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(150*time.Millisecond, cancel)
			start := time.Now()
			res, err := h.K.Invoke(ctx, kernel.Request{Tool: "program", Origin: kernel.OriginHostTrusted,
				Args: json.RawMessage(`{"type":"script","source":"async function run(ctx) { ` + body + ` }"}`)})
			if err != nil {
				t.Fatal(err)
			}
			if el := time.Since(start); res.ExitCode == 0 || res.ErrorKind == nil || res.ErrorKind.Type != kernel.ErrCancelled || el > 150*time.Millisecond+ptc.SettleGrace+stopSlack {
				t.Fatalf("%s: exit %d %q kind %+v after %v", body, res.ExitCode, res.Output, res.ErrorKind, el)
			}
			// The engine is healthy afterwards.
			if r := h.Program(t, map[string]any{"source": "async function run() { return 2 }"}); r.ExitCode != 0 {
				t.Fatalf("after cancel: %q", r.Output)
			}
		}
	})

	t.Run("program_inside_program_rejected", func(t *testing.T) {
		inner := map[string]any{"type": "script", "source": "async function run(){ return 1 }"}
		for _, allowed := range [][]string{nil, {"program", "read"}} {
			h := NewHarness(t, e, files)
			args := map[string]any{"source": src("async function run(ctx, inputs) {", "  return await ctx.tool('program', inputs.inner);", "}"),
				"inputs": map[string]any{"inner": inner}}
			if allowed != nil {
				args["allowed_tools"] = allowed
			}
			res := h.Program(t, args)
			if res.ExitCode == 0 || res.Output != "tool 'program' is not allowed for this PTC script" {
				t.Fatalf("allowed %v: exit %d %q", allowed, res.ExitCode, res.Output)
			}
			if n := len(ToolCalls(t, res)); n != 0 {
				t.Fatalf("a nested program ran (%d calls)", n)
			}
		}
	})

	t.Run("ctx_frozen", func(t *testing.T) {
		h := NewHarness(t, e, files)
		res := h.Program(t, map[string]any{"source": src("async function run(ctx) {",
			"  const tries = [() => { ctx.tool = null; }, () => { ctx.tools.read = null; }, () => { ctx.extra = 1; }, () => { delete ctx.readFile; }];",
			"  let threw = 0; for (const f of tries) { try { f(); } catch (e) { threw++; } }",
			"  return {frozen: Object.isFrozen(ctx) && Object.isFrozen(ctx.tools), tool: typeof ctx.tool, read: typeof ctx.tools.read, rf: typeof ctx.readFile, extra: ctx.extra === undefined};",
			"}")})
		var got map[string]any
		ScriptResult(t, res, &got)
		if res.ExitCode != 0 || got["frozen"] != true || got["tool"] != "function" || got["read"] != "function" || got["rf"] != "function" || got["extra"] != true {
			t.Fatalf("exit %d %q %v", res.ExitCode, res.Output, got)
		}
	})

	t.Run("result_shape", func(t *testing.T) {
		h := NewHarness(t, e, files)
		res := h.Program(t, map[string]any{"source": src("async function run(ctx) {", "  await ctx.readFile('f/02.txt');", "  return {summary: 'one file', n: 1};", "}")})
		calls := ToolCalls(t, res)
		if len(calls) != 1 {
			t.Fatalf("tool calls %+v", calls)
		}
		want := fmt.Sprintf("Program script completed.\none file\n\nTool calls (1):\n1. read ok, %d bytes\n\nResult:\n{\n  \"summary\": \"one file\",\n  \"n\": 1\n}\n", calls[0].OutputBytes)
		if res.ExitCode != 0 || res.Output != want {
			t.Fatalf("exit %d\n%q\nwant\n%q", res.ExitCode, res.Output, want)
		}
		p := res.Metadata["program"].(map[string]any)
		if p["name"] != "inline.js" || p["language"] != "javascript" || p["runtime"] != e.Name() || p["success"] != true {
			t.Fatalf("metadata.program %v", p)
		}
	})

	t.Run("limits", func(t *testing.T) { limits(t, e) })
}
