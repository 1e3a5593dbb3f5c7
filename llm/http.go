package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a3s-lab/code-wasm/errkind"
	"github.com/a3s-lab/code-wasm/internal/fetch"
)

// Retry timing (upstream core/src/retry.rs): backoff from 1 s doubling to
// 30 s with ±25 % jitter, unless the server's retry-after-ms or
// retry-after names a wait of at most maxRetryAfter.
const (
	backoffBase   = time.Second
	backoffCap    = 30 * time.Second
	maxRetryAfter = 60 * time.Second
	maxErrorBody  = 64 << 10
)

// errStalled is the cause of an attempt's context when the server kept
// silent for timeoutMs.
var errStalled = errors.New("stalled")

// transport sends a client's requests: retries before the stream, the
// timeout on silence, and the classification of failures.
type transport struct {
	cfg   Config
	tools *toolsCache
}

// open posts body and returns the response body of the first attempt that
// answered 2xx, retrying 408, 429, 5xx, network failures and silences
// before it, and a 2xx whose body fails or ends before its first byte
// (never after a byte: the caller owns the stream). The body fails with
// an *Error of kind timeout if the server then keeps silent for timeoutMs.
func (t *transport) open(ctx context.Context, url string, header map[string]string, body []byte) (*timedBody, error) {
	timeout := time.Duration(t.cfg.TimeoutMs) * time.Millisecond
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithCancelCause(ctx)
		b := &timedBody{t: t, ctx: ctx, actx: actx, timeout: timeout, cancel: cancel, start: time.Now()}
		b.timer = time.AfterFunc(time.Hour, b.expire)
		b.timer.Reset(timeout)
		res, err := fetch.Do(actx, &fetch.Request{Method: "POST", URL: url, Header: header, Body: body})
		var e *Error
		switch {
		case err != nil:
			e = t.failure(ctx, actx, err)
		case res.Status/100 == 2:
			b.rc = res.Body
			// The first bytes decide: a body that fails or ends before
			// any byte consumed nothing, so it is retried like a network
			// failure.
			if e = b.peek(); e == nil {
				return b, nil
			}
			b.Close()
		default:
			e = httpError(res)
		}
		b.timer.Stop()
		cancel(nil)
		e.Attempts = attempt
		if ctx.Err() != nil || !retryable(e) || attempt > *t.cfg.MaxRetries {
			return nil, e
		}
		wait := e.RetryAfter
		if !e.hinted {
			wait = backoff(attempt, rand.Float64())
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, t.failure(ctx, ctx, ctx.Err())
		}
	}
}

// backoff is the wait before retry number attempt (1-based), jittered by
// r in [0,1).
func backoff(attempt int, r float64) time.Duration {
	d := backoffBase << min(attempt-1, 5)
	d = min(d, backoffCap)
	return time.Duration(float64(d) * (0.75 + 0.5*r))
}

func retryable(e *Error) bool {
	switch {
	case e.Status == 0:
		return e.kind == errkind.Transport || e.kind == errkind.Timeout
	case e.Status == 408 || e.Status == 429 || e.Status >= 500:
		return true
	}
	return false
}

// failure classifies err, a failure of the attempt context actx under ctx.
func (t *transport) failure(ctx, actx context.Context, err error) *Error {
	switch {
	case ctx.Err() != nil:
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return &Error{kind: errkind.Timeout, Message: "llm request: the deadline passed", err: ctx.Err()}
		}
		return &Error{kind: errkind.Cancelled, Message: "llm request cancelled", err: ctx.Err()}
	case context.Cause(actx) == errStalled:
		return &Error{kind: errkind.Timeout, Message: fmt.Sprintf("llm request: no answer from the server for %d ms (timeoutMs)", t.cfg.TimeoutMs), err: err}
	}
	return &Error{kind: errkind.Transport, Message: "llm request: " + err.Error(), err: err}
}

// httpError reads an error answer: its status, the provider's error type
// and message ({"error":{"type","message"}} in both wire formats), and the
// retry hint.
func httpError(res *fetch.Response) *Error {
	b, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	res.Body.Close()
	e := &Error{kind: errkind.Transport, Status: res.Status}
	if ra := retryAfter(res.Header()); ra >= 0 {
		e.RetryAfter, e.hinted = ra, true
	}
	if res.Status == 429 {
		e.kind = errkind.RateLimited
	}
	e.Type, e.Message = errorBody(b)
	if e.Message == "" {
		e.Message = "the server answered without a message"
	}
	return e
}

