package fetch

import (
	"context"
	"strings"
	"syscall/js"
	"testing"
	"time"
)

// TestWaiterAwaitsAnyValue: a host's fetch or read() that answers with a
// value that is not a promise gets that value back, and a then method
// that throws gets an error; neither panics (a panic ends the wasm instance).
// A real promise still settles through the same waiter afterwards.
func TestWaiterAwaitsAnyValue(t *testing.T) {
	w := newWaiter()
	defer w.release()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	v, err := w.await(ctx, js.ValueOf(42))
	if err != nil || v.Int() != 42 {
		t.Fatalf("await(42) = %v, %v; want 42, nil", v, err)
	}
	obj := js.Global().Get("Object").New()
	obj.Set("done", true)
	if v, err := w.await(ctx, obj); err != nil || !v.Get("done").Bool() {
		t.Fatalf("await({done:true}) = %v, %v; want the object itself", v, err)
	}
	// JSON.parse as a then method throws a SyntaxError (it parses the
	// text of the callback it is given).
	bad := js.Global().Get("Object").New()
	bad.Set("then", js.Global().Get("JSON").Get("parse"))
	if _, err := w.await(ctx, bad); err == nil || !strings.Contains(err.Error(), "is not valid JSON") {
		t.Fatalf("await(an object whose then throws) = %v; want the SyntaxError JSON.parse threw", err)
	}
	p := js.Global().Get("Promise").Call("resolve", "later")
	if v, err := w.await(ctx, p); err != nil || v.String() != "later" {
		t.Fatalf("await(Promise.resolve('later')) = %v, %v", v, err)
	}
}
