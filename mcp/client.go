package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/a3s-lab/code-wasm/errkind"
	"github.com/a3s-lab/code-wasm/internal/fetch"
)

// ProtocolVersion is the MCP revision the client asks for.
const ProtocolVersion = "2025-11-25"

// accepted are the revisions a server may answer with.
var accepted = map[string]bool{"2025-11-25": true, "2025-06-18": true, "2025-03-26": true}

// maxPages bounds tools/list paging; maxMessage bounds one JSON-RPC message.
const (
	maxPages   = 100
	maxMessage = 16 << 20
)

// Error is a client failure with its error kind (transport, timeout,
// cancelled, unsupported), or a JSON-RPC error answer (Kind "").
type Error struct {
	kind errkind.Kind
	msg  string
	err  error
}

func (e *Error) Error() string      { return e.msg }
func (e *Error) Unwrap() error      { return e.err }
func (e *Error) Kind() errkind.Kind { return e.kind }

func transportErr(format string, a ...any) error {
	return &Error{kind: errkind.Transport, msg: "mcp transport: " + fmt.Sprintf(format, a...)}
}

// ctxOr reports ctx's end as timeout or cancelled, else wraps err as
// transport.
func ctxOr(ctx context.Context, err error) error {
	switch ctx.Err() {
	case context.DeadlineExceeded:
		return &Error{kind: errkind.Timeout, msg: "mcp: the deadline passed before the server answered", err: ctx.Err()}
	case context.Canceled:
		return &Error{kind: errkind.Cancelled, msg: "mcp: cancelled", err: ctx.Err()}
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return &Error{kind: errkind.Transport, msg: "mcp transport: " + err.Error(), err: err}
}

// errSessionLost: the server no longer knows the session (404, or a 400
// naming the session); it ran nothing, so the request may be resent.
var errSessionLost = errors.New("mcp: session lost")

// Client is a Streamable HTTP MCP client of one server. Safe for
// concurrent use.
type Client struct {
	url    string
	header map[string]string
	id     atomic.Int64

	mu      sync.Mutex
	session string            // Mcp-Session-Id, "" before initialize or when none
	proto   string            // negotiated protocol version
	hdr     map[string]string // the request header for session and proto; nil when they changed

	noDrain atomic.Bool // the server held a stream open after its answer
}

// Connect initializes a session with the server at url. header is sent
// with every request (for example Authorization).
func Connect(ctx context.Context, url string, header map[string]string) (*Client, error) {
	c := &Client{url: url, header: header}
	if err := c.initialize(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Client) initialize(ctx context.Context) error {
	c.mu.Lock()
	c.session, c.proto, c.hdr = "", "", nil
	c.mu.Unlock()
	params := map[string]any{
		"protocolVersion": ProtocolVersion,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "a3s-code-wasm", "version": "1"},
	}
	res, err := rpc[struct {
		ProtocolVersion string `json:"protocolVersion"`
	}](ctx, c, "initialize", params, nil)
	if err != nil {
		return err
	}
	if !accepted[res.ProtocolVersion] {
		return &Error{kind: errkind.Unsupported, msg: fmt.Sprintf("mcp: the server speaks protocol %q; this client speaks %s, 2025-06-18 and 2025-03-26", res.ProtocolVersion, ProtocolVersion)}
	}
	c.mu.Lock()
	c.proto, c.hdr = res.ProtocolVersion, nil
	c.mu.Unlock()
	return c.notify(ctx, "notifications/initialized", nil)
}

// call sends a request and decodes its result as a T; a lost session is
// re-initialized once and the request resent.
func call[T any](ctx context.Context, c *Client, method string, params any, id *int64) (*T, error) {
	res, err := rpc[T](ctx, c, method, params, id)
	if errors.Is(err, errSessionLost) {
		if err = c.initialize(ctx); err != nil {
			return nil, err
		}
		res, err = rpc[T](ctx, c, method, params, id)
	}
	if errors.Is(err, errSessionLost) {
		return nil, transportErr("%s: the server lost the session again after re-initializing", method)
	}
	return res, err
}

// ToolInfo is one tool as tools/list describes it.
type ToolInfo struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	Annotations *struct {
		ReadOnlyHint   *bool `json:"readOnlyHint,omitempty"`
		IdempotentHint *bool `json:"idempotentHint,omitempty"`
	} `json:"annotations,omitempty"`
	Execution *struct {
		TaskSupport string `json:"taskSupport,omitempty"`
	} `json:"execution,omitempty"`
}

