//go:build js && wasm

// Command wasm is the js/wasm entry point: it exports the session API to
// JavaScript and keeps the Go runtime alive. The npm loader (npm/src) sets
// globalThis.__a3sCodeWasmReady before go.run; main hands it the API object.
package main

import (
	"context"
	"encoding/json"
	"syscall/js"

	"github.com/a3s-lab/code-wasm/internal/hostapi"
	"github.com/a3s-lab/code-wasm/internal/jsbridge"
)

// version is stamped by the build (-ldflags -X main.version=...).
var version = "dev"

func main() {
	sessions := hostapi.NewSessions()
	api := js.Global().Get("Object").New()

	coded := func(err error) error {
		if he, ok := err.(*hostapi.Error); ok {
			return jsbridge.Coded(he.Code, he)
		}
		return err
	}
	toJSON := func(v any) (any, error) {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		return string(b), nil
	}

	// createSession(optionsJSON) -> Promise<handle>
	api.Set("createSession", jsbridge.Func(func(this js.Value, args []js.Value) any {
		raw := ""
		if len(args) > 0 && args[0].Type() == js.TypeString {
			raw = args[0].String()
		}
		return jsbridge.Promise(func() (any, error) {
			id, err := sessions.Create(context.Background(), []byte(raw), drivers())
			if err != nil {
				return nil, coded(err)
			}
			return id, nil
		})
	}))

	// callSync(handle, method) -> JSON string, or {error, code}
	api.Set("callSync", jsbridge.Func(func(this js.Value, args []js.Value) any {
		v, err := sessions.CallSync(args[0].Int(), args[1].String())
		if err != nil {
			code := "INTERNAL"
			if he, ok := err.(*hostapi.Error); ok {
				code = he.Code
			}
			return map[string]any{"error": err.Error(), "code": code}
		}
		b, _ := json.Marshal(v)
		return string(b)
	}))

	// call(handle, method, argsJSON, signal?) -> Promise<JSON string>
	api.Set("call", jsbridge.Func(func(this js.Value, args []js.Value) any {
		id, method, raw := args[0].Int(), args[1].String(), args[2].String()
		signal := js.Undefined()
		if len(args) > 3 {
			signal = args[3]
		}
		ctx, stop, err := jsbridge.SignalContext(context.Background(), signal)
		if err != nil {
			return jsbridge.Promise(func() (any, error) { return nil, err })
		}
		return jsbridge.Promise(func() (any, error) {
			defer stop()
			v, err := sessions.Call(ctx, id, method, []byte(raw))
			if err != nil {
				return nil, coded(err)
			}
			return toJSON(v)
		})
	}))

	// nextEvents(handle, sub) -> Promise<JSON {events, done}>
	api.Set("nextEvents", jsbridge.Func(func(this js.Value, args []js.Value) any {
		id, sub := args[0].Int(), args[1].Int()
		return jsbridge.Promise(func() (any, error) {
			v, err := sessions.NextEvents(context.Background(), id, sub)
			if err != nil {
				return nil, coded(err)
			}
			return toJSON(v)
		})
	}))

	api.Set("unsubscribe", jsbridge.Func(func(this js.Value, args []js.Value) any {
		sessions.Unsubscribe(args[0].Int(), args[1].Int())
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
