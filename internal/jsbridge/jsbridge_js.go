//go:build js && wasm

package jsbridge

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"syscall/js"

	"github.com/a3s-lab/code-wasm/internal/hostcall"
)

// CodedError is an error that crosses to JS as an Error with a `code`
// and, when Detail is set, a `detail` (a JSON string): the
// hostcall.Coded of errors made on this side of the bridge.
type CodedError struct {
	Code   string
	Detail string
	Err    error
}

func (e *CodedError) Error() string { return e.Err.Error() }
func (e *CodedError) Unwrap() error { return e.Err }

// ErrorCode is the JS Error's code (hostcall.Coded).
func (e *CodedError) ErrorCode() string { return e.Code }

// ErrorDetail is the JS Error's detail, or "" (hostcall.Coded).
func (e *CodedError) ErrorDetail() string { return e.Detail }

// Coded wraps err with a JS error code.
func Coded(code string, err error) error { return &CodedError{Code: code, Err: err} }

// Codedf makes a coded error from a format.
func Codedf(code, format string, args ...any) error {
	return &CodedError{Code: code, Err: fmt.Errorf(format, args...)}
}

// NewError makes a JS Error with message and, if err is (or wraps) a
// hostcall.Coded, its code and detail; any other error has code INTERNAL.
func NewError(err error) js.Value {
	e := js.Global().Get("Error").New(err.Error())
	code, detail := CodeOf(err)
	e.Set("code", code)
	if detail != "" {
		e.Set("detail", detail)
	}
	return e
}

// CodeOf is the JS code and detail of err: a hostcall.Coded's, or
// INTERNAL for any other error.
func CodeOf(err error) (code, detail string) {
	var ce hostcall.Coded
	if errors.As(err, &ce) {
		return ce.ErrorCode(), ce.ErrorDetail()
	}
	return "INTERNAL", ""
}

// promiseCtor is the global Promise, looked up once: every call crosses
// through Promise and Await, and each lookup is a crossing and a js.Value
// with a finalizer.
var promiseCtor = js.Global().Get("Promise")

// arrayCtor and arrayPush make a Promise's executor without a Go
// callback (Promise).
var (
	arrayCtor = js.Global().Get("Array")
	arrayPush = arrayCtor.Get("prototype").Get("push")
)

// Promise runs fn on a goroutine and returns a JS Promise of its result.
// The executor is Array.prototype.push bound to an array, which keeps
// resolve and reject: a Go executor was one more call from JS into Go per
// call (its event, arguments and their references), and nothing waits in
// it. A panic in fn becomes a rejection with code "PANIC", so one bad call
// never kills the instance.
func Promise(fn func() (any, error)) js.Value {
	fns := arrayCtor.New()
	p := promiseCtor.New(arrayPush.Call("bind", fns))
	resolve, reject := fns.Index(0), fns.Index(1)
	spawn(func() {
		defer func() {
			if r := recover(); r != nil {
				reject.Invoke(NewError(Codedf("PANIC", "internal panic: %v\n%s", r, debug.Stack())))
			}
		}()
		v, err := fn()
		if err != nil {
			reject.Invoke(NewError(err))
			return
		}
		resolve.Invoke(v)
	})
	return p
}

// work hands a Promise's function to a worker waiting for one; idle
// counts the waiting workers, at most maxIdle.
var (
	work = make(chan func())
	idle atomic.Int32
)

const maxIdle = 8

// spawn runs f on a worker that waits for work, or on a new one if none
// waits. A worker keeps its grown stack: a new goroutine per call grew
// its stack from 8 KB again through the whole call (kernel, MCP, fetch,
// JSON), and morestack/copystack was about a seventh of an MCP echo
// call's Go time in wasm.
func spawn(f func()) {
	select {
	case work <- f:
	default:
		go worker(f)
	}
}

func worker(f func()) {
	for {
		f()
		if idle.Add(1) > maxIdle {
			idle.Add(-1)
			return
		}
		f = <-work
		idle.Add(-1)
	}
}

// Func wraps a synchronous Go function for JS; a panic or error is thrown
// as a JS Error (returned as a rejected value is not possible synchronously,
// so the JS side checks for an {error} object).
func Func(fn func(this js.Value, args []js.Value) any) js.Func {
	return js.FuncOf(func(this js.Value, args []js.Value) (ret any) {
		defer func() {
			if r := recover(); r != nil {
				ret = map[string]any{"error": fmt.Sprint(r), "code": "PANIC"}
			}
		}()
		return fn(this, args)
	})
}

