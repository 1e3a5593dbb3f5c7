//go:build !js

package qjsengine

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/a3s-lab/code-wasm/ptc"
)

//go:generate go test -run TestNPMPreludeIsGenerated -update .

// prelude is the realm's side of every program engine (prelude.js; the
// npm engine's copy is generated from it).
//
//go:embed prelude.js
var prelude string

var importWord = regexp.MustCompile(`\bimport\b`)

const (
	// stackBlock is the C stack each run gets: QuickJS's bound
	// (ptc.MaxStackBytes) and room below it for the C frames between two
	// of its checks.
	stackBlock = ptc.MaxStackBytes + 256<<10
	// memoryOverhead is the linear memory beyond the JS heap bound: the
	// module's data, QuickJS's runtime and the stack block.
	memoryOverhead = 4 << 20
	// MinMemoryBytes and MaxMemoryBytes bound Program.MemoryBytes.
	MinMemoryBytes = 1 << 20
	MaxMemoryBytes = 1 << 30
	// reserveBytes is freed when the run must stop, so that QuickJS can
	// make its "interrupted" error at the memory limit.
	reserveBytes = 256 << 10
	// maxMessageBytes bounds an error message taken out of the realm.
	maxMessageBytes = 64 << 10
)

// The host functions of the prelude, by the id their proxies carry.
const (
	fnSend = 1 + iota
	fnFinish
	fnViolation
)

// Engine runs each program in a fresh QuickJS runtime in its own wasm
// module instance. It holds no state; one Engine serves concurrent runs.
type Engine struct{}

// New returns the engine. The first New of a process starts compiling
// the module for the default memory bound in the background, so a
// session's first program does not pay the compile inside its timeout.
func New() *Engine {
	warmOnce.Do(func() {
		go func() { _, _, _ = poolFor(context.Background(), pagesFor(ptc.DefaultMemoryBytes)) }()
	})
	return &Engine{}
}

var warmOnce sync.Once

// pagesFor is the wasm page bound of a run with memory bytes of heap.
func pagesFor(memory int) uint32 { return uint32((memory + memoryOverhead + 65535) / 65536) }

// Name is recorded as metadata.program.runtime.
func (*Engine) Name() string { return "quickjs-wazero" }

type limits struct{ maxToolCalls, maxInFlight, maxResultBytes, memory int }

func limitsOf(p *ptc.Program) (limits, error) {
	l := limits{p.MaxToolCalls, p.MaxInFlight, p.MaxResultBytes, p.MemoryBytes}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.maxToolCalls, ptc.DefaultMaxToolCalls)
	def(&l.maxInFlight, ptc.DefaultMaxInFlight)
	def(&l.maxResultBytes, ptc.DefaultMaxResultBytes)
	def(&l.memory, ptc.DefaultMemoryBytes)
	if l.memory < MinMemoryBytes || l.memory > MaxMemoryBytes {
		return l, fmt.Errorf("memoryBytes must be between %d and %d, got %d", MinMemoryBytes, MaxMemoryBytes, l.memory)
	}
	return l, nil
}

type runKey struct{}

type call struct {
	id     int64
	method string
	args   json.RawMessage
}

type result struct {
	id   int64
	ok   bool
	text string
}

// run is one program's state. The realm calls back into it (send,
// finish, violation) on the goroutine running the module, so only the
// bridge calls, each on its own goroutine, touch it from outside: through
// results and stop.
type run struct {
	vm  *vm
	ctx context.Context // the program's; bridge calls run under it
	p   *ptc.Program
	lim limits
	b   ptc.Bridge

	deliverFn, failFn uint64

	queue    []call // calls waiting for an in-flight slot, in order
	inflight int
	calls    int
	nextID   int64
	results  chan result
	stop     chan struct{}

	finished  bool
	value     json.RawMessage
	err       error
	violation string
}

