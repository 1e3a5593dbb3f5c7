//go:build !js

package ptc_test

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/ptc"
	"github.com/a3s-lab/code-wasm/ptc/enginetest"
	"github.com/a3s-lab/code-wasm/ptc/qjsengine"
)

const okRun = "async function run(ctx, inputs) { return 1 }"

func TestProgramArgumentsRejected(t *testing.T) {
	big := "async function run(){}\n//" + strings.Repeat("x", ptc.MaxSourceBytes)
	files := map[string]string{"s/ok.js": okRun, "s/ok.txt": okRun, "s/big.mjs": big}
	cases := []struct {
		name string
		args map[string]any
		want string
	}{
		{"wrong_type", map[string]any{"type": "expression", "source": okRun}, `type must be "script"|/type`},
		{"wrong_language", map[string]any{"language": "python", "source": okRun}, `language must be "javascript"|/language`},
		{"neither", map[string]any{}, "source or path is required"},
		{"both", map[string]any{"source": okRun, "path": "s/ok.js"}, "either source or path, not both"},
		{"path_not_js", map[string]any{"path": "s/ok.txt"}, "must name a .js or .mjs file"},
		{"path_missing", map[string]any{"path": "s/nope.js"}, "nope.js"},
		{"path_escapes", map[string]any{"path": "../x.js"}, "escapes"},
		{"source_too_big", map[string]any{"source": big}, "the limit is 196608|/source: maxLength"},
		{"path_too_big", map[string]any{"path": "s/big.mjs"}, "the limit is 196608"},
		{"no_run", map[string]any{"source": "async function walk(ctx) {}"}, "must define `async function run(ctx, inputs)`"},
		{"forbidden_fetch", map[string]any{"source": "async function run(ctx) { return fetch('http://x') }"}, `may not contain "fetch(" (line 1)`},
		{"forbidden_import", map[string]any{"source": "import fs from 'fs';\nasync function run(){}"}, `may not contain "import" (line 1)`},
		{"forbidden_import_comment_paren", map[string]any{"source": "async function run(){\n  return import/**/('node:fs')\n}"}, `may not contain "import" (line 2)`},
		{"forbidden_eval_line", map[string]any{"source": "async function run(){\n\n  return eval('1')\n}"}, `may not contain "eval(" (line 3)`},
		{"named_export", map[string]any{"source": "export const x = 1;\nasync function run(){}"}, "only `export default async function run"},
		{"inputs_not_object", map[string]any{"source": okRun, "inputs": []int{1}}, "inputs must be an object|/inputs: got array"},
		{"unknown_field", map[string]any{"source": okRun, "timeout": 5}, `unknown field "timeout"|'timeout' not allowed`},
		{"unknown_allowed_tool", map[string]any{"source": okRun, "allowed_tools": []string{"read", "bash9"}}, `allowed_tools names "bash9"`},
		{"timeout_zero", map[string]any{"source": okRun, "limits": map[string]any{"timeoutMs": 0}}, "limits.timeoutMs must be >= 1|/limits/timeoutMs: minimum"},
		{"timeout_over_max", map[string]any{"source": okRun, "limits": map[string]any{"timeoutMs": 600001}}, "limits.timeoutMs must be at most 600000|/limits/timeoutMs: maximum"},
		{"max_calls_zero", map[string]any{"source": okRun, "limits": map[string]any{"maxToolCalls": 0}}, "limits.maxToolCalls must be >= 1|/limits/maxToolCalls: minimum"},
		{"max_output_negative", map[string]any{"source": okRun, "limits": map[string]any{"maxOutputBytes": -1}}, "limits.maxOutputBytes must be >= 1|/limits/maxOutputBytes: minimum"},
		{"limits_unknown", map[string]any{"source": okRun, "limits": map[string]any{"memory": 1}}, `unknown field "memory"|'memory' not allowed`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := enginetest.NewHarness(t, qjsengine.New(), files)
			before := h.Snapshot(t)
			args := maps.Clone(c.args)
			res := h.Program(t, args)
			// Either the kernel's schema check or the tool's own words.
			matched := false
			for _, w := range strings.Split(c.want, "|") {
				matched = matched || strings.Contains(res.Output, w)
			}
			if res.ExitCode == 0 || !matched {
				t.Fatalf("exit %d %q, want failure containing %q", res.ExitCode, res.Output, c.want)
			}
			if res.ErrorKind == nil || res.ErrorKind.Type != kernel.ErrInvalidArgument && res.ErrorKind.Type != kernel.ErrNotFound {
				t.Errorf("error kind %+v", res.ErrorKind)
			}
			if !maps.Equal(before, h.Snapshot(t)) {
				t.Fatal("a rejected call changed the workspace")
			}
		})
	}
}

