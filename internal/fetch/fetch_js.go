package fetch

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"syscall/js"

	"github.com/a3s-lab/code-wasm/internal/jsbridge"
)

// The constructors a request uses, looked up once (each Get is a
// crossing and a reference with a finalizer). fetch itself is looked up
// per request: a host may install or wrap it after start.
var (
	jsAbortController = js.Global().Get("AbortController")
	jsUint8Array      = js.Global().Get("Uint8Array")
	jsArray           = js.Global().Get("Array")
	jsJSON            = js.Global().Get("JSON")
	// undici: the host's fetch is Node's (undici), found by the version
	// Node reports of it. undici tees the body of every request whose
	// redirect mode is not "error" (Fetch's HTTP-network-or-cache step
	// clones the request): a request with a 23 KB body cost 0.61 ms of
	// CPU that way, 0.40 ms in mode "error" (RATIONALE.md, fetch). There
	// a request that should follow redirects is sent in mode "error", and
	// sent again in mode "follow" when undici refuses a redirect: the
	// server answered with a redirect and did nothing else, so the second
	// request is the one following would have made.
	undici = isUndici()
	// helper: the npm loader's fetchBody (npm/src/fetchbody.mjs), which
	// opens a request and reads its body in batches: a resume of Go per
	// batch, where a chunk at a time cost one for the headers, one per
	// chunk and one for the end. Without it (go test's wasm_exec) the
	// body is read a chunk at a time.
	helper = fetchHelper()
)

// fetchHelper is globalThis.__a3sCodeWasmFetch when it is an object with
// open and read, else undefined.
func fetchHelper() js.Value {
	h := js.Global().Get("__a3sCodeWasmFetch")
	if h.Type() != js.TypeObject || h.Get("open").Type() != js.TypeFunction || h.Get("read").Type() != js.TypeFunction {
		return js.Undefined()
	}
	return h
}

// isUndici: globalThis.process.versions.undici is a string.
func isUndici() bool {
	v := js.Global()
	for _, k := range [...]string{"process", "versions", "undici"} {
		if v.Type() != js.TypeObject {
			return false
		}
		v = v.Get(k)
	}
	return v.Type() == js.TypeString
}

// errRedirected is a fetch in mode "error" that met a redirect: undici
// rejects with "fetch failed", its cause "unexpected redirect".
var errRedirected = errors.New("fetch failed: unexpected redirect")

// Redirect modes of initText.
const (
	follow   = ""
	manual   = "manual"
	noFollow = "error"
)

// initText is the part of fetch's init that is text, as JSON, written
// by hand: json.Marshal sorted the header map's keys through reflection,
// a tenth of fetch's Go time in an MCP call.
func initText(method string, header map[string]string, redirect string) string {
	b := make([]byte, 0, 128)
	b = append(b, `{"method":`...)
	b = appendString(b, method)
	if len(header) > 0 {
		b = append(b, `,"headers":{`...)
		sep := false
		for k, v := range header {
			if sep {
				b = append(b, ',')
			}
			b = append(appendString(b, k), ':')
			b = appendString(b, v)
			sep = true
		}
		b = append(b, '}')
	}
	if redirect != follow {
		b = append(append(append(b, `,"redirect":"`...), redirect...), '"')
	}
	return string(append(b, '}'))
}

// appendString appends s as a JSON string: printable ASCII as it is,
// anything else through json.Marshal.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// do calls the global fetch with an AbortController that ctx aborts. It
// runs on a goroutine and only waits on promises through its waiter (await),
// never blocking a js.FuncOf callback.
func do(ctx context.Context, method string, req *Request) (*Response, error) {
	op := "fetch " + req.URL
	ac := jsAbortController.New()
	stop := context.AfterFunc(ctx, func() { _ = call(func() { ac.Call("abort") }) })
	redirect := follow
	switch {
	case req.NoRedirect:
		redirect = manual
	case undici:
		redirect = noFollow
	}
	// The callbacks exist before fetch is called, and then is the only
	// crossing after it: the request leaves when Go yields to the event
	// loop, so Go's work after the call delays it.
	w := newWaiter()
	res, err := send(ctx, w, ac, method, req, redirect)
	if errors.Is(err, errRedirected) && redirect == noFollow {
		res, err = send(ctx, w, ac, method, req, follow)
	}
	if err != nil {
		w.release()
		stop()
		return nil, ctxErr(ctx, op, err)
	}
	b := &body{ctx: ctx, ac: ac, stop: stop, w: w}
	if !helper.IsUndefined() {
		// res is fetchBody's {res, reader, batch}: the batch came with the
		// headers (undefined: none yet).
		b.st, b.reader = res, res.Get("reader")
		if first := res.Get("batch"); !first.IsUndefined() {
			b.next, b.hasNext = first, true
		}
		res = res.Get("res")
	} else if rb := res.Get("body"); rb.Truthy() {
		b.reader = rb.Call("getReader")
	}
	head := func() map[string]string {
		var s string
		if err := call(func() { s = jsArray.Call("from", res.Get("headers")).Call("join", "\n").String() }); err != nil {
			return nil
		}
		return headerMap(s)
	}
	return &Response{Status: res.Get("status").Int(), Body: b, head: head}, nil
}

