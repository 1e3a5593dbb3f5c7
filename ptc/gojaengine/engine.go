package gojaengine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/dop251/goja"

	"github.com/a3s-lab/code-wasm/ptc"
)

// Engine runs programs in goja. The zero value is ready; it holds no
// state, so one Engine serves concurrent programs.
type Engine struct{}

// New returns the engine.
func New() *Engine { return &Engine{} }

// Name is recorded as metadata.program.runtime.
func (*Engine) Name() string { return "goja" }

// prelude builds the frozen ctx from the one native entry point. It runs
// before the script, so the intrinsics it keeps (JSON.stringify,
// Object.freeze) are the clean ones.
const prelude = `(function (call, methods, tools) {
  'use strict';
  var stringify = JSON.stringify, freeze = Object.freeze;
  var ctx = {};
  methods.forEach(function (m) {
    ctx[m] = freeze(function () { return call(m, stringify(Array.prototype.slice.call(arguments))); });
  });
  var t = {};
  tools.forEach(function (n) {
    t[n] = freeze(function (args) { return call('tool', stringify([n, args])); });
  });
  ctx.tools = freeze(t);
  var then = Promise.prototype.then, apply = Reflect.apply, resolve = Promise.resolve.bind(Promise);
  // start calls run and marks the program finished as soon as its promise
  // settles, before any later job of the script: ctx calls from timers or
  // promise chains that outlive run are refused.
  function start(run, inputs, done) {
    var p = resolve(run(freeze(ctx), inputs));
    apply(then, p, [done, done]);
    return p;
  }
  return freeze({ctx: freeze(ctx), start: start});
})`

type settled struct {
	resolve, reject func(any) error
	value           json.RawMessage
	err             error
}

// Run implements ptc.Engine.
func (e *Engine) Run(ctx context.Context, p *ptc.Program, b ptc.Bridge) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	vm := goja.New()
	if p.MaxStackDepth > 0 {
		vm.SetMaxCallStackSize(p.MaxStackDepth)
	}
	// Intrinsics captured before any script code runs.
	jsonObj := vm.Get("JSON").ToObject(vm)
	parse, _ := goja.AssertFunction(jsonObj.Get("parse"))
	stringify, _ := goja.AssertFunction(jsonObj.Get("stringify"))
	errCtor, _ := goja.AssertConstructor(vm.Get("Error"))

	done := make(chan struct{})
	defer close(done)
	results := make(chan settled)

	stop := context.AfterFunc(ctx, func() { vm.Interrupt(ctx.Err()) })
	defer stop()

	finished := false
	call := func(fc goja.FunctionCall) goja.Value {
		method := fc.Argument(0).String()
		args := json.RawMessage(fc.Argument(1).String())
		promise, resolve, reject := vm.NewPromise()
		if finished {
			_ = reject(mustNew(errCtor, vm, "the program has finished; ctx calls are closed"))
			return vm.ToValue(promise)
		}
		go func() {
			v, err := b.Call(ctx, method, args)
			select {
			case results <- settled{resolve: resolve, reject: reject, value: v, err: err}:
			case <-done:
			}
		}()
		return vm.ToValue(promise)
	}

	mk, err := vm.RunScript("ptc-prelude.js", prelude)
	if err != nil {
		return nil, fmt.Errorf("goja prelude: %w", err)
	}
	mkFn, _ := goja.AssertFunction(mk)
	kit, err := mkFn(goja.Undefined(), vm.ToValue(call), vm.ToValue(p.Methods), vm.ToValue(p.Tools))
	if err != nil {
		return nil, fmt.Errorf("goja prelude: %w", err)
	}
	start, _ := goja.AssertFunction(kit.ToObject(vm).Get("start"))
	markDone := vm.ToValue(func(goja.FunctionCall) goja.Value { finished = true; return goja.Undefined() })
	inputs, err := parse(goja.Undefined(), vm.ToValue(string(p.Inputs)))
	if err != nil {
		return nil, fmt.Errorf("inputs are not JSON: %w", err)
	}

	if _, err := vm.RunScript(p.Name, p.Source); err != nil {
		return nil, e.failure(ctx, vm, p, err)
	}
	run := vm.Get("run")
	if _, ok := goja.AssertFunction(run); !ok {
		return nil, &ptc.ScriptError{Message: "the script does not define async function run(ctx, inputs)"}
	}
	ret, err := start(goja.Undefined(), vm.ToValue(run), inputs, markDone)
	if err != nil {
		return nil, e.failure(ctx, vm, p, err)
	}
	promise, isPromise := ret.Export().(*goja.Promise)
	for isPromise && promise.State() == goja.PromiseStatePending {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case s := <-results:
			var err error
			if s.err != nil {
				err = s.reject(mustNew(errCtor, vm, s.err.Error()))
			} else {
				var v goja.Value
				v, err = parse(goja.Undefined(), vm.ToValue(string(s.value)))
				if err == nil {
					err = s.resolve(v)
				} else {
					err = s.reject(mustNew(errCtor, vm, "ctx result is not JSON: "+err.Error()))
				}
			}
			if err != nil {
				return nil, e.failure(ctx, vm, p, err)
			}
		}
	}
	if isPromise {
		if promise.State() == goja.PromiseStateRejected {
			return nil, scriptError(vm, p, promise.Result(), nil)
		}
		ret = promise.Result()
	}
	out, err := stringify(goja.Undefined(), ret)
	if err != nil {
		return nil, e.failure(ctx, vm, p, err)
	}
	if goja.IsUndefined(out) || goja.IsNull(out) {
		return json.RawMessage("null"), nil
	}
	return json.RawMessage(out.String()), nil
}