// Run implements ptc.Engine.
func (e *Engine) Run(ctx context.Context, p *ptc.Program, b ptc.Bridge) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	lim, err := limitsOf(p)
	if err != nil {
		return nil, err
	}
	// The tool refuses `import` first; refused here too, since qjs.wasm
	// registers its qjs:std, qjs:os and qjs:bjson modules in every context
	// and a dynamic import would reach them. (The script's source is the
	// only code compiled in the realm: eval and the Function constructors
	// throw.)
	if loc := importWord.FindStringIndex(p.Source); loc != nil {
		return nil, &ptc.ScriptError{Message: `program source may not contain "import"`, Line: 1 + strings.Count(p.Source[:loc[0]], "\n")}
	}
	pl, own, err := poolFor(ctx, pagesFor(lim.memory))
	if err != nil {
		return nil, err
	}
	r := &run{ctx: ctx, p: p, lim: lim, b: b, results: make(chan result), stop: make(chan struct{})}
	type outcome struct {
		v   json.RawMessage
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		if own {
			defer pl.close()
		}
		v, err := r.exec(pl)
		done <- outcome{v, err}
	}()
	// The module stops within interruptEvery QuickJS steps of ctx ending
	// (the interrupt handler). A single long step of C (a sort of millions
	// of strings) may outlast the grace: then the run is left to finish on
	// its own, stopped at its next step.
	select {
	case o := <-done:
		return o.v, o.err
	case <-ctx.Done():
	}
	select {
	case o := <-done:
		return o.v, o.err
	case <-time.After(ptc.SettleGrace * 4 / 5):
		return nil, ctx.Err()
	}
}

// epoch is the origin of the monotonic clock the module sees.
var epoch = time.Now()

// stopClock is what the module's monotonic clock reads once a run must
// stop, and the limit the interrupt handler compares it with.
const stopClock = 1 << 62

// exec runs the program in a fresh module instance of pl.
func (r *run) exec(pl *pool) (out json.RawMessage, err error) {
	defer close(r.stop)
	pm, _ := patched()
	// The clock is how the interrupt handler learns the run must stop: it
	// is read on this goroutine, which also runs the module.
	clock := func() int64 {
		if r.finished || r.ctx.Err() != nil {
			return stopClock
		}
		return int64(time.Since(epoch))
	}
	vctx := context.WithValue(context.Background(), runKey{}, r)
	mod, err := pl.rt.InstantiateModule(vctx, pl.mod, wazero.NewModuleConfig().WithName("").WithStartFunctions().
		WithSysWalltime().WithNanotime(clock, 1)) // no file system, no args, no environment
	if err != nil {
		return nil, fmt.Errorf("quickjs-wazero: %w", err)
	}
	defer mod.Close(context.Background())
	r.vm = &vm{ctx: vctx, mod: mod, mem: mod.Memory(), fns: map[string]api.Function{}}
	defer func() {
		if x := recover(); x != nil {
			ve, ok := x.(vmError)
			if !ok {
				panic(x)
			}
			out, err = r.outcome(ve.err)
		}
	}()
	r.boot(pm.interrupt)
	r.loop()
	return r.outcome(nil)
}

// outcome is what Run returns: the script's result or error once it
// finished, else the context's error, else the module's fault. A limit
// the script hit wins over all of them (the program fails with it even if
// the script caught the refusal).
func (r *run) outcome(fault error) (json.RawMessage, error) {
	var err error
	switch {
	case r.finished:
		err = r.err
	case r.ctx.Err() != nil:
		err = r.ctx.Err()
	case fault != nil:
		err = &ptc.ScriptError{Message: "the program engine failed: " + fault.Error()}
	default:
		err = errors.New("the program ended without a result")
	}
	if r.violation != "" {
		return nil, &ptc.LimitError{Message: r.violation, Err: err}
	}
	if err != nil {
		return nil, err
	}
	return r.value, nil
}

