//go:build !js

package qjsengine

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
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
// at all, and the C stack pointer (see exportStackPointer).
//
//go:linkname qjsWasm github.com/fastschema/qjs.wasmBytes
var qjsWasm []byte

// stackPointerExport is the name the engine gives the module's only
// global, the C stack pointer (__stack_pointer).
const stackPointerExport = "ptc_stack_pointer"

// exportStackPointer returns a copy of module b whose export section also
// exports global 0, the C stack pointer. qjs.wasm is linked stack-first
// with a stack of about 160 KiB, and its WASI build of quickjs-ng turns
// QuickJS's own stack check off (JS_SetMaxStackSize has no effect under
// __wasi__): recursion runs the stack off address 0 and traps after about
// 300 JS frames, uncatchable. Exported, the pointer can be moved to a
// block of the engine's choosing, and the check re-armed there (see
// armStack).
func exportStackPointer(b []byte) ([]byte, error) {
	if len(b) < 8 || string(b[:4]) != "\x00asm" {
		return nil, errors.New("not a wasm module")
	}
	out := append([]byte{}, b[:8]...)
	globals, patched := 0, false
	for i := 8; i < len(b); {
		id := b[i]
		size, n := binary.Uvarint(b[i+1:])
		if n <= 0 || i+1+n+int(size) > len(b) {
			return nil, fmt.Errorf("bad section at byte %d", i)
		}
		body := b[i+1+n : i+1+n+int(size)]
		next := i + 1 + n + int(size)
		switch id {
		case 6: // globals: exactly one, a mutable i32 (the stack pointer)
			c, m := binary.Uvarint(body)
			if m <= 0 || c != 1 || len(body) < m+2 || body[m] != 0x7f || body[m+1] != 1 {
				return nil, errors.New("the module's globals are not the one mutable i32 stack pointer")
			}
			globals = int(c)
		case 7: // exports: append {name, global 0}
			c, m := binary.Uvarint(body)
			if m <= 0 {
				return nil, errors.New("bad export section")
			}
			nb := binary.AppendUvarint(nil, c+1)
			nb = append(nb, body[m:]...)
			nb = binary.AppendUvarint(nb, uint64(len(stackPointerExport)))
			nb = append(nb, stackPointerExport...)
			nb = append(nb, 3, 0) // kind global, index 0
			out = append(out, id)
			out = binary.AppendUvarint(out, uint64(len(nb)))
			out = append(out, nb...)
			patched = true
			i = next
			continue
		}
		out = append(out, b[i:next]...)
		i = next
	}
	if globals != 1 || !patched {
		return nil, errors.New("the module has no stack pointer global or no export section")
	}
	return out, nil
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
	cache   = wazero.NewCompilationCache()
	patched = sync.OnceValues(func() ([]byte, error) { return exportStackPointer(qjsWasm) })
)

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
	bin, err := patched()
	if err != nil {
		p.err = fmt.Errorf("qjs.wasm: %w", err)
		return
	}
	ctx := context.Background()
	cfg := wazero.NewRuntimeConfig().WithCompilationCache(cache).WithCloseOnContextDone(true).WithMemoryLimitPages(pages)
	p.rt = wazero.NewRuntimeWithConfig(ctx, cfg)
	if _, err = wasi.Instantiate(ctx, p.rt); err == nil {
		_, err = p.rt.NewHostModuleBuilder("env").NewFunctionBuilder().
			WithGoModuleFunction(api.GoModuleFunc(hostCall), []api.ValueType{api.ValueTypeI32, api.ValueTypeI64, api.ValueTypeI32, api.ValueTypeI32}, []api.ValueType{api.ValueTypeI64}).
			Export("jsFunctionProxy").Instantiate(ctx)
	}
	if err == nil {
		p.mod, err = p.rt.CompileModule(ctx, bin)
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
	ctx   context.Context // the run's; its end closes the module
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
