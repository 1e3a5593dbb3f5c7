//go:build !js

package qjsengine

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	_ "unsafe" // go:linkname

	_ "github.com/fastschema/qjs" // the QuickJS build this engine runs
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	wasi "github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// qjsWasm is fastschema/qjs v0.0.6's qjs.wasm: quickjs-ng built for WASI
// with its C ABI exported (New_QJS, QJS_Eval, QJS_Call…). The engine
// drives that ABI itself rather than through the package's Runtime,
// because it needs what the Runtime does not offer: a per-run memory
// bound (the runtime config's page limit), a module with no file system
// at all, and a deadline that costs scripts nothing (see patch).
//
//go:linkname qjsWasm github.com/fastschema/qjs.wasmBytes
var qjsWasm []byte

// stackPointerExport is the name the engine gives the module's only
// global, the C stack pointer (__stack_pointer).
const stackPointerExport = "ptc_stack_pointer"

// patched is qjs.wasm as the engine runs it (see patch), and the table
// slot of the interrupt handler patch adds.
var patched = sync.OnceValues(func() (*patchedModule, error) { return patch(qjsWasm) })

// interruptEvery is how many QuickJS steps (loop iterations, calls) pass
// between two calls of the interrupt handler. QuickJS's own 10,000 is too
// coarse when a step is heavy C work (10,000 fills of a 100,000-element
// array take 30 s); each call reads the clock through one host call,
// which costs a loop of plain steps less than the noise of measuring it.
const interruptEvery = 16

type patchedModule struct {
	bin       []byte
	interrupt uint32 // table index of the interrupt handler
}

type section struct {
	id   byte
	body []byte
}

