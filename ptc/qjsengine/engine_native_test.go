//go:build !js

package qjsengine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/a3s-lab/code-wasm/ptc"
)

// echo answers every ctx call with its arguments.
type echo struct{}

func (echo) Call(_ context.Context, m string, a json.RawMessage) (json.RawMessage, error) {
	if m == "fail" {
		return nil, errors.New("the tool failed")
	}
	return a, nil
}

func runJS(t *testing.T, src string, tweak ...func(*ptc.Program)) (string, error) {
	t.Helper()
	p := &ptc.Program{Name: "inline.js", Source: src, Inputs: json.RawMessage(`{}`), Methods: []string{"tool", "readFile", "fail"}, Tools: []string{"read"}}
	for _, f := range tweak {
		f(p)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	v, err := New().Run(ctx, p, echo{})
	return string(v), err
}

// TestModuleIsPinned: the engine patches and pokes qjs.wasm v0.0.6 as
// it is; another build must be checked (and this test updated) first.
func TestModuleIsPinned(t *testing.T) {
	sum := sha256.Sum256(qjsWasm)
	if got := hex.EncodeToString(sum[:]); got != "88fcbeead33cca3ec8394feb0fb3eec8047ec9ac5062aba7a63799cee11989b7" {
		t.Fatalf("qjs.wasm changed (sha256 %s, %d bytes): check patch, armStack and interruptCounter against it", got, len(qjsWasm))
	}
	if _, err := patch(qjsWasm[:len(qjsWasm)/2]); err == nil {
		t.Fatal("a truncated module was patched")
	}
}

// TestRealmHasNoHost: nothing but ECMAScript, ctx and the script is in
// the realm; every way to compile code at run time throws.
func TestRealmHasNoHost(t *testing.T) {
	names := []string{"std", "os", "bjson", "print", "console", "scriptArgs", "navigator", "gc", "setTimeout", "setInterval",
		"clearTimeout", "clearInterval", "queueMicrotask", "performance", "DOMException", "InternalError", "QJS_PROXY_VALUE",
		"process", "require", "fetch", "WebSocket", "Worker", "postMessage", "self", "WebAssembly", "module", "exports"}
	list, _ := json.Marshal(names)
	out, err := runJS(t, `async function run(ctx) {
  return `+string(list)+`.filter((n) => typeof globalThis[n] !== 'undefined');
}`)
	if err != nil || out != "[]" {
		t.Fatalf("%s %v", out, err)
	}
	makers := []string{
		"Function('return 1')", "eval('1')", "globalThis.eval('1')", "(0, eval)('1')", "new Function('return 1')",
		"(function () {}).constructor('return 1')", "(() => 1).constructor('return 1')", "(async () => 1).constructor('return 1')",
		"(function* () {}).constructor('yield 1')", "(async function* () {}).constructor('yield 1')",
		"ctx.tool.constructor('return 1')", "ctx.tools.read.constructor('return 1')", "Object.getPrototypeOf(ctx.readFile).constructor('return 1')",
		"(class {}).constructor('return 1')", "(function () {}).bind(null).constructor('return 1')", "Reflect.construct(Function, ['return 1'])",
		"Object.getPrototypeOf(async function () {}).constructor('return 1')", "ctx.readFile('a').constructor.constructor('return 1')",
		"Error.constructor('return 1')", "JSON.parse.constructor('return 1')", "Promise.resolve().then.constructor('return 1')",
	}
	var fns []string
	for _, m := range makers {
		fns = append(fns, "() => "+m)
	}
	out, err = runJS(t, `async function run(ctx) {
  return [`+strings.Join(fns, ",\n    ")+`].map((f) => {
    try { f(); return 'compiled'; } catch (e) { return (e instanceof EvalError) + ' ' + e.message; }
  });
}`)
	var got []string
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got) != len(makers) {
		t.Fatalf("%s %v", out, err)
	}
	for i, g := range got {
		if g != "true code generation from strings is disabled in programs" {
			t.Errorf("%s: %s", makers[i], g)
		}
	}
}

