//go:build !js

package llmtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Server is the scripted provider server on 127.0.0.1.
type Server struct {
	// URL is http://127.0.0.1:<port>.
	URL string
	srv *http.Server
	mu  sync.Mutex
	run map[string]*scripted
}

type scripted struct {
	script Script
	loaded time.Time
	log    Log
}

// Start listens on 127.0.0.1 at a free port and serves until Close.
func Start() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{URL: "http://" + ln.Addr().String(), run: map[string]*scripted{}}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// Close stops the server, cutting open streams.
func (s *Server) Close() error { return s.srv.Close() }

// ServeHTTP routes: POST /scripts loads a script, GET /scripts/<id>/log
// reads its log, POST /s/<id>/v1/chat/completions and /s/<id>/v1/messages
// answer from it; OPTIONS answers CORS preflights.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Expose-Headers", "retry-after, retry-after-ms, request-id, x-request-id")
	if r.Method == http.MethodOptions {
		h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
		h.Set("Access-Control-Allow-Headers", cmpStr(r.Header.Get("Access-Control-Request-Headers"), "*"))
		h.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/scripts":
		s.load(w, r)
	case r.Method == http.MethodGet && len(parts) == 3 && parts[0] == "scripts" && parts[2] == "log":
		s.readLog(w, r, parts[1])
	case r.Method == http.MethodPost && len(parts) >= 3 && parts[0] == "s":
		s.answer(w, r, parts[1], "/"+strings.Join(parts[2:], "/"))
	case len(parts) >= 2 && parts[0] == "redirect":
		// /redirect/{status}/{path}: a redirect to /{path}, for clients'
		// tests of following one (any method).
		code, err := strconv.Atoi(parts[1])
		if err != nil || code < 300 || code > 399 {
			http.Error(w, "llmtest: bad redirect status "+parts[1], http.StatusBadRequest)
			return
		}
		io.Copy(io.Discard, r.Body)
		h.Set("Location", "/"+strings.Join(parts[2:], "/"))
		w.WriteHeader(code)
	default:
		http.Error(w, "llmtest: no route "+r.Method+" "+r.URL.Path, http.StatusNotFound)
	}
}

func cmpStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (s *Server) load(w http.ResponseWriter, r *http.Request) {
	var sc Script
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sc); err != nil {
		http.Error(w, "llmtest: bad script: "+err.Error(), http.StatusBadRequest)
		return
	}
	if (sc.Provider != "openai" && sc.Provider != "anthropic") || len(sc.Replies) == 0 {
		http.Error(w, "llmtest: a script needs provider openai or anthropic and at least one reply", http.StatusBadRequest)
		return
	}
	b := make([]byte, 8)
	rand.Read(b)
	id := hex.EncodeToString(b)
	s.mu.Lock()
	s.run[id] = &scripted{script: sc, loaded: time.Now()}
	s.mu.Unlock()
	base := s.URL + "/s/" + id
	if sc.Provider == "openai" {
		base += "/v1"
	}
	writeJSON(w, 200, map[string]string{"id": id, "baseURL": base})
}