// patch returns a copy of module b with two additions, both for things
// qjs.wasm's WASI build of quickjs-ng leaves out:
//
//   - global 0, the C stack pointer, is exported. qjs.wasm is linked
//     stack-first with a stack of about 160 KiB, and QuickJS's own stack
//     check is off under __wasi__: recursion runs the stack off address 0
//     and traps after about 300 JS frames. Exported, the pointer can move
//     to a block of the engine's choosing, where the check is re-armed
//     (armStack).
//   - an interrupt handler, int handler(JSRuntime *rt, struct opaque *o),
//     in a new table slot (struct opaque {uint64 limit, now; uint32
//     counter, pad, reserve}): it sets the context's interrupt counter
//     (*o->counter) to interruptEvery, reads the WASI monotonic clock into
//     o->now and, when o->now >= o->limit, frees o->reserve (once) and
//     returns 1. The engine's clock jumps past any limit once the run must
//     stop, so the script ends with an uncatchable "interrupted" within
//     interruptEvery steps; the reserve is what lets QuickJS allocate
//     that error at the memory limit (without it, the error would be a
//     catchable "out of memory", and a script catching those would run
//     on). wazero's CloseOnContextDone also stops a module, but its check
//     on every loop made scripts about 10x slower.
func patch(b []byte) (pm *patchedModule, err error) {
	defer func() {
		if recover() != nil {
			pm, err = nil, errors.New("malformed wasm")
		}
	}()
	if len(b) < 8 || string(b[:4]) != "\x00asm" {
		return nil, errors.New("not a wasm module")
	}
	var secs []section
	for i := 8; i < len(b); {
		size, n := binary.Uvarint(b[i+1:])
		if n <= 0 || i+1+n+int(size) > len(b) {
			return nil, fmt.Errorf("bad section at byte %d", i)
		}
		secs = append(secs, section{b[i], b[i+1+n : i+1+n+int(size)]})
		i += 1 + n + int(size)
	}
	get := func(id byte) *section {
		for k := range secs {
			if secs[k].id == id {
				return &secs[k]
			}
		}
		return nil
	}
	types, imports, funcs, tables, exports, globals, elems, code := get(1), get(2), get(3), get(4), get(7), get(6), get(9), get(10)
	if types == nil || imports == nil || funcs == nil || tables == nil || exports == nil || globals == nil || elems == nil || code == nil {
		return nil, errors.New("the module lacks a section the engine patches")
	}
	r := &reader{b: globals.body}
	if r.u() != 1 || r.byte() != 0x7f || r.byte() != 1 {
		return nil, errors.New("the module's globals are not the one mutable i32 stack pointer")
	}
	// The handler's type (i32, i32) -> i32, added if missing.
	want := []byte{0x60, 2, 0x7f, 0x7f, 1, 0x7f}
	r = &reader{b: types.body}
	nt, typeIdx := r.u(), -1
	for k := uint64(0); k < nt; k++ {
		at := r.i
		if r.byte() != 0x60 {
			return nil, errors.New("bad type section")
		}
		r.skip(int(r.u())) // params
		r.skip(int(r.u())) // results
		if string(types.body[at:r.i]) == string(want) {
			typeIdx = int(k)
		}
	}
	if typeIdx < 0 {
		typeIdx = int(nt)
		types.body = appendVec(types.body, want)
	}
	// The clock import, and how many functions are imported.
	r = &reader{b: imports.body}
	nFuncImports, clock := uint64(0), int64(-1)
	for k, ni := uint64(0), r.u(); k < ni; k++ {
		mod, name := r.name(), r.name()
		switch r.byte() {
		case 0:
			r.u()
			if mod == "wasi_snapshot_preview1" && name == "clock_time_get" {
				clock = int64(nFuncImports)
			}
			nFuncImports++
		default:
			return nil, errors.New("the module imports more than functions")
		}
	}
	if clock < 0 {
		return nil, errors.New("the module does not import clock_time_get")
	}
	r = &reader{b: funcs.body}
	fn := nFuncImports + r.u()
	funcs.body = appendVec(funcs.body, binary.AppendUvarint(nil, uint64(typeIdx)))
	// One more table slot, holding the handler.
	r = &reader{b: tables.body}
	if r.u() != 1 || r.byte() != 0x70 {
		return nil, errors.New("the module does not have one function table")
	}
	flags, min := r.byte(), r.u()
	tb := []byte{1, 0x70, flags}
	tb = binary.AppendUvarint(tb, min+1)
	switch flags {
	case 0:
	case 1:
		tb = binary.AppendUvarint(tb, max(r.u(), min+1))
	default:
		return nil, errors.New("unexpected table limits")
	}
	tables.body = tb
	seg := append([]byte{0, 0x41}, sleb(int64(min))...)
	seg = append(seg, 0x0b, 1)
	elems.body = appendVec(elems.body, binary.AppendUvarint(seg, fn))
	// The "free" export, for the reserve.
	r = &reader{b: exports.body}
	free := int64(-1)
	for k, ne := uint64(0), r.u(); k < ne; k++ {
		name, kind, idx := r.name(), r.byte(), r.u()
		if name == "free" && kind == 0 {
			free = int64(idx)
		}
	}
	if free < 0 {
		return nil, errors.New("the module does not export free")
	}
	body := append([]byte{0, 0x20, 1, 0x28, 2, 16, 0x41}, sleb(interruptEvery)...)  // *opaque.counter = interruptEvery
	body = append(body, 0x36, 2, 0, 0x41, 1, 0x42, 0, 0x20, 1, 0x41, 8, 0x6a, 0x10) // clock_time_get(MONOTONIC, 0, &opaque.now)
	body = binary.AppendUvarint(body, uint64(clock))
	body = append(body, 0x1a, 0x20, 1, 0x29, 3, 8, 0x20, 1, 0x29, 3, 0, 0x5a, // opaque.now >= opaque.limit
		0x04, 0x7f, // if (result i32)
		0x20, 1, 0x28, 2, 24, 0x04, 0x40, // if opaque.reserve
		0x20, 1, 0x28, 2, 24, 0x10) // free(opaque.reserve)
	body = binary.AppendUvarint(body, uint64(free))
	body = append(body, 0x20, 1, 0x41, 0, 0x36, 2, 24, // opaque.reserve = 0
		0x0b, 0x41, 1, 0x05, 0x41, 0, 0x0b, 0x0b) // end; 1 else 0 end; end
	code.body = appendVec(code.body, binary.AppendUvarint(body[:0:0], uint64(len(body))), body)
	// Export the stack pointer.
	ex := binary.AppendUvarint(nil, uint64(len(stackPointerExport)))
	ex = append(append(ex, stackPointerExport...), 3, 0)
	exports.body = appendVec(exports.body, ex)

	out := append([]byte{}, b[:8]...)
	for _, s := range secs {
		out = append(out, s.id)
		out = binary.AppendUvarint(out, uint64(len(s.body)))
		out = append(out, s.body...)
	}
	return &patchedModule{bin: out, interrupt: uint32(min)}, nil
}