func TestNormalizeSourceKeepsLines(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"plain", "async function run(ctx) {}", "async function run(ctx) {}"},
		{"export_default", "// c\nexport default async function run(ctx, inputs) {\n}", "// c\nasync function run(ctx, inputs) {\n}"},
		{"export_default_anonymous", "export default async function (ctx) {}", "async function run(ctx) {}"},
		{"export_default_name", "async function run(ctx) {}\nexport default run;\n", "async function run(ctx) {}\n\n"},
		{"indented", "  export default async function run(ctx) {}", "  async function run(ctx) {}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ptc.NormalizeSource(c.in)
			if err != nil || got != c.want {
				t.Fatalf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

func TestNoEngineIsUnsupported(t *testing.T) {
	h := enginetest.NewHarness(t, nil, nil)
	res := h.Program(t, map[string]any{"source": okRun})
	if res.ExitCode == 0 || res.ErrorKind == nil || res.ErrorKind.Type != kernel.ErrUnsupported {
		t.Fatalf("%+v", res)
	}
}

// hostTask is a host-registered `task` tool: it counts its calls.
type hostTask struct{ calls *int }

func (hostTask) Name() string                { return "task" }
func (hostTask) Description() string         { return "delegate" }
func (hostTask) Parameters() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (hostTask) Capabilities(json.RawMessage) kernel.Capabilities {
	return kernel.Conservative()
}
func (h hostTask) Execute(context.Context, *kernel.Call) (*kernel.Result, error) {
	*h.calls++
	return kernel.OK("delegated", nil), nil
}

// A program may delegate one task per ctx call (REFERENCE.md §2.13), and
// allowing task raises the default timeout to 600 s.
func TestProgramTaskSingleDelegation(t *testing.T) {
	n := 0
	reg := kernel.NewRegistry()
	if err := reg.RegisterBuiltin(ptc.New(ptc.Config{Engine: qjsengine.New()})); err != nil {
		t.Fatal(err)
	}
	if err := reg.RegisterDynamic(hostTask{&n}); err != nil {
		t.Fatal(err)
	}
	k, err := kernel.New(kernel.Config{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	src := `async function run(ctx) {
  const one = await ctx.tool('task', {tasks: [{agent: 'a', description: 'd', prompt: 'p'}]});
  let two = 'accepted';
  try { await ctx.tool('task', {tasks: [{agent: 'a'}, {agent: 'b'}]}); } catch (e) { two = e.message; }
  return {one: one.output, two};
}`
	args, _ := json.Marshal(map[string]any{"type": "script", "source": src})
	res, err := k.Invoke(context.Background(), kernel.Request{Tool: "program", Args: args, Origin: kernel.OriginHostTrusted})
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ One, Two string }
	enginetest.ScriptResult(t, res, &got)
	if res.ExitCode != 0 || got.One != "delegated" || !strings.Contains(got.Two, "one task per call, got 2") || n != 1 {
		t.Fatalf("exit %d %q %+v calls %d", res.ExitCode, res.Output, got, n)
	}
}

// Every program failure carries an error kind: the script's own faults
// are invalid_argument{message}, its timeout is timeout{op: program}.
func TestProgramFailureKinds(t *testing.T) {
	files := map[string]string{"a.txt": "a\n"}
	cases := []struct {
		name string
		args map[string]any
		want kernel.ErrorType
		msg  string // substring of the kind's message (invalid_argument)
	}{
		{"tool_not_allowed", map[string]any{"source": `async function run(ctx) { return await ctx.tool("write", {file_path: "w.txt", content: "x"}) }`, "allowed_tools": []string{"read"}},
			kernel.ErrInvalidArgument, "not allowed"},
		{"max_tool_calls", map[string]any{"source": `async function run(ctx) { for (let i = 0; i < 5; i++) await ctx.ls("."); return 1 }`, "limits": map[string]any{"maxToolCalls": 2}},
			kernel.ErrInvalidArgument, "maxToolCalls=2"},
		{"throw", map[string]any{"source": `async function run(ctx) { throw new Error("boom") }`}, kernel.ErrInvalidArgument, "boom"},
		{"syntax_error", map[string]any{"source": `async function run(ctx) { return 1 +; }`}, kernel.ErrInvalidArgument, "SyntaxError"},
		{"unserialisable_result", map[string]any{"source": `async function run(ctx) { return 10n }`}, kernel.ErrInvalidArgument, ""},
		{"script_timeout", map[string]any{"source": `async function run(ctx) { while (true) {} }`, "limits": map[string]any{"timeoutMs": 100}}, kernel.ErrTimeout, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := enginetest.NewHarness(t, qjsengine.New(), files)
			res := h.Program(t, c.args)
			if res.ExitCode == 0 || res.ErrorKind == nil || res.ErrorKind.Type != c.want {
				t.Fatalf("exit %d kind %+v output %q, want kind %s", res.ExitCode, res.ErrorKind, res.Output, c.want)
			}
			if c.want == kernel.ErrInvalidArgument && (res.ErrorKind.Message == "" || !strings.Contains(res.ErrorKind.Message, c.msg)) {
				t.Errorf("message %q, want it to contain %q", res.ErrorKind.Message, c.msg)
			}
			if c.want == kernel.ErrTimeout && (res.ErrorKind.Op != "program" || res.ErrorKind.DurationMs != 100) {
				t.Errorf("timeout kind %+v, want op program, duration_ms 100", res.ErrorKind)
			}
		})
	}
}