// Await waits for a JS Promise from a goroutine (never from inside a
// js.FuncOf callback). It returns the settled value, or the rejection as
// an error, or ctx's error if ctx ends first. The result channel is
// buffered so a late settlement never blocks the event loop.
func Await(ctx context.Context, p js.Value) (js.Value, error) {
	type result struct {
		v   js.Value
		err error
	}
	ch := make(chan result, 1)
	var onOK, onErr js.Func
	onOK = js.FuncOf(func(this js.Value, args []js.Value) any {
		v := js.Undefined()
		if len(args) > 0 {
			v = args[0]
		}
		ch <- result{v: v}
		onOK.Release()
		onErr.Release()
		return nil
	})
	onErr = js.FuncOf(func(this js.Value, args []js.Value) any {
		msg := "promise rejected"
		if len(args) > 0 {
			msg = JSErrorString(args[0])
		}
		ch <- result{err: errors.New(msg)}
		onOK.Release()
		onErr.Release()
		return nil
	})
	if !p.InstanceOf(promiseCtor) {
		p = promiseCtor.Call("resolve", p)
	}
	p.Call("then", onOK, onErr)
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		return js.Undefined(), ctx.Err()
	}
}

// JSErrorString renders a thrown JS value as text.
func JSErrorString(v js.Value) string {
	if v.Type() == js.TypeObject && v.Get("message").Type() == js.TypeString {
		return v.Get("message").String()
	}
	return js.Global().Get("String").Invoke(v).String()
}

// SignalContext derives a context cancelled when the AbortSignal fires.
// A missing (undefined/null) signal gives parent unchanged. The returned
// stop function removes the listener.
func SignalContext(parent context.Context, signal js.Value) (context.Context, context.CancelFunc, error) {
	if signal.IsUndefined() || signal.IsNull() {
		ctx, cancel := context.WithCancel(parent)
		return ctx, cancel, nil
	}
	if signal.Type() != js.TypeObject || signal.Get("aborted").Type() != js.TypeBoolean {
		return nil, nil, Codedf("INVALID_OPTIONS", "signal must be an AbortSignal")
	}
	ctx, cancel := context.WithCancelCause(parent)
	if signal.Get("aborted").Bool() {
		cancel(errors.New("aborted by signal"))
		return ctx, func() {}, nil
	}
	var onAbort js.Func
	onAbort = js.FuncOf(func(this js.Value, args []js.Value) any {
		cancel(errors.New("aborted by signal"))
		return nil
	})
	signal.Call("addEventListener", "abort", onAbort)
	stop := func() {
		signal.Call("removeEventListener", "abort", onAbort)
		onAbort.Release()
		cancel(nil)
	}
	return ctx, stop, nil
}

// Caller returns a Go function that calls the JS function fn(kind,
// payloadJSON, signal[, extra]) from a goroutine and awaits its Promise<string>
// (npm/src/PROTOCOL.md §2). It aborts the AbortSignal it passed when ctx
// ends, so the JS side can stop work; extra is hostcall.Extra(ctx), when
// the call's ctx carries one. Call it only from a goroutine, never
// inside a js.FuncOf callback.
func Caller(fn js.Value) hostcall.Func {
	return func(ctx context.Context, kind string, payload []byte) ([]byte, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ac := js.Global().Get("AbortController").New()
		stop := context.AfterFunc(ctx, func() { ac.Call("abort") })
		defer stop()
		var p js.Value
		args := []any{kind, string(payload), ac.Get("signal")}
		if x := hostcall.Extra(ctx); x != nil {
			args = append(args, x)
		}
		if err := catch(func() { p = fn.Invoke(args...) }); err != nil {
			return nil, err
		}
		v, err := Await(ctx, p)
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("host %s: %w", kind, ctx.Err())
			}
			return nil, fmt.Errorf("host %s: %w", kind, err)
		}
		if v.Type() != js.TypeString {
			return nil, fmt.Errorf("host %s: the dispatcher answered %s, not a JSON string", kind, v.Type())
		}
		return []byte(v.String()), nil
	}
}

// catch runs f, turning a thrown JS exception (a panic of js.Error) into
// an error.
func catch(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if je, ok := r.(js.Error); ok {
				err = errors.New(JSErrorString(je.Value))
				return
			}
			err = fmt.Errorf("%v", r)
		}
	}()
	f()
	return nil
}