// boot starts QuickJS on a stack of its own, runs the prelude, the script
// and run(ctx, inputs) up to its first wait.
func (r *run) boot(interrupt uint32) {
	v := r.vm
	v.undef = v.call("JS_NewUndefined")
	v.armStack(r.lim.memory, interrupt)
	proxy := func(id uint64) uint64 { return v.call("QJS_CreateFunctionProxy", v.jsctx, id, 0, 0) }
	kitFn, exc := v.eval("<ptc-prelude>", prelude, false)
	if exc {
		panic(vmError{fmt.Errorf("the prelude failed: %s", v.text(kitFn))})
	}
	methods, _ := json.Marshal(append([]string{}, r.p.Methods...))
	tools, _ := json.Marshal(append([]string{}, r.p.Tools...))
	kit, exc := v.invoke(kitFn, proxy(fnSend), proxy(fnFinish), proxy(fnViolation), v.newString(string(methods)),
		v.newString(string(tools)), v.newString(r.p.Name), v.call("QJS_NewInt64", v.jsctx, uint64(r.lim.maxToolCalls)))
	if exc {
		panic(vmError{fmt.Errorf("the prelude failed to lock the realm: %s", v.text(kit))})
	}
	r.deliverFn, r.failFn = v.prop(kit, "deliver"), v.prop(kit, "fail")
	start := v.prop(kit, "start")

	// The script's own statements. Its completion value is made undefined:
	// QJS_Eval would otherwise spin until a promise there settled.
	if val, exc := v.eval(r.p.Name, r.p.Source+"\n;void 0;\n", false); exc {
		r.fail(val)
		return
	}
	fn, exc := v.eval("<ptc-run>", "typeof run === 'function' ? run : undefined", false)
	if exc {
		r.fail(fn)
		return
	}
	inputs := string(r.p.Inputs)
	if inputs == "" {
		inputs = "{}"
	}
	if val, exc := v.invoke(start, fn, v.newString(inputs)); exc {
		r.fail(val)
		return
	}
	r.jobs()
}

// loop hands each finished bridge call to the realm and runs the jobs
// that follow, until the script finishes or ctx ends.
func (r *run) loop() {
	for !r.finished {
		select {
		case res := <-r.results:
			r.deliver(res)
			for more := true; more && !r.finished; {
				select {
				case res := <-r.results:
					r.deliver(res)
				default:
					more = false
				}
			}
			r.jobs()
		case <-r.ctx.Done():
			return
		}
	}
}

// jobs runs every pending job (promise reactions): QJS_Eval runs them
// after any script, so it is given an empty one.
func (r *run) jobs() {
	if val, exc := r.vm.eval("<ptc-jobs>", "0", false); exc {
		r.fail(val)
	}
}

// fail hands an exception to the prelude, which words it and finishes;
// past the deadline (the exception is the interrupt) it does nothing.
func (r *run) fail(exc uint64) {
	if r.ctx.Err() != nil {
		return
	}
	r.vm.invoke(r.failFn, exc)
	if !r.finished {
		r.finished, r.err = true, &ptc.ScriptError{Message: "the script failed and its error could not be read"}
	}
}

func (r *run) deliver(res result) {
	r.inflight--
	r.pump()
	v := r.vm
	ok := uint64(0)
	if res.ok {
		ok = 1
	}
	text := v.newString(res.text)
	if val, exc := v.invoke(r.deliverFn, v.call("QJS_NewInt64", v.jsctx, uint64(res.id)), v.call("QJS_NewBool", v.jsctx, ok), text); exc {
		r.fail(val)
	}
	v.free(text)
}

// pump starts waiting calls while fewer than maxInFlight are out.
func (r *run) pump() {
	for r.inflight < r.lim.maxInFlight && len(r.queue) > 0 {
		c := r.queue[0]
		r.queue = r.queue[1:]
		r.inflight++
		go func() {
			res := result{id: c.id}
			if v, err := r.b.Call(r.ctx, c.method, c.args); err != nil {
				res.text = err.Error()
			} else {
				res.ok, res.text = true, string(v)
			}
			select {
			case r.results <- res:
			case <-r.stop:
			}
		}()
	}
}