// send calls fetch once and waits for its response. The init's strings
// cross in one JSON text: a Set per header cost two crossings and a JS
// reference with a finalizer per string. The body is copied for each
// call: undici detaches the buffer it was given. Following a redirect
// undici sends the body again from what it was given, which it cannot do
// from a detached buffer ("Cannot perform ArrayBuffer.prototype.slice on
// a detached ArrayBuffer", Node 20): there the body goes as a Blob.
func send(ctx context.Context, w *waiter, ac js.Value, method string, req *Request, redirect string) (js.Value, error) {
	init := jsJSON.Call("parse", initText(method, req.Header, redirect))
	init.Set("signal", ac.Get("signal"))
	if req.Body != nil {
		b := jsUint8Array.New(len(req.Body))
		js.CopyBytesToJS(b, req.Body)
		if undici && redirect == follow {
			b = js.Global().Get("Blob").New(jsArray.Call("of", b))
		}
		init.Set("body", b)
	}
	var p js.Value
	if err := call(func() {
		if helper.IsUndefined() {
			p = js.Global().Call("fetch", req.URL, init)
		} else {
			p = helper.Call("open", req.URL, init)
		}
	}); err != nil {
		return js.Undefined(), err
	}
	return w.await(ctx, p)
}

// headerMap reads the lines "name,value" that joining the array of a
// Headers' [name, value] pairs with newlines gives: three crossings for
// the whole head, where a forEach callback cost a Go resume per field.
// Names are tokens (no comma) and values hold no newline (Fetch refuses
// both), so the first comma of a line ends its name. Iteration gives
// names in lower case; a repeated field (set-cookie) is joined with ", ".
func headerMap(s string) map[string]string {
	h := map[string]string{}
	for line := range strings.SplitSeq(s, "\n") {
		name, value, ok := strings.Cut(line, ",")
		if !ok {
			continue
		}
		name = strings.ToLower(name)
		if prev, dup := h[name]; dup {
			value = prev + ", " + value
		}
		h[name] = value
	}
	return h
}

// body reads a ReadableStream through its reader, one chunk per promise,
// each chunk copied straight into the caller's buffer.
type body struct {
	ctx    context.Context
	ac     js.Value
	stop   func() bool
	reader js.Value // undefined for a response without a body
	w      *waiter  // the request's callbacks, reused by every read
	buf    []byte   // the unread rest of a chunk longer than the read's buffer
	store  []byte   // buf's backing array, reused
	err    error
	// With the helper: st is fetchBody's state of the response, next a
	// batch it gave before it was asked for (the first, with the headers),
	// and end that the stream ended after the batch read last.
	st      js.Value
	next    js.Value
	hasNext bool
	end     bool
}

// read waits for the reader's next chunk: its value, or undefined at the
// end of the stream. A host that refuses the read (a throw) gives an
// error, not a panic. Through the helper a chunk is a batch of them, and
// null is the end.
func (b *body) read() (js.Value, error) {
	if b.end {
		return js.Undefined(), nil
	}
	if !b.st.IsUndefined() {
		v := b.next
		if !b.hasNext {
			var p js.Value
			err := call(func() { p = helper.Call("read", b.st) })
			if err == nil {
				v, err = b.w.await(b.ctx, p)
			}
			if err != nil {
				return js.Undefined(), err
			}
		}
		b.next, b.hasNext = js.Undefined(), false
		if v.IsNull() {
			return js.Undefined(), nil
		}
		b.end = v.Get("end").Truthy()
		return v, nil
	}
	var r js.Value
	err := call(func() { r = b.reader.Call("read") })
	if err == nil {
		r, err = b.w.await(b.ctx, r)
	}
	if err != nil {
		return js.Undefined(), err
	}
	return r.Get("value"), nil
}

func (b *body) Read(p []byte) (int, error) {
	if len(b.buf) > 0 {
		n := copy(p, b.buf)
		b.buf = b.buf[n:]
		return n, nil
	}
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if b.err != nil {
			b.w.release() // the body awaits nothing more (a second release is a no-op)
			return 0, b.err
		}
		if b.reader.IsUndefined() {
			b.err = io.EOF
			continue
		}
		v, err := b.read()
		if err != nil {
			b.err = ctxErr(b.ctx, "fetch body", err)
			continue
		}
		if v.IsUndefined() { // done
			b.err = io.EOF
			continue
		}
		// The chunk goes straight into p; its length is asked only when
		// it filled p, and a longer chunk's rest waits in store.
		n := js.CopyBytesToGo(p, v)
		if n == len(p) {
			if m := v.Get("byteLength").Int(); m > n {
				if cap(b.store) < m {
					b.store = make([]byte, m)
				}
				js.CopyBytesToGo(b.store[:m], v)
				b.buf = b.store[n:m]
			}
		}
		if n > 0 {
			return n, nil
		}
	}
}