func mustNew(c goja.Constructor, vm *goja.Runtime, msg string) *goja.Object {
	o, err := c(nil, vm.ToValue(msg))
	if err != nil {
		return vm.NewGoError(errors.New(msg))
	}
	return o
}

// failure classifies an error from the VM.
func (e *Engine) failure(ctx context.Context, vm *goja.Runtime, p *ptc.Program, err error) error {
	var ie *goja.InterruptedError
	if errors.As(err, &ie) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &ptc.ScriptError{Message: "interrupted"}
	}
	var so *goja.StackOverflowError
	if errors.As(err, &so) {
		return &ptc.ScriptError{Message: "RangeError: Maximum call stack size exceeded", Line: frameLine(so.Stack(), p.Name)}
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		return scriptError(vm, p, ex.Value(), ex.Stack())
	}
	var ce *goja.CompilerSyntaxError
	if errors.As(err, &ce) {
		line := 0
		if ce.File != nil {
			line = ce.File.Position(ce.Offset).Line
		}
		return &ptc.ScriptError{Message: "SyntaxError: " + ce.Message, Line: line}
	}
	return &ptc.ScriptError{Message: err.Error()}
}

func frameLine(frames []goja.StackFrame, name string) int {
	for _, f := range frames {
		if f.SrcName() == name {
			return f.Position().Line
		}
	}
	return 0
}

// scriptError renders a thrown value: "message" for a plain Error,
// "Name: message" for other error types, String(v) otherwise; the line is
// the first frame in the script.
func scriptError(vm *goja.Runtime, p *ptc.Program, v goja.Value, frames []goja.StackFrame) error {
	se := &ptc.ScriptError{Message: "undefined"}
	if v == nil || goja.IsUndefined(v) {
		se.Line = frameLine(frames, p.Name)
		return se
	}
	if o, ok := v.(*goja.Object); ok {
		name, msg := safeString(o.Get("name")), safeString(o.Get("message"))
		if msg != "" || name != "" {
			se.Message = msg
			if name != "" && name != "Error" {
				se.Message = name + ": " + msg
			}
		} else {
			se.Message = safeString(v)
		}
		if st := safeString(o.Get("stack")); st != "" {
			se.Line = stackLine(st, p.Name)
		}
	} else {
		se.Message = safeString(v)
	}
	if se.Line == 0 {
		se.Line = frameLine(frames, p.Name)
	}
	return se
}

func safeString(v goja.Value) (s string) {
	defer func() {
		if recover() != nil {
			s = ""
		}
	}()
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return ""
	}
	if _, ok := v.(*goja.Object); ok {
		// A thrown object's own toString is script code; do not run it.
		return "[object]"
	}
	return v.String()
}

func stackLine(stack, name string) int {
	re := regexp.MustCompile(regexp.QuoteMeta(name) + `:(\d+):\d+`)
	for _, l := range strings.Split(stack, "\n") {
		if m := re.FindStringSubmatch(l); m != nil {
			var n int
			fmt.Sscanf(m[1], "%d", &n)
			return n
		}
	}
	return 0
}
