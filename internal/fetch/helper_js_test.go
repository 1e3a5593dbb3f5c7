//go:build js

package fetch_test

import (
	"net/url"
	"path/filepath"
	"syscall/js"
	"testing"

	"github.com/a3s-lab/code-wasm/internal/fetch"
)

// TestThroughFetchBody runs the round trip, error, large-body, close and
// redirect tests again through the npm loader's batch helper
// (npm/src/fetchbody.mjs), the path every host of the npm package takes;
// the tests above take the chunk-at-a-time path (go test's wasm_exec has no
// helper). Node only: the module is imported from its file.
func TestThroughFetchBody(t *testing.T) {
	if p := js.Global().Get("process"); p.Type() != js.TypeObject || p.Get("versions").Type() != js.TypeObject ||
		p.Get("versions").Get("node").Type() != js.TypeString {
		t.Skip("the helper is imported from its file: Node only")
	}
	path, err := filepath.Abs("../../npm/src/fetchbody.mjs")
	if err != nil {
		t.Fatal(err)
	}
	u := url.URL{Scheme: "file", Path: path}
	mod, err := await(js.Global().Get("Function").New("u", "return import(u)").Invoke(u.String()))
	if err != nil {
		t.Fatalf("import %s: %v", u.String(), err)
	}
	h := mod.Get("fetchBody")
	if h.Type() != js.TypeObject {
		t.Fatalf("%s has no fetchBody", path)
	}
	defer fetch.UseHelper(h)()
	for name, f := range map[string]func(*testing.T){"RoundTrip": TestRoundTrip, "Errors": TestErrors,
		"LargeBody": TestLargeBody, "CloseWhileReading": TestCloseWhileReading, "Redirects": TestRedirects} {
		t.Run(name, f)
	}
}

// await waits for a promise on the test's goroutine (never in a callback).
func await(p js.Value) (js.Value, error) {
	type settled struct {
		v   js.Value
		err error
	}
	ch := make(chan settled, 1)
	ok := js.FuncOf(func(_ js.Value, args []js.Value) any { ch <- settled{v: args[0]}; return nil })
	bad := js.FuncOf(func(_ js.Value, args []js.Value) any {
		ch <- settled{err: js.Error{Value: args[0]}}
		return nil
	})
	defer ok.Release()
	defer bad.Release()
	p.Call("then", ok, bad)
	s := <-ch
	return s.v, s.err
}