// ListTools lists every tool, following nextCursor pages.
func (c *Client) ListTools(ctx context.Context) ([]ToolInfo, error) {
	var all []ToolInfo
	cursor := ""
	for range maxPages {
		var params any
		if cursor != "" {
			params = map[string]any{"cursor": cursor}
		}
		page, err := call[struct {
			Tools      []ToolInfo `json:"tools"`
			NextCursor string     `json:"nextCursor"`
		}](ctx, c, "tools/list", params, nil)
		if err != nil {
			return nil, err
		}
		all = append(all, page.Tools...)
		if page.NextCursor == "" {
			return all, nil
		}
		cursor = page.NextCursor
	}
	return nil, transportErr("tools/list: more than %d pages", maxPages)
}

// Content is one content block of a tool result.
type Content struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
	Data     string `json:"data,omitempty"`
	URI      string `json:"uri,omitempty"`
	Name     string `json:"name,omitempty"`
	Resource *struct {
		URI      string `json:"uri"`
		MimeType string `json:"mimeType,omitempty"`
		Text     string `json:"text,omitempty"`
	} `json:"resource,omitempty"`
}

// CallResult is a tools/call result.
type CallResult struct {
	Content           []Content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
}

type callParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// CallTool calls a tool. When ctx ends before the answer, the server is
// told with notifications/cancelled.
func (c *Client) CallTool(ctx context.Context, name string, args json.RawMessage) (*CallResult, error) {
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	id := c.id.Add(1)
	res, err := call[CallResult](ctx, c, "tools/call", callParams{Name: name, Arguments: args}, &id)
	if err != nil {
		if ctx.Err() != nil {
			go func() {
				nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
				defer cancel()
				_ = c.notify(nctx, "notifications/cancelled", map[string]any{"requestId": id, "reason": ctx.Err().Error()})
			}()
		}
		return nil, err
	}
	return res, nil
}

// Close ends the session with a DELETE (best effort).
func (c *Client) Close(ctx context.Context) error {
	c.mu.Lock()
	sid := c.session
	c.mu.Unlock()
	if sid == "" {
		return nil
	}
	res, err := fetch.Do(ctx, &fetch.Request{Method: "DELETE", URL: c.url, Header: c.headers()})
	if err != nil {
		return ctxOr(ctx, err)
	}
	res.Body.Close()
	return nil
}

// headers is the header of a request, made once per session and
// protocol version and shared by the requests: read it, never change it.
func (c *Client) headers() map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.hdr != nil {
		return c.hdr
	}
	h := make(map[string]string, len(c.header)+4)
	for k, v := range c.header {
		h[k] = v
	}
	h["Content-Type"] = "application/json"
	h["Accept"] = "application/json, text/event-stream"
	if c.session != "" {
		h["Mcp-Session-Id"] = c.session
	}
	if c.proto != "" {
		h["Mcp-Protocol-Version"] = c.proto
	}
	c.hdr = h
	return h
}

func (c *Client) notify(ctx context.Context, method string, params any) error {
	body, _ := json.Marshal(request{JSONRPC: "2.0", Method: method, Params: params})
	res, err := fetch.Do(ctx, &fetch.Request{Method: "POST", URL: c.url, Header: c.headers(), Body: body})
	if err != nil {
		return ctxOr(ctx, err)
	}
	defer res.Body.Close()
	if res.Status >= 300 {
		return transportErr("%s: HTTP %d", method, res.Status)
	}
	return nil
}

// request is a JSON-RPC request; without an ID, a notification.
type request struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int64  `json:"id,omitempty"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// message is a JSON-RPC message whose result, if any, is a T: the
// answer is decoded in one pass, where a json.RawMessage result decoded
// again cost a second scan of it.
type message[T any] struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result *T              `json:"result"`
	Error  *rpcError       `json:"error"`
}

// encodeRequest is the JSON text of request n. A tools/call is written
// by hand around its arguments, which are checked, not compacted: json.Marshal
// of a json.RawMessage compacts it, a scan and a copy of every call's
// arguments.
func encodeRequest(method string, n int64, params any) ([]byte, error) {
	p, ok := params.(callParams)
	if !ok || !plainName(p.Name) {
		return json.Marshal(request{JSONRPC: "2.0", ID: n, Method: method, Params: params})
	}
	if !json.Valid(p.Arguments) {
		return nil, fmt.Errorf("the arguments are not valid JSON")
	}
	b := make([]byte, 0, 80+len(p.Name)+len(p.Arguments))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, n, 10)
	b = append(b, `,"method":"`...)
	b = append(b, method...)
	b = append(b, `","params":{"name":"`...)
	b = append(b, p.Name...)
	b = append(b, `","arguments":`...)
	b = append(b, p.Arguments...)
	return append(b, "}}"...), nil
}