// hostCall is env.jsFunctionProxy, the one import through which the realm
// calls Go: the prelude's send, finish and violation. Its arguments are
// (fnID, ctxID, isAsync, promise, ...args) as JSValues.
func hostCall(ctx context.Context, _ api.Module, stack []uint64) {
	r, _ := ctx.Value(runKey{}).(*run)
	if r == nil {
		panic("quickjs-wazero: a host call outside a run")
	}
	v := r.vm
	argc, argv := uint32(stack[2]), uint32(stack[3])
	args := make([]uint64, argc)
	for i := range args {
		x, ok := v.mem.ReadUint64Le(argv + 8*uint32(i))
		if !ok {
			panic(vmError{errors.New("bad host call")})
		}
		args[i] = x
	}
	stack[0] = v.undef
	if len(args) < 4 {
		return
	}
	id, a := args[0], args[4:]
	switch id {
	case fnSend:
		stack[0] = r.send(a)
	case fnFinish:
		r.finish(a)
	case fnViolation:
		if len(a) > 0 && !r.finished && r.violation == "" {
			r.violation = v.goString(a[0], maxMessageBytes)
		}
	}
}

// send admits one ctx call (method, argsJSON): it returns the call's id,
// or '~' and the message of its refusal (prelude.js). The prelude counts
// the same way; these checks hold even for a script that reached send
// itself.
func (r *run) send(a []uint64) uint64 {
	v := r.vm
	refuse := func(msg string) uint64 { return v.newString("~" + msg) }
	if r.finished {
		return refuse("the program has finished; ctx calls are closed")
	}
	if len(a) < 2 || v.call("QJS_IsString", a[0]) == 0 || v.call("QJS_IsString", a[1]) == 0 {
		return refuse("ctx call: bad arguments")
	}
	method := v.goString(a[0], 256)
	ptr, n, release := v.utf8(a[1])
	defer release()
	if int(n) > r.lim.maxResultBytes {
		return refuse(fmt.Sprintf("the arguments of ctx.%s are %d bytes of JSON; the limit is %d", method, n, r.lim.maxResultBytes))
	}
	if r.calls >= r.lim.maxToolCalls {
		msg := fmt.Sprintf("PTC script exceeded maxToolCalls=%d", r.lim.maxToolCalls)
		if r.violation == "" {
			r.violation = msg
		}
		return refuse(msg)
	}
	b, ok := v.mem.Read(ptr, n)
	if !ok {
		panic(vmError{errors.New("bad string")})
	}
	r.calls++
	r.nextID++
	r.queue = append(r.queue, call{id: r.nextID, method: method, args: json.RawMessage(string(b))})
	r.pump()
	return v.call("QJS_NewInt64", v.jsctx, uint64(r.nextID))
}

// finish records the script's outcome (ok, text, line). Nothing of the
// script runs after it: the clock now reads stopClock, so the interrupt
// handler ends whatever jobs remain.
func (r *run) finish(a []uint64) {
	if r.finished || len(a) < 3 {
		return
	}
	v := r.vm
	r.finished = true
	if v.call("JS_ToBool", v.jsctx, a[0]) == 0 {
		r.err = &ptc.ScriptError{Message: v.goString(a[1], maxMessageBytes), Line: int(int32(v.call("QJS_ToInt32", v.jsctx, a[2])))}
		return
	}
	ptr, n, release := v.utf8(a[1])
	defer release()
	if int(n) > r.lim.maxResultBytes {
		r.err = &ptc.ScriptError{Message: fmt.Sprintf("the program result is %d bytes of JSON; the limit is %d", n, r.lim.maxResultBytes)}
		return
	}
	b, ok := v.mem.Read(ptr, n)
	if !ok {
		panic(vmError{errors.New("bad string")})
	}
	r.value = json.RawMessage(string(b))
}

// text is String(val), for the prelude's own errors (no script code has
// run yet, so no toString of the script's can).
func (v *vm) text(val uint64) string {
	ptr, n, release := v.utf8(val)
	defer release()
	b, _ := v.mem.Read(ptr, min(n, maxMessageBytes))
	return string(b)
}