// appendVec adds one item (the concatenation of parts) to a vector body.
func appendVec(vec []byte, parts ...[]byte) []byte {
	r := &reader{b: vec}
	n := r.u()
	out := binary.AppendUvarint(nil, n+1)
	out = append(out, vec[r.i:]...)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func sleb(v int64) []byte {
	var out []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(out, c)
		}
		out = append(out, c|0x80)
	}
}

// reader reads a section body; a malformed one panics (patch recovers).
type reader struct {
	b []byte
	i int
}

func (r *reader) u() uint64 {
	v, n := binary.Uvarint(r.b[r.i:])
	if n <= 0 {
		panic("qjsengine: malformed wasm")
	}
	r.i += n
	return v
}

func (r *reader) byte() byte { r.i++; return r.b[r.i-1] }

func (r *reader) skip(n int) { r.i += n }

func (r *reader) name() string {
	n := int(r.u())
	r.i += n
	return string(r.b[r.i-n : r.i])
}

// A pool holds one wazero runtime per memory bound (the bound is part of
// a runtime's config): WASI and the host function are instantiated in it
// once, and every run instantiates the compiled module anonymously in it.
// All runtimes share one compilation cache, so the module is compiled
// once per process (about 0.5 s, by the first run, in the background of
// its context) and a new bound only decodes it.
type pool struct {
	ready chan struct{} // closed when rt and mod, or err, are set
	rt    wazero.Runtime
	mod   wazero.CompiledModule
	err   error
}

var (
	poolsMu sync.Mutex
	pools   = map[uint32]*pool{}
	cache   = newCache()
)

// newCache keeps compiled code in the user's cache directory when there
// is one (wazero keys it by its version, the CPU and the module), so only
// a machine's first process pays the ~0.5 s compile; in memory otherwise.
func newCache() wazero.CompilationCache {
	if dir, err := os.UserCacheDir(); err == nil {
		if c, err := wazero.NewCompilationCacheWithDir(filepath.Join(dir, "code-wasm", "qjs-wazero")); err == nil {
			return c
		}
	}
	return wazero.NewCompilationCache()
}

// maxPools bounds how many memory bounds keep a runtime; a run with yet
// another bound gets a runtime of its own.
const maxPools = 8

// poolFor returns the runtime for memory bounded to pages of 64 KiB once
// it is ready, or ctx's error first, and whether the caller must close it
// after its run.
func poolFor(ctx context.Context, pages uint32) (*pool, bool, error) {
	poolsMu.Lock()
	p, own := pools[pages], false
	if p == nil {
		p = &pool{ready: make(chan struct{})}
		if own = len(pools) >= maxPools; !own {
			pools[pages] = p
		}
		go p.build(pages)
	}
	poolsMu.Unlock()
	select {
	case <-p.ready:
	case <-ctx.Done():
		if own {
			go func() { <-p.ready; p.close() }()
		}
		return nil, false, ctx.Err()
	}
	if p.err != nil {
		return nil, false, p.err
	}
	return p, own, nil
}

func (p *pool) build(pages uint32) {
	defer close(p.ready)
	pm, err := patched()
	if err != nil {
		p.err = fmt.Errorf("qjs.wasm: %w", err)
		return
	}
	ctx := context.Background()
	cfg := wazero.NewRuntimeConfig().WithCompilationCache(cache).WithMemoryLimitPages(pages)
	p.rt = wazero.NewRuntimeWithConfig(ctx, cfg)
	if _, err = wasi.Instantiate(ctx, p.rt); err == nil {
		_, err = p.rt.NewHostModuleBuilder("env").NewFunctionBuilder().
			WithGoModuleFunction(api.GoModuleFunc(hostCall), []api.ValueType{api.ValueTypeI32, api.ValueTypeI64, api.ValueTypeI32, api.ValueTypeI32}, []api.ValueType{api.ValueTypeI64}).
			Export("jsFunctionProxy").Instantiate(ctx)
	}
	if err == nil {
		p.mod, err = p.rt.CompileModule(ctx, pm.bin)
	}
	if err != nil {
		p.close()
		p.err = fmt.Errorf("quickjs-wazero: %w", err)
	}
}

func (p *pool) close() {
	if p.rt != nil {
		_ = p.rt.Close(context.Background())
	}
}

// vmError is a failure of the wasm module itself (closed at the deadline,
// a trap), carried by panic out of the call that met it.
type vmError struct{ err error }

// vm is one QuickJS runtime in one module instance, used from one
// goroutine at a time (the run's; host calls come back on it).
type vm struct {
	ctx   context.Context // carries the run to the host function
	mod   api.Module
	mem   api.Memory
	fns   map[string]api.Function
	jsctx uint64
	undef uint64
}

