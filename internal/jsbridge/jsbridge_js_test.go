//go:build js && wasm

package jsbridge

import (
	"context"
	"errors"
	"strings"
	"syscall/js"
	"testing"
	"time"
)

// jsFunc evaluates a JS function expression (Node runs these tests).
func jsFunc(t *testing.T, src string) js.Value {
	t.Helper()
	f := js.Global().Get("Function").New("return (" + src + ")").Invoke()
	if f.Type() != js.TypeFunction {
		t.Fatalf("%s is not a function", src)
	}
	return f
}

func TestPromiseSettles(t *testing.T) {
	cases := []struct {
		name     string
		fn       func() (any, error)
		wantVal  string
		wantCode string
	}{
		{"value", func() (any, error) { return "ok", nil }, "ok", ""},
		{"coded error", func() (any, error) { return nil, Codedf("SESSION_CLOSED", "closed") }, "", "SESSION_CLOSED"},
		{"plain error", func() (any, error) { return nil, errors.New("plain") }, "", "INTERNAL"},
		{"panic", func() (any, error) { panic("boom") }, "", "PANIC"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := Await(context.Background(), Promise(c.fn))
			if c.wantCode == "" {
				if err != nil || v.String() != c.wantVal {
					t.Fatalf("got %v, %v", v, err)
				}
				return
			}
			if err == nil {
				t.Fatal("want a rejection")
			}
			// The rejection is a JS Error with a code: check it from JS.
			p := Promise(c.fn)
			codeOf := jsFunc(t, `(p) => p.then(() => 'resolved', (e) => (e instanceof Error) + ':' + e.code)`)
			got, err := Await(context.Background(), codeOf.Invoke(p))
			if err != nil || got.String() != "true:"+c.wantCode {
				t.Fatalf("got %v, %v; want true:%s", got, err, c.wantCode)
			}
		})
	}
}

func TestCodedErrorCarriesDetail(t *testing.T) {
	e := NewError(&CodedError{Code: "TOOL_FAILED", Detail: `{"exitCode":1}`, Err: errors.New("read failed")})
	if e.Get("code").String() != "TOOL_FAILED" || e.Get("detail").String() != `{"exitCode":1}` || e.Get("message").String() != "read failed" {
		t.Fatalf("got code %v detail %v message %v", e.Get("code"), e.Get("detail"), e.Get("message"))
	}
}

func TestAwaitHonoursContext(t *testing.T) {
	never := jsFunc(t, `() => new Promise(() => {})`).Invoke()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := Await(ctx, never); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v", err)
	}
	// A plain value is awaited as a resolved Promise.
	v, err := Await(context.Background(), js.ValueOf(7))
	if err != nil || v.Int() != 7 {
		t.Fatalf("got %v, %v", v, err)
	}
}

func TestSignalContext(t *testing.T) {
	ac := js.Global().Get("AbortController").New()
	ctx, stop, err := SignalContext(context.Background(), ac.Get("signal"))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if ctx.Err() != nil {
		t.Fatal("cancelled before abort")
	}
	ac.Call("abort")
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("abort did not cancel the context")
	}
	pre := js.Global().Get("AbortSignal").Call("abort")
	ctx2, stop2, _ := SignalContext(context.Background(), pre)
	defer stop2()
	if ctx2.Err() == nil {
		t.Fatal("an aborted signal must give a cancelled context")
	}
	if _, _, err := SignalContext(context.Background(), js.ValueOf("nope")); err == nil {
		t.Fatal("a string is not an AbortSignal")
	}
	ctx3, stop3, err := SignalContext(context.Background(), js.Undefined())
	if err != nil || ctx3.Err() != nil {
		t.Fatalf("undefined signal: %v %v", err, ctx3.Err())
	}
	stop3()
}

func TestCaller(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name, src, want, wantErr string
	}{
		{"async string", `async (kind, payload) => JSON.stringify({kind, got: JSON.parse(payload)})`, `{"kind":"hook","got":{"a":1}}`, ""},
		{"sync string", `(kind) => '"' + kind + '"'`, `"hook"`, ""},
		{"throws", `() => { throw new Error('handler exploded') }`, "", "handler exploded"},
		{"rejects", `async () => { throw new Error('async exploded') }`, "", "async exploded"},
		{"not a string", `async () => 42`, "", "not a JSON string"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := Caller(jsFunc(t, c.src))(ctx, "hook", []byte(`{"a":1}`))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("got %q, %v; want error %q", out, err, c.wantErr)
				}
				return
			}
			if err != nil || string(out) != c.want {
				t.Fatalf("got %q, %v; want %q", out, err, c.want)
			}
		})
	}
	t.Run("aborts its signal when ctx ends", func(t *testing.T) {
		state := js.Global().Get("Object").New()
		js.Global().Set("__callerState", state)
		defer js.Global().Delete("__callerState")
		f := jsFunc(t, `(kind, payload, signal) => new Promise((resolve) => {
			signal.addEventListener('abort', () => { globalThis.__callerState.aborted = true; resolve('"late"'); });
		})`)
		cctx, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
		defer cancel()
		if _, err := Caller(f)(cctx, "budget", []byte(`{}`)); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v", err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for !state.Get("aborted").Truthy() {
			if time.Now().After(deadline) {
				t.Fatal("the handler's signal was not aborted")
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
}