// armStack moves the C stack into a block of its own and creates the
// QuickJS runtime on it, then sets what the WASI build leaves unset: the
// stack limit (0, no check), so recursion past ptc.MaxStackBytes throws a
// catchable RangeError instead of trapping, and the interrupt handler
// (slot, see patch), reading the run's clock.
func (v *vm) armStack(memory int, slot uint32) {
	block, opaque, reserve := v.call("malloc", stackBlock), v.call("malloc", 32), v.call("malloc", reserveBytes)
	if block == 0 || opaque == 0 || reserve == 0 {
		panic(vmError{errors.New("no memory for the stack")})
	}
	v.mem.Write(uint32(opaque), make([]byte, 32))
	v.mem.WriteUint64Le(uint32(opaque), stopClock)
	v.mem.WriteUint32Le(uint32(opaque)+24, uint32(reserve))
	top := (block + stackBlock) &^ 15
	sp, ok := v.mod.ExportedGlobal(stackPointerExport).(api.MutableGlobal)
	if !ok {
		panic(vmError{errors.New("the stack pointer is not exported")})
	}
	sp.Set(top)
	h := v.call("New_QJS", uint64(memory), ptc.MaxStackBytes, 0, 0)
	if h == 0 {
		panic(vmError{errors.New("QuickJS did not start")})
	}
	v.jsctx = v.call("QJS_GetContext", h)
	// JSRuntime holds {stack_size, stack_top, stack_limit}: stack_size is
	// the bound just set, stack_top a frame address in the block,
	// stack_limit 0. Find that one triple and set the limit. Then come
	// current_exception (8-aligned, JS_UNINITIALIZED now), three bools,
	// current_stack_frame (NULL), interrupt_handler and interrupt_opaque
	// (both 0): checked before they are set.
	rt := v.u32(uint32(h))
	at := uint32(0)
	for off := uint32(0); off < 4096; off += 4 {
		if v.u32(rt+off) == ptc.MaxStackBytes && v.u32(rt+off+8) == 0 {
			if t := v.u32(rt + off + 4); uint64(t) > block && uint64(t) <= top {
				if at != 0 {
					panic(vmError{errors.New("the QuickJS stack limit is ambiguous")})
				}
				at = rt + off
			}
		}
	}
	if at == 0 {
		panic(vmError{errors.New("the QuickJS stack limit was not found")})
	}
	exc := (at + 12 + 7) &^ 7
	if x, _ := v.mem.ReadUint64Le(exc); x != v.call("JS_NewUninitialized") || v.u32(exc+12) != 0 || v.u32(exc+16) != 0 || v.u32(exc+20) != 0 {
		panic(vmError{errors.New("the QuickJS runtime does not have the expected layout")})
	}
	v.mem.WriteUint32Le(at+8, v.u32(at+4)-ptc.MaxStackBytes)
	counter := v.interruptCounter()
	v.mem.WriteUint32Le(uint32(opaque)+16, counter)
	v.mem.WriteUint32Le(counter, interruptEvery) // the handler keeps it there
	v.mem.WriteUint32Le(exc+16, slot)
	v.mem.WriteUint32Le(exc+20, uint32(opaque))
}

// interruptCounter returns the address of the JSContext's interrupt
// counter: the one word shortly after its global_obj that 100 loop steps
// count down by 100 to 400.
func (v *vm) interruptCounter() uint32 {
	g := v.call("JS_GetGlobalObject", v.jsctx)
	v.free(g)
	ctx := uint32(v.jsctx)
	for off := uint32(0); off < 4096; off += 8 {
		if x, _ := v.mem.ReadUint64Le(ctx + off); x != g {
			continue
		}
		for try := 0; try < 2; try++ { // a count that reached 0 restarts at 10,000
			var before [16]uint32
			for i := range before {
				before[i] = v.u32(ctx + off + 16 + 4*uint32(i))
			}
			v.eval("<ptc-calibrate>", "for (let i = 0; i < 100; i++);", false)
			found := uint32(0)
			for i, b := range before {
				at := ctx + off + 16 + 4*uint32(i)
				if d := int64(b) - int64(v.u32(at)); d >= 100 && d <= 400 {
					if found != 0 {
						found = 0
						break
					}
					found = at
				}
			}
			if found != 0 {
				return found
			}
		}
		break
	}
	panic(vmError{errors.New("the QuickJS interrupt counter was not found")})
}
