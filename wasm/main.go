//go:build js && wasm

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"
	"syscall/js"

	"github.com/a3s-lab/code-wasm/internal/hostapi"
	"github.com/a3s-lab/code-wasm/internal/jsbridge"
)

// version is stamped by the build (-ldflags -X main.version=...).
var version = "dev"

func main() {
	sessions := hostapi.NewSessions()
	api := js.Global().Get("Object").New()

	toJSON := func(v any) (any, error) {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		return string(b), nil
	}
	str := func(args []js.Value, i int) string {
		if len(args) > i && args[i].Type() == js.TypeString {
			return args[i].String()
		}
		return ""
	}
	handle := func(args []js.Value) int {
		if len(args) > 0 && args[0].Type() == js.TypeNumber {
			return args[0].Int()
		}
		return 0
	}

	// createSession(optionsJSON, host?, hostKindsJSON?, services?, files?) -> Promise<handle>
	// files: [{index: JSON {paths, sizes}, data: Uint8Array}], or a function
	// answering the next such chunk (undefined at the end): initial files
	// moved as bytes (PROTOCOL.md §1).
	api.Set("createSession", jsbridge.Func(func(this js.Value, args []js.Value) any {
		raw := str(args, 0)
		var host hostapi.Host
		if len(args) > 1 && args[1].Type() == js.TypeFunction {
			host = jsbridge.Caller(args[1])
		}
		services := js.Undefined()
		if len(args) > 3 && args[3].Type() == js.TypeObject {
			services = args[3]
		}
		env := hostapi.Env{Drivers: drivers(services)}
		if k := str(args, 2); k != "" {
			if err := json.Unmarshal([]byte(k), &env.HostKinds); err != nil || env.HostKinds == nil {
				env.HostKinds = nil // malformed: not stated
			}
		}
		if len(args) > 4 && (args[4].Type() == js.TypeObject || args[4].Type() == js.TypeFunction) {
			// An array of chunks, or a function answering the next chunk
			// (undefined at the end): each is copied before the next is
			// asked for, so the caller may refill one buffer.
			files := args[4]
			next := func(i int) js.Value {
				if files.Type() == js.TypeFunction {
					return files.Invoke()
				}
				if i >= files.Length() {
					return js.Undefined()
				}
				return files.Index(i)
			}
			for i := 0; ; i++ {
				c := next(i)
				if c.Type() != js.TypeObject {
					break
				}
				var sc hostapi.SeedChunk
				if err := json.Unmarshal([]byte(c.Get("index").String()), &sc.FileChunk); err != nil {
					return jsbridge.Promise(func() (any, error) {
						return nil, jsbridge.Codedf("INVALID_OPTIONS", "createSession: files chunk %d: %v", i, err)
					})
				}
				sc.Data = goBytes(c.Get("data"))
				env.Files = append(env.Files, sc)
			}
		}
		return jsbridge.Promise(func() (v any, err error) {
			defer guard(&err)
			id, err := sessions.Create(context.Background(), []byte(raw), host, env)
			if err != nil {
				return nil, err
			}
			return id, nil
		})
	}))

	// callSync answers a synchronous method's JSON text, or {error, code}.
	callSync := func(id int, method string, raw []byte) any {
		v, err := func() (v any, err error) {
			defer guard(&err)
			return sessions.CallSync(id, method, raw)
		}()
		if err != nil {
			code, _ := jsbridge.CodeOf(err)
			return map[string]any{"error": err.Error(), "code": code}
		}
		b, err := json.Marshal(v)
		if err != nil {
			return map[string]any{"error": err.Error(), "code": "INTERNAL"}
		}
		return string(b)
	}

	// callSync(handle, method, argsJSON?) -> JSON string, or {error, code}
	api.Set("callSync", jsbridge.Func(func(this js.Value, args []js.Value) any {
		return callSync(handle(args), str(args, 1), []byte(str(args, 2)))
	}))

	// call(handle, method, argsJSON, signal?, after?) -> Promise<JSON string>
	// after: an object {syncState: argsJSON}; once the call has ended, and
	// before its Promise settles, after.state is set to what callSync
	// (handle, 'syncState', argsJSON) answers then (the browser Worker's
	// state read after each call, in the call's own Go entry).
	api.Set("call", jsbridge.Func(func(this js.Value, args []js.Value) any {
		id, method, raw := handle(args), str(args, 1), str(args, 2)
		signal := js.Undefined()
		if len(args) > 3 {
			signal = args[3]
		}
		after, afterArgs := js.Undefined(), ""
		if len(args) > 4 && args[4].Type() == js.TypeObject {
			if a := args[4].Get("syncState"); a.Type() == js.TypeString {
				if !a.Equal(last.argRef) {
					last.argRef, last.arg = a, a.String()
				}
				after, afterArgs = args[4], last.arg
			}
		}
		ctx, stop, err := jsbridge.SignalContext(context.Background(), signal)
		if err != nil {
			return jsbridge.Promise(func() (any, error) { return nil, err })
		}
		return jsbridge.Promise(func() (v any, err error) {
			defer stop()
			if afterArgs != "" {
				defer func() {
					r := callSync(id, "syncState", []byte(afterArgs))
					if t, ok := r.(string); ok {
						if id != last.id || afterArgs != last.stateArg || t != last.text {
							last.id, last.stateArg, last.text, last.state = id, afterArgs, t, js.ValueOf(t)
						}
						r = last.state
					}
					after.Set("state", r)
				}()
			}
			defer guard(&err)
			v, err = sessions.Call(ctx, id, method, []byte(raw))
			if err != nil {
				return nil, err
			}
			return toJSON(v)
		})
	}))

	// callBytes(handle, method, argsJSON, bytes?, signal?, into?) ->
	// Promise<{json?, bytes?}>: call with bytes beside the JSON, both ways
	// (the content methods: readBytes, writeBytes, importFiles, exportFiles,
	// …). into: a Uint8Array the answer's bytes are copied to when they
	// fit (bytes is then a view of it), so pages can share one buffer.
	api.Set("callBytes", jsbridge.Func(func(this js.Value, args []js.Value) any {
		id, method, raw := handle(args), str(args, 1), str(args, 2)
		var in []byte
		if len(args) > 3 && args[3].Type() == js.TypeObject {
			in = goBytes(args[3])
		}
		signal := js.Undefined()
		if len(args) > 4 {
			signal = args[4]
		}
		into := js.Undefined()
		if len(args) > 5 && args[5].InstanceOf(js.Global().Get("Uint8Array")) {
			into = args[5]
		}
		ctx, stop, err := jsbridge.SignalContext(context.Background(), signal)
		if err != nil {
			return jsbridge.Promise(func() (any, error) { return nil, err })
		}
		return jsbridge.Promise(func() (v any, err error) {
			defer stop()
			defer guard(&err)
			v, err = sessions.CallBytes(ctx, id, method, []byte(raw), in)
			if err != nil {
				return nil, err
			}
			out := js.Global().Get("Object").New()
			meta := v
			if b, ok := v.(*hostapi.Bytes); ok {
				meta = b.Meta
				var u js.Value
				if !into.IsUndefined() && len(b.Data) <= into.Length() {
					u = into.Call("subarray", 0, len(b.Data))
				} else {
					u = js.Global().Get("Uint8Array").New(len(b.Data))
				}
				js.CopyBytesToJS(u, b.Data)
				b.Release()
				out.Set("bytes", u)
			}
			if meta != nil {
				j, err := toJSON(meta)
				if err != nil {
					return nil, err
				}
				out.Set("json", j)
			}
			return out, nil
		})
	}))

	// nextEvents(handle, sub) -> Promise<JSON {events, done}>
	api.Set("nextEvents", jsbridge.Func(func(this js.Value, args []js.Value) any {
		id := handle(args)
		sub := 0
		if len(args) > 1 && args[1].Type() == js.TypeNumber {
			sub = args[1].Int()
		}
		return jsbridge.Promise(func() (v any, err error) {
			defer guard(&err)
			v, err = sessions.NextEvents(context.Background(), id, sub)
			if err != nil {
				return nil, err
			}
			return toJSON(v)
		})
	}))

	api.Set("unsubscribe", jsbridge.Func(func(this js.Value, args []js.Value) any {
		if len(args) > 1 && args[1].Type() == js.TypeNumber {
			sessions.Unsubscribe(handle(args), args[1].Int())
		}
		return nil
	}))
	api.Set("version", version)

	ready := js.Global().Get("__a3sCodeWasmReady")
	if ready.Type() == js.TypeFunction {
		ready.Invoke(api)
	} else {
		js.Global().Set("__a3sCodeWasmApi", api)
	}
	select {}
}

// goBytes copies a Uint8Array into Go (nil for anything else; an empty
// array gives an empty, non-nil slice).
func goBytes(v js.Value) []byte {
	if !v.InstanceOf(js.Global().Get("Uint8Array")) {
		return nil
	}
	b := make([]byte, v.Length())
	js.CopyBytesToGo(b, v)
	return b
}

// guard turns a panic into a PANIC error with a short message; the stack
// trace goes to the console (stderr), never into the error a user reads.
func guard(err *error) {
	if r := recover(); r != nil {
		fmt.Fprintf(os.Stderr, "code-wasm: internal panic: %v\n%s", r, debug.Stack())
		*err = &jsbridge.CodedError{Code: hostapi.CodePanic, Err: fmt.Errorf("internal error (a Go panic: %v); the stack trace is in the console", r)}
	}
}

// last: the Worker's syncState arguments, the same JS string after every
// call (while Go holds its js.Value, the same string from JS has the same
// ref: Equal, and it is not copied again), and the last answer, crossed
// once while it stays the same.
var last struct {
	argRef              js.Value
	arg, stateArg, text string
	id                  int
	state               js.Value
}