// readLog answers the log; ?disconnects=n&waitMs=t first waits up to t ms
// for n disconnects.
func (s *Server) readLog(w http.ResponseWriter, r *http.Request, id string) {
	var n, wait int
	fmt.Sscan(r.URL.Query().Get("disconnects"), &n)
	fmt.Sscan(r.URL.Query().Get("waitMs"), &wait)
	deadline := time.Now().Add(time.Duration(wait) * time.Millisecond)
	for {
		s.mu.Lock()
		sc, ok := s.run[id]
		var l Log
		if ok {
			l = sc.log
			l.Requests = append([]Request(nil), l.Requests...)
			l.Rejected = append([]string(nil), l.Rejected...)
		}
		s.mu.Unlock()
		if !ok {
			http.Error(w, "llmtest: no script "+id, http.StatusNotFound)
			return
		}
		if l.Disconnects >= n || time.Now().After(deadline) {
			writeJSON(w, 200, l)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// answer records the request, validates it as the provider would, and
// plays the reply it is due.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, id, path string) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 32<<20))
	s.mu.Lock()
	sc, ok := s.run[id]
	if !ok {
		s.mu.Unlock()
		http.Error(w, "llmtest: no script "+id, http.StatusNotFound)
		return
	}
	hdr := map[string]string{}
	for k, v := range r.Header {
		hdr[strings.ToLower(k)] = strings.Join(v, ", ")
	}
	raw := json.RawMessage(body)
	if !json.Valid(body) {
		raw, _ = json.Marshal(string(body))
	}
	n := len(sc.log.Requests)
	sc.log.Requests = append(sc.log.Requests, Request{AtMs: float64(time.Since(sc.loaded).Microseconds()) / 1000, Path: path, Header: hdr, Remote: r.RemoteAddr, Body: raw})
	reply := sc.script.Replies[min(n, len(sc.script.Replies)-1)]
	provider := sc.script.Provider
	s.mu.Unlock()

	var req wireRequest
	verr := validate(provider, path, r.Header, body, &req)
	if verr != nil {
		s.mu.Lock()
		sc.log.Rejected = append(sc.log.Rejected, verr.msg)
		s.mu.Unlock()
		writeError(w, provider, verr.status, verr.typ, verr.msg)
		return
	}
	if !sleep(r.Context(), reply.DelayMs) {
		s.disconnected(sc)
		return
	}
	for k, v := range reply.Header {
		w.Header().Set(k, v)
	}
	if reply.Status != 0 && reply.Status != 200 {
		e := reply.Error
		if e == nil {
			e = defaultError(provider, reply.Status)
		}
		writeError(w, provider, reply.Status, e.Type, e.Message)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(200)
	out := &streamWriter{w: w, rc: http.NewResponseController(w), split: reply.Split, crlf: reply.CRLF}
	out.flush()
	var ren renderer
	if provider == "openai" {
		ren = &openAIRenderer{model: req.Model, usage: req.StreamOptions.IncludeUsage, cumulative: reply.Cumulative}
	} else {
		ren = newAnthropicRenderer(req.Model, reply.Events)
	}
	for i, ev := range reply.Events {
		if !sleep(r.Context(), ev.DelayMs) {
			s.disconnected(sc)
			return
		}
		ren.event(out, i, ev)
		if out.err != nil {
			s.disconnected(sc)
			return
		}
	}
	switch reply.End {
	case "":
		ren.end(out)
	case "stall":
		<-r.Context().Done()
		s.disconnected(sc)
		return
	case "hold":
		ren.end(out)
		out.flush()
		<-r.Context().Done()
		s.disconnected(sc)
		return
	}
	if out.err != nil {
		s.disconnected(sc)
	}
}

func (s *Server) disconnected(sc *scripted) {
	s.mu.Lock()
	sc.log.Disconnects++
	s.mu.Unlock()
}

// sleep waits ms unless the client leaves first (false).
func sleep(ctx context.Context, ms int) bool {
	if ms <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// writeError answers with the provider's own error body.
func writeError(w http.ResponseWriter, provider string, status int, typ, msg string) {
	if provider == "openai" {
		writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}})
		return
	}
	w.Header().Set("request-id", "req_llmtest")
	writeJSON(w, status, map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}, "request_id": "req_llmtest"})
}

func defaultError(provider string, status int) *ErrorBody {
	if provider == "openai" {
		switch status {
		case 429:
			return &ErrorBody{"requests", "Rate limit reached for requests. Please try again later."}
		case 400:
			return &ErrorBody{"invalid_request_error", "Invalid request."}
		}
		return &ErrorBody{"server_error", "The server had an error while processing your request."}
	}
	switch status {
	case 429:
		return &ErrorBody{"rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit."}
	case 529:
		return &ErrorBody{"overloaded_error", "Overloaded"}
	case 400:
		return &ErrorBody{"invalid_request_error", "Invalid request."}
	case 408, 504:
		return &ErrorBody{"timeout_error", "Request timed out."}
	}
	return &ErrorBody{"api_error", "Internal server error"}
}

// streamWriter writes the SSE body, flushing after every event (and every
// Split bytes), with LF or CRLF line ends.
type streamWriter struct {
	w     io.Writer
	rc    *http.ResponseController
	split int
	crlf  bool
	err   error
}

// sse writes one event: an optional name and data lines.
func (o *streamWriter) sse(name string, data []byte) {
	var b bytes.Buffer
	nl := "\n"
	if o.crlf {
		nl = "\r\n"
	}
	if name != "" {
		b.WriteString("event: " + name + nl)
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		b.WriteString("data: ")
		b.Write(line)
		b.WriteString(nl)
	}
	b.WriteString(nl)
	o.raw(b.Bytes())
}

func (o *streamWriter) comment(text string) {
	nl := "\n"
	if o.crlf {
		nl = "\r\n"
	}
	o.raw([]byte(": " + text + nl + nl))
}

func (o *streamWriter) raw(b []byte) {
	for len(b) > 0 && o.err == nil {
		n := len(b)
		if o.split > 0 {
			n = min(n, o.split)
		}
		_, o.err = o.w.Write(b[:n])
		b = b[n:]
		o.flush()
	}
}

func (o *streamWriter) flush() {
	if o.err == nil {
		o.err = o.rc.Flush()
	}
}

func (o *streamWriter) json(name string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	o.sse(name, b)
}