// plainName says s needs no escape in a JSON string (and none of
// json.Marshal's HTML escapes).
func plainName(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// rpc sends one request and reads its answer, as JSON or as an SSE
// stream, decoding its result as a T.
func rpc[T any](ctx context.Context, c *Client, method string, params any, id *int64) (*T, error) {
	n := c.id.Add(1)
	if id != nil {
		n = *id
	}
	body, err := encodeRequest(method, n, params)
	if err != nil {
		return nil, &Error{kind: errkind.InvalidArgument, msg: "mcp " + method + ": " + err.Error()}
	}
	header := c.headers()
	hadSession := header["Mcp-Session-Id"] != ""
	// The request lives until ctx ends, or until its answer arrived and
	// the rest of its stream was drained after the call returned.
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	res, err := fetch.Do(rctx, &fetch.Request{Method: "POST", URL: c.url, Header: header, Body: body})
	if err != nil {
		stop()
		cancel()
		return nil, ctxOr(ctx, err)
	}
	drained := false
	defer func() {
		if !drained {
			stop()
			res.Body.Close()
			cancel()
		}
	}()
	if res.Status >= 400 {
		text, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
		if hadSession && (res.Status == 404 || res.Status == 400 && bytes.Contains(bytes.ToLower(text), []byte("session"))) {
			return nil, errSessionLost
		}
		return nil, transportErr("%s: HTTP %d: %s", method, res.Status, strings.TrimSpace(string(text)))
	}
	if sid := res.Header()["mcp-session-id"]; sid != "" && sid != header["Mcp-Session-Id"] {
		c.mu.Lock()
		c.session, c.hdr = sid, nil
		c.mu.Unlock()
	}
	want := strconv.FormatInt(n, 10)
	ct := res.Header()["content-type"]
	if strings.HasPrefix(ct, "text/event-stream") {
		raw, err := readSSE[T](ctx, res.Body, method, want)
		if err == nil && !c.noDrain.Load() && stop() {
			drained = true
			go c.drain(res.Body, cancel)
		}
		return raw, err
	}
	data, err := io.ReadAll(io.LimitReader(res.Body, maxMessage+1))
	if err != nil {
		return nil, ctxOr(ctx, err)
	}
	if len(data) > maxMessage {
		return nil, transportErr("%s: the answer is over %d bytes", method, maxMessage)
	}
	raw, done, err := match[T](data, want, method)
	if err == nil && !done {
		err = transportErr("%s: the answer does not answer request %s", method, want)
	}
	return raw, err
}

// match decodes one JSON-RPC message; done says it is the answer to want.
func match[T any](data []byte, want, method string) (*T, bool, error) {
	var t T
	if r, ok := any(&t).(*CallResult); ok && fastCall(data, want, r) {
		return &t, true, nil
	}
	var m message[T]
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, false, transportErr("%s: malformed JSON-RPC message: %v", method, err)
	}
	if m.Method != "" || string(m.ID) != want {
		return nil, false, nil // a notification or a server request: not ours
	}
	if m.Error != nil {
		return nil, true, &Error{msg: fmt.Sprintf("mcp %s: error %d: %s", method, m.Error.Code, m.Error.Message)}
	}
	if m.Result == nil {
		return nil, true, transportErr("%s: the answer has neither result nor error", method)
	}
	return m.Result, true, nil
}

// drainWait bounds drain.
const drainWait = time.Second

// drain reads the rest of a stream whose answer was returned, up to its
// end, on its own goroutine, then closes it. A stream read to its end
// needs no abort, and its connection serves the next request: the abort
// of a JS fetch was about a tenth of a call's CPU, and natively an early
// close gives up the connection. The call does not wait for the end. The
// spec says a server SHOULD close the stream after its response; one that
// holds it open is cut off after drainWait, and its client drains no more.
// (A 20 ms bound, waited for by the call, ran out under load in the first
// calls of a session, so that every later call aborted.)
func (c *Client) drain(body io.ReadCloser, cancel context.CancelFunc) {
	t := time.AfterFunc(drainWait, func() {
		c.noDrain.Store(true)
		cancel()
	})
	var buf [512]byte
	for n := 0; n < 64<<10; {
		m, err := body.Read(buf[:])
		if err != nil {
			break
		}
		n += m
	}
	t.Stop()
	body.Close()
	cancel()
}

// readers are readSSE's buffers, reused: a 32 KiB buffer made per call
// was two thirds of a call's allocation.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 32<<10) }}