// errorBody extracts a provider error's type and message from an error
// answer or an error event; it falls back to the text of the body.
func errorBody(b []byte) (typ, msg string) {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(b, &v) == nil {
		var inner struct{ Type, Message string }
		var s string
		switch {
		case json.Unmarshal(v.Error, &inner) == nil && inner.Message != "":
			return inner.Type, inner.Message
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			return "", s
		case v.Message != "":
			return "", v.Message
		}
	}
	s := strings.TrimSpace(string(b))
	if len(s) > 500 {
		s = s[:500] + "…"
	}
	return "", s
}

// retryAfter reads retry-after-ms, then retry-after (seconds or an HTTP
// date); -1 when neither names a wait within maxRetryAfter.
func retryAfter(h map[string]string) time.Duration {
	if v, err := strconv.ParseFloat(strings.TrimSpace(h["retry-after-ms"]), 64); err == nil && v >= 0 && v <= float64(maxRetryAfter.Milliseconds()) {
		return time.Duration(v * float64(time.Millisecond))
	}
	ra := strings.TrimSpace(h["retry-after"])
	if v, err := strconv.ParseFloat(ra, 64); err == nil && v >= 0 && v <= maxRetryAfter.Seconds() {
		return time.Duration(v * float64(time.Second))
	}
	if at, err := time.Parse(time.RFC1123, ra); err == nil {
		if d := time.Until(at); d >= 0 && d <= maxRetryAfter {
			return d
		}
	}
	return -1
}

// timedBody is a stream body whose silence longer than timeout ends the
// request with a timeout, and whose failures are *Error.
type timedBody struct {
	t         *transport
	ctx, actx context.Context
	rc        io.ReadCloser
	timer     *time.Timer
	timeout   time.Duration
	cancel    context.CancelCauseFunc
	first     []byte // peeked, not yet read

	// A read notes its time instead of resetting the timer (a Reset cost
	// 8 µs under js/wasm, a clock read 1 µs); the timer, when it fires,
	// waits out the rest of the silence or ends the request.
	start    time.Time
	last     atomic.Int64 // the last read's time, ns since start
	draining atomic.Bool
}

// expire ends the request once the server has been silent for timeout
// (at once while draining).
func (b *timedBody) expire() {
	if !b.draining.Load() {
		if idle := time.Since(b.start) - time.Duration(b.last.Load()); idle < b.timeout {
			b.timer.Reset(b.timeout - idle)
			return
		}
	}
	b.cancel(errStalled)
}

// sseBufs holds the SSE buffers of ended streams (4 KiB, or what a long
// line grew one to, at most maxPooledSSE): a new buffer per request was
// 8 KB of an agent turn's 107 KB in wasm. Only stream puts one back,
// after its last read; a chunk holds strings, never the buffer.
var sseBufs sync.Pool

const maxPooledSSE = 64 << 10

// peek reads the body's first bytes, into the 4 KiB buffer the SSE
// reader goes on in (stream).
func (b *timedBody) peek() *Error {
	var buf []byte
	if p, ok := sseBufs.Get().(*[]byte); ok {
		buf = (*p)[:cap(*p)]
	} else {
		buf = make([]byte, 4096)
	}
	for {
		n, err := b.Read(buf)
		if n > 0 {
			b.first = buf[:n]
			return nil
		}
		if err == io.EOF {
			return &Error{kind: errkind.Transport, Message: "llm request: the server answered 200 with an empty body"}
		}
		if err != nil {
			return err.(*Error)
		}
	}
}

func (b *timedBody) Read(p []byte) (int, error) {
	if len(b.first) > 0 {
		n := copy(p, b.first)
		b.first = b.first[n:]
		return n, nil
	}
	n, err := b.rc.Read(p)
	if err != nil && err != io.EOF {
		return n, b.t.failure(b.ctx, b.actx, err)
	}
	b.last.Store(int64(time.Since(b.start)))
	return n, err
}