// Close cancels the rest of the body and aborts the request; a body read
// to its end needs neither. The abort carries one reason made once: without
// one, every abort builds a DOMException with its stack, which was a
// visible part of an agent turn's time in wasm.
func (b *body) Close() error {
	done := b.err == io.EOF
	if b.err == nil {
		b.err = errors.New("fetch body: read after close")
	}
	b.stop()
	b.w.release()
	if done {
		return nil
	}
	// A host may refuse these (a Worker, for a stream of another request's
	// I/O): the body is given up either way, and a throw must not end the
	// instance, as a panic on the goroutine that drains it would.
	reason := closedReason()
	_ = call(func() {
		b.ac.Call("abort", reason)
		if !b.reader.IsUndefined() {
			b.reader.Call("cancel", reason).Call("catch", ignore())
		}
	})
	return nil
}

var (
	reasonOnce sync.Once
	reasonErr  js.Value
	ignoreOnce sync.Once
	ignoreFunc js.Func
)

// waiter awaits a request's promises, one at a time (the fetch, then each
// read of its body), through one pair of callbacks made once: a pair per
// promise (jsbridge.Await) cost two FuncOf and their JS values per read.
type waiter struct {
	ch      chan settled
	ok, bad js.Func
	mu      sync.Mutex
	pending bool // a promise holds the callbacks
	done    bool // released, or to release when the pending promise settles
}

type settled struct {
	v   js.Value
	err error
}

func newWaiter() *waiter {
	w := &waiter{ch: make(chan settled, 1)}
	w.ok = js.FuncOf(func(_ js.Value, args []js.Value) any {
		v := js.Undefined()
		if len(args) > 0 {
			v = args[0]
		}
		w.settle(settled{v: v})
		return nil
	})
	// A rejection's message carries its cause (Node says "fetch failed",
	// its cause "connect ECONNREFUSED 127.0.0.1:1").
	w.bad = js.FuncOf(func(_ js.Value, args []js.Value) any {
		msg := "fetch failed"
		var cause string
		if len(args) > 0 {
			msg = jsbridge.JSErrorString(args[0])
			if args[0].Type() == js.TypeObject {
				if c := args[0].Get("cause"); c.Truthy() {
					cause = jsbridge.JSErrorString(c)
					msg += ": " + cause
				}
			}
		}
		err := errors.New(msg)
		if undici && cause == "unexpected redirect" {
			err = errRedirected
		}
		w.settle(settled{err: err})
		return nil
	})
	return w
}

// settle hands s to the await in progress: always, even after release
// (a Close from another goroutine while a read waits). The channel is
// empty unless an await gave up on its context, after which the waiter is
// not awaited again.
func (w *waiter) settle(s settled) {
	select {
	case w.ch <- s:
	default:
	}
	w.mu.Lock()
	w.pending = false
	free := w.done
	w.mu.Unlock()
	if free {
		w.free()
	}
}

// await waits for p, or for ctx to end: then the waiter is not used again
// (a body's error is final) and p's late settlement is dropped.
func (w *waiter) await(ctx context.Context, p js.Value) (js.Value, error) {
	w.mu.Lock()
	w.pending = true
	w.mu.Unlock()
	p.Call("then", w.ok, w.bad)
	select {
	case r := <-w.ch:
		return r.v, r.err
	case <-ctx.Done():
		return js.Undefined(), ctx.Err()
	}
}

// release frees the callbacks, at once or when the promise that holds
// them settles (a released callback that JS calls logs an error).
func (w *waiter) release() {
	w.mu.Lock()
	if w.done {
		w.mu.Unlock()
		return
	}
	w.done = true
	pending := w.pending
	w.mu.Unlock()
	if !pending {
		w.free()
	}
}

func (w *waiter) free() {
	w.ok.Release()
	w.bad.Release()
}

// closedReason is the abort reason of a body closed before its end.
func closedReason() js.Value {
	reasonOnce.Do(func() { reasonErr = js.Global().Get("Error").New("fetch body closed") })
	return reasonErr
}

// ignore is a JS function that does nothing, to swallow a rejection (new
// Function is not allowed in Workers).
func ignore() js.Func {
	ignoreOnce.Do(func() { ignoreFunc = js.FuncOf(func(js.Value, []js.Value) any { return nil }) })
	return ignoreFunc
}

// call runs f, turning a thrown JS exception into an error.
func call(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if je, ok := r.(js.Error); ok {
				err = errors.New(jsbridge.JSErrorString(je.Value))
				return
			}
			panic(r)
		}
	}()
	f()
	return nil
}