// TestImportRefused: qjs.wasm's modules (qjs:std, qjs:os, qjs:bjson) are
// registered in every context, so the engine refuses any source with
// `import` itself, whatever the caller checked.
func TestImportRefused(t *testing.T) {
	for _, src := range []string{
		"async function run() { return (await import('qjs:os')).getcwd(); }",
		"async function run() {\n  const m = await import/**/('qjs:std');\n  return 1;\n}",
		"async function run() { return typeof import.meta; }",
	} {
		_, err := runJS(t, src)
		var se *ptc.ScriptError
		if !errors.As(err, &se) || !strings.Contains(se.Message, `may not contain "import"`) {
			t.Errorf("%q: %v", src, err)
		}
	}
}

// TestWASIRootIsEmpty: the module has no file system. Even with qjs:std
// and qjs:os in hand (here, before the realm is locked), a script reaches
// no file.
func TestWASIRootIsEmpty(t *testing.T) {
	pl, _, err := poolFor(context.Background(), 1088)
	if err != nil {
		t.Fatal(err)
	}
	mod, err := pl.rt.InstantiateModule(context.Background(), pl.mod, wazero.NewModuleConfig().WithName("").WithStartFunctions())
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Close(context.Background())
	pm, _ := patched()
	v := &vm{ctx: context.Background(), mod: mod, mem: mod.Memory(), fns: map[string]api.Function{}}
	v.undef = v.call("JS_NewUndefined")
	v.armStack(64<<20, pm.interrupt)
	for _, c := range []struct{ code, want string }{
		{"typeof std.open + typeof os.readdir", "functionfunction"},
		{"String(std.open('/etc/passwd', 'r'))", "null"},
		{"String(std.loadFile('/etc/passwd'))", "null"},
		{"String(std.open('inline.js', 'r'))", "null"},
		{"os.readdir('/')[0].length + ' ' + (os.readdir('/')[1] !== 0)", "0 true"},
		{"os.readdir('.')[0].length", "0"},
		{"String(os.open('/pwned.txt', os.O_CREAT | os.O_WRONLY) < 0)", "true"},
		{"String(std.open('pwned.txt', 'w'))", "null"},
		{"String(os.stat('/')[1] !== 0)", "true"},
		{"typeof os.exec", "undefined"},
	} {
		val, exc := v.eval("probe.js", c.code, false)
		if got := v.text(val); exc || got != c.want {
			t.Errorf("%s = %q (exception %v), want %q", c.code, got, exc, c.want)
		}
	}
}

// TestStackBound: recursion of any kind throws a catchable RangeError
// after about 512 KiB of stack, JS or C, instead of trapping the module.
func TestStackBound(t *testing.T) {
	for _, c := range []struct{ name, body string }{
		{"js", "let n = 0; function f() { n++; f(); } try { f(); } catch (e) { return [e.name, e.message, n > 1000]; }"},
		{"array_flat", "let a = []; for (let i = 0; i < 1e5; i++) a = [a]; try { a.flat(Infinity); } catch (e) { return [e.name, e.message, true]; }"},
		{"array_join", "let a = []; for (let i = 0; i < 1e5; i++) a = [a]; try { String(a); } catch (e) { return [e.name, e.message, true]; }"},
		{"proxy_chain", "let p = {}; for (let i = 0; i < 1e5; i++) p = new Proxy(p, {}); try { p.x; } catch (e) { return [e.name, e.message, true]; }"},
		{"getter_chain", "const o = {}; let n = 0; Object.defineProperty(o, 'x', { get() { n++; return o.x; } }); try { o.x; } catch (e) { return [e.name, e.message, n > 1000]; }"},
		{"to_string", "let n = 0; const o = { toString() { n++; return String(o); } }; try { String(o); } catch (e) { return [e.name, e.message, n > 500]; }"},
	} {
		start := time.Now()
		out, err := runJS(t, "async function run() { "+c.body+" return 'no overflow'; }")
		t.Logf("%s: %v", c.name, time.Since(start))
		if err != nil || out != `["RangeError","Maximum call stack size exceeded",true]` {
			t.Errorf("%s: %s %v", c.name, out, err)
		}
	}
	// A program deep in the stack still calls ctx, and the next runs.
	out, err := runJS(t, `async function run(ctx) {
  let p; function f(d) { try { return f(d + 1); } catch (e) { p = ctx.readFile('at ' + d); return d; } }
  f(0);
  return await p;
}`)
	if err != nil || !strings.HasPrefix(out, `["at `) {
		t.Fatalf("%s %v", out, err)
	}
}