// drainWait and drainMax bound drain. drainWait was 20 ms: under load
// (a JS event loop busy elsewhere) the end of a body the server had
// already finished took longer to read, the bound cut it off, and the
// aborted request gave up its connection (the suite's ConnectionReused
// failed in Chromium). Only a server that holds a stream open after its
// last event waits it out, once per request.
const (
	drainWait = time.Second
	drainMax  = 64 << 10
)

// drain reads what follows the stream's last event ([DONE],
// message_stop) up to the body's end, briefly, so that Close finds the
// body finished: closing it earlier aborts the request, which in a JS
// fetch cost more than the rest of the response's handling and, like an
// early close natively, gives up the connection instead of reusing it.
// The stream's end (and so Collect) waits for it. A server that holds
// the stream open after its last event is cut off after drainWait (1 s).
// buf is free space to read into (the SSE reader's buffer, done with).
func (b *timedBody) drain(buf []byte) {
	b.first = nil
	b.draining.Store(true)
	b.timer.Reset(drainWait)
	for n := 0; n < drainMax; {
		m, err := b.rc.Read(buf)
		if err != nil {
			return
		}
		n += m
	}
}

func (b *timedBody) Close() error {
	b.timer.Stop()
	err := b.rc.Close() // before cancel: a finished body needs no abort
	b.cancel(nil)
	return err
}

// decoder turns one provider's SSE events into chunks, appended to out.
type decoder interface {
	// event handles one event; done reports the end of the stream.
	event(name string, data []byte, out *[]Chunk) (done bool, err error)
	// eof handles the end of the body before done.
	eof(out *[]Chunk) error
}

// request checks req, encodes its wire body, adds the configured headers
// to h (theirs win) and streams the answer of path through a new decoder.
func (t *transport) request(ctx context.Context, req Request, path string, h map[string]string,
	body func(r *Request, wire []byte) ([]byte, error), newDecoder func() decoder) iter.Seq2[Chunk, error] {
	for k, v := range t.cfg.Headers {
		h[strings.ToLower(k)] = v
	}
	return func(yield func(Chunk, error) bool) {
		wire := t.tools.lookup(req.Tools)
		if err := req.check(wire != nil); err != nil {
			yield(Chunk{}, err)
			return
		}
		b, err := body(&req, wire)
		if err != nil {
			yield(Chunk{}, &Error{kind: errkind.InvalidArgument, Message: "llm request: " + err.Error()})
			return
		}
		t.stream(ctx, t.cfg.BaseURL+path, h, b, newDecoder(), yield)
	}
}

// stream opens the request and yields what d makes of its events. Breaking
// out of the caller's loop closes the body, which aborts the request.
func (t *transport) stream(ctx context.Context, url string, header map[string]string, body []byte, d decoder, yield func(Chunk, error) bool) {
	rc, err := t.open(ctx, url, header, body)
	if err != nil {
		yield(Chunk{}, err)
		return
	}
	// The SSE reader starts in peek's buffer, on the bytes peek read: a
	// second 4 KiB buffer and a copy per request, and drain reads into it.
	sse := &sseReader{r: rc, buf: rc.first[:cap(rc.first)], end: len(rc.first)}
	rc.first = nil
	defer func() {
		rc.Close()
		if cap(sse.buf) <= maxPooledSSE {
			buf := sse.buf
			sseBufs.Put(&buf)
		}
	}()
	var out []Chunk
	for {
		name, data, err := sse.next()
		done, eof := false, false
		switch {
		case err == io.EOF:
			err, done, eof = d.eof(&out), true, true
		case err == nil:
			done, err = d.event(name, data, &out)
		default:
			var e *Error
			if !errors.As(err, &e) {
				err = &Error{kind: errkind.Transport, Message: "llm stream: " + err.Error(), err: err}
			}
		}
		for _, c := range out {
			if !yield(c, nil) {
				return
			}
		}
		out = out[:0]
		if err != nil {
			yield(Chunk{}, err)
			return
		}
		if done {
			if !eof {
				rc.drain(sse.buf)
			}
			return
		}
	}
}

// malformed is the error of an event a decoder cannot read.
func malformed(format string, a ...any) error {
	return &Error{kind: errkind.Transport, Message: "llm stream: " + fmt.Sprintf(format, a...)}
}