// readSSE reads events until the answer to want; empty events (priming)
// and other messages are skipped. A stream ending first is a transport
// failure at once.
func readSSE[T any](ctx context.Context, body io.Reader, method, want string) (*T, error) {
	r := readers.Get().(*bufio.Reader)
	r.Reset(body)
	defer func() { r.Reset(nil); readers.Put(r) }()
	var data, long []byte
	has := false
	for {
		line, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull || len(long) > 0 {
			if len(long)+len(line) > maxMessage+16 {
				return nil, transportErr("%s: an SSE event is over %d bytes", method, maxMessage)
			}
			long = append(long, line...)
			if err == bufio.ErrBufferFull {
				continue
			}
			line, long = long, long[:0]
		}
		if err != nil {
			if err == io.EOF {
				return nil, transportErr("%s: the stream ended before the response arrived", method)
			}
			return nil, ctxOr(ctx, err)
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0:
			if has && len(bytes.TrimSpace(data)) > 0 {
				raw, done, err := match[T](data, want, method)
				if err != nil || done {
					return raw, err
				}
			}
			data, has = data[:0], false
		case bytes.HasPrefix(line, []byte("data:")):
			v := bytes.TrimPrefix(line[5:], []byte(" "))
			if has {
				data = append(data, '\n')
			}
			if len(data)+len(v) > maxMessage {
				return nil, transportErr("%s: an SSE event is over %d bytes", method, maxMessage)
			}
			data, has = append(data, v...), true
		}
	}
}

// fastCall decodes the common answer to tools/call want, text content
// only, `{"result":{"content":[{"type":"text","text":"…"}]},"jsonrpc":"2.0",
// "id":7}` with its keys in any order, into r, without reflection: the
// reflective decode was the largest Go part of an echo call in wasm after
// fetch. Anything else (another key, an escape in a string, another id, a
// repeated key) says false and leaves it to json.Unmarshal.
func fastCall(data []byte, want string, r *CallResult) bool {
	c := &cursor{b: data}
	var seen [3]bool // jsonrpc, id, result
	once := func(i int) bool {
		if seen[i] {
			return false
		}
		seen[i] = true
		return true
	}
	ok := c.object(func(k string) bool {
		switch k {
		case "jsonrpc":
			_, ok := c.str()
			return once(0) && ok
		case "id":
			c.ws()
			j := c.i
			for j < len(c.b) && c.b[j] >= '0' && c.b[j] <= '9' {
				j++
			}
			if string(c.b[c.i:j]) != want {
				return false
			}
			c.i = j
			return once(1)
		case "result":
			return once(2) && c.object(func(k string) bool {
				if k != "content" || r.Content != nil || !c.next('[') {
					return false
				}
				r.Content = []Content{}
				if c.next(']') {
					return true
				}
				for {
					var b Content
					var typ, text bool
					if !c.object(func(k string) bool {
						var ok bool
						switch {
						case k == "type" && !typ:
							b.Type, ok = c.str()
							typ = true
						case k == "text" && !text:
							b.Text, ok = c.str()
							text = true
						}
						return ok
					}) {
						return false
					}
					r.Content = append(r.Content, b)
					if !c.next(',') {
						return c.next(']')
					}
				}
			})
		}
		return false
	})
	c.ws()
	return ok && seen[1] && seen[2] && c.i == len(c.b)
}

// cursor reads JSON for fastCall.
type cursor struct {
	b []byte
	i int
}

func (c *cursor) ws() {
	for c.i < len(c.b) && (c.b[c.i] == ' ' || c.b[c.i] == '\t' || c.b[c.i] == '\n' || c.b[c.i] == '\r') {
		c.i++
	}
}

// next consumes x, after white space, if it comes next.
func (c *cursor) next(x byte) bool {
	c.ws()
	if c.i < len(c.b) && c.b[c.i] == x {
		c.i++
		return true
	}
	return false
}

// str reads a string without escapes or control characters, valid UTF-8.
func (c *cursor) str() (string, bool) {
	if !c.next('"') {
		return "", false
	}
	for j := c.i; j < len(c.b); j++ {
		switch ch := c.b[j]; {
		case ch == '"':
			s := c.b[c.i:j]
			if !utf8.Valid(s) {
				return "", false
			}
			c.i = j + 1
			return string(s), true
		case ch == '\\' || ch < 0x20:
			return "", false
		}
	}
	return "", false
}

// object reads an object, calling value for each key to read its value.
func (c *cursor) object(value func(key string) bool) bool {
	if !c.next('{') {
		return false
	}
	if c.next('}') {
		return true
	}
	for {
		k, ok := c.str()
		if !ok || !c.next(':') || !value(k) {
			return false
		}
		if !c.next(',') {
			return c.next('}')
		}
	}
}