// TestStacksShowTheScriptOnly: whatever made an error (the script, C
// code, a ctx call, the script's own prepareStackTrace), its stack names
// the script's frames only.
func TestStacksShowTheScriptOnly(t *testing.T) {
	out, err := runJS(t, `async function run(ctx) {
  const stacks = [];
  function thrower() { throw new Error('x'); }
  try { thrower(); } catch (e) { stacks.push(e.stack); }
  try { null.x; } catch (e) { stacks.push(e.stack); }
  try { await ctx.fail('x'); } catch (e) { stacks.push(String(e.stack)); }
  try { JSON.parse('{'); } catch (e) { stacks.push(e.stack); }
  try { [1].map(() => { throw new TypeError('in map'); }); } catch (e) { stacks.push(e.stack); }
  const o = {}; Error.captureStackTrace(o); stacks.push(o.stack);
  let files = [];
  Error.prepareStackTrace = (e, sites) => { files = files.concat(sites.map((s) => [s.getFileName(), typeof s.getFunction()])); return 'mine'; };
  const custom = new Error('y').stack;
  await ctx.readFile({ toJSON() { new Error('probe').stack; return 'a'; } });
  Error.prepareStackTrace = undefined;
  return { stacks, custom, files };
}`)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Stacks []string
		Custom string
		Files  [][]string
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Stacks) != 6 || got.Custom != "mine" || len(got.Files) == 0 {
		t.Fatalf("%s", out)
	}
	for _, s := range got.Stacks {
		for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
			if l != "" && !strings.Contains(l, "(inline.js:") {
				t.Errorf("a frame outside the script: %q in %q", l, s)
			}
		}
	}
	for _, f := range got.Files {
		if f[0] != "inline.js" {
			t.Errorf("prepareStackTrace saw a call site in %q", f[0])
		}
	}
}

// TestConcurrentRuns: runs share nothing; under -race too.
func TestConcurrentRuns(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := runJS(t, fmt.Sprintf(`async function run(ctx) {
  globalThis.mine = %d;
  const r = await Promise.all([1, 2, 3].map((k) => ctx.readFile('f' + k)));
  return [globalThis.mine, r.length, typeof globalThis.other];
}`, i), func(p *ptc.Program) { p.MemoryBytes = (8 + i%3) << 20 })
			if want := fmt.Sprintf("[%d,3,\"undefined\"]", i); err != nil || out != want {
				errs <- fmt.Errorf("run %d: %s %v, want %s", i, out, err, want)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestMemoryBytes: the heap bound is the program's.
func TestMemoryBytes(t *testing.T) {
	mem := func(n int) func(*ptc.Program) { return func(p *ptc.Program) { p.MemoryBytes = n } }
	out, err := runJS(t, "async function run() { const b = new Uint8Array(4 << 20); return b.length; }", mem(8<<20))
	if err != nil || out != "4194304" {
		t.Fatalf("4 MiB in 8: %s %v", out, err)
	}
	for _, body := range []string{"new Uint8Array(16 << 20)", "const k = []; for (let i = 0; i < 16; i++) k.push(new Uint8Array(1 << 20))"} {
		out, err = runJS(t, "async function run() { try { "+body+"; return 'allocated'; } catch (e) { return e.message; } }", mem(8<<20))
		if err != nil || out != `"out of memory"` {
			t.Fatalf("%s in 8 MiB: %s %v", body, out, err)
		}
	}
	for _, n := range []int{MinMemoryBytes - 1, MaxMemoryBytes + 1} {
		if _, err := runJS(t, "async function run() { return 1 }", mem(n)); err == nil || !strings.Contains(err.Error(), "memoryBytes must be between") {
			t.Fatalf("memoryBytes %d: %v", n, err)
		}
	}
}