func (v *vm) call(name string, args ...uint64) uint64 {
	f := v.fns[name]
	if f == nil {
		if f = v.mod.ExportedFunction(name); f == nil {
			panic(vmError{fmt.Errorf("qjs.wasm exports no %s", name)})
		}
		v.fns[name] = f
	}
	r, err := f.Call(v.ctx, args...)
	if err != nil {
		panic(vmError{err})
	}
	if len(r) == 0 {
		return 0
	}
	return r[0]
}

func (v *vm) u32(addr uint32) uint32 {
	x, ok := v.mem.ReadUint32Le(addr)
	if !ok {
		panic(vmError{fmt.Errorf("read outside memory at %#x", addr)})
	}
	return x
}

// cstring copies s into a fresh NUL-terminated buffer; free it.
func (v *vm) cstring(s string) uint64 {
	p := v.call("malloc", uint64(len(s)+1))
	if p == 0 || !v.mem.WriteString(uint32(p), s) || !v.mem.WriteByte(uint32(p)+uint32(len(s)), 0) {
		panic(vmError{errors.New("out of memory writing a string")})
	}
	return p
}

func (v *vm) newString(s string) uint64 {
	p := v.cstring(s)
	defer v.call("free", p)
	return v.call("QJS_NewString", v.jsctx, p)
}

func (v *vm) free(val uint64) { v.call("JS_FreeValue", v.jsctx, val) }

// utf8 converts a JS string value to UTF-8 inside the module and returns
// where it is and its length, without copying it out; release it.
func (v *vm) utf8(val uint64) (ptr, n uint32, release func()) {
	packed := v.call("QJS_ToCString", v.jsctx, val)
	if packed == 0 {
		return 0, 0, func() {}
	}
	x, ok := v.mem.ReadUint64Le(uint32(packed))
	if !ok {
		panic(vmError{errors.New("bad string")})
	}
	ptr, n = uint32(x>>32), uint32(x)
	return ptr, n, func() {
		v.call("JS_FreeCString", v.jsctx, uint64(ptr))
		v.call("free", packed)
	}
}

// goString copies at most max bytes of a JS string value out ("" for a
// value that is not a string).
func (v *vm) goString(val uint64, max uint32) string {
	if v.call("QJS_IsString", val) == 0 {
		return ""
	}
	ptr, n, release := v.utf8(val)
	defer release()
	n = min(n, max)
	b, ok := v.mem.Read(ptr, n)
	if !ok {
		panic(vmError{errors.New("bad string")})
	}
	return string(b)
}

// eval runs src as a global script named file and then every pending
// job; it returns the completion value or, with exc true, the exception.
func (v *vm) eval(file, src string, strict bool) (val uint64, exc bool) {
	code, name := v.cstring(src), v.cstring(file)
	defer func() { v.call("free", code); v.call("free", name) }()
	flags := uint64(0) // JS_EVAL_TYPE_GLOBAL
	if strict {
		flags |= 1 << 3
	}
	opts := v.call("QJS_CreateEvalOption", code, 0, 0, name, flags)
	if opts == 0 {
		panic(vmError{errors.New("out of memory")})
	}
	defer v.call("free", opts)
	return v.result(v.call("QJS_Eval", v.jsctx, opts))
}

// invoke calls fn with args (this undefined); jobs are not run.
func (v *vm) invoke(fn uint64, args ...uint64) (val uint64, exc bool) {
	var argv uint64
	if len(args) > 0 {
		argv = v.call("malloc", uint64(8*len(args)))
		if argv == 0 {
			panic(vmError{errors.New("out of memory")})
		}
		defer v.call("free", argv)
		for i, a := range args {
			v.mem.WriteUint64Le(uint32(argv)+uint32(8*i), a)
		}
	}
	return v.result(v.call("QJS_Call", v.jsctx, fn, v.undef, uint64(len(args)), argv))
}

// result reads a call's value: qjs.wasm's QJS_IsException misreads
// values, so a pending exception is what tells.
func (v *vm) result(r uint64) (uint64, bool) {
	if v.call("JS_HasException", v.jsctx) != 0 {
		return v.call("JS_GetException", v.jsctx), true
	}
	return r, false
}

// prop reads obj[name].
func (v *vm) prop(obj uint64, name string) uint64 {
	p := v.cstring(name)
	defer v.call("free", p)
	return v.call("JS_GetPropertyStr", v.jsctx, obj, p)
}
