//go:build !js

package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/mcp"
)

// fake is a JSON-mode MCP server (protocol 2025-06-18) whose tools/list
// pages 2 tools at a time; tools/call answers as callMode says.
func fake(t *testing.T, callMode string) *httptest.Server {
	t.Helper()
	tools := []string{"alpha", "beta", "gamma.dot", "delta", "epsilon"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Cursor string `json:"cursor"`
			} `json:"params"`
		}
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &m)
		answer := func(result any) {
			w.Header().Set("Content-Type", "application/json")
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
			w.Write(b)
		}
		switch m.Method {
		case "initialize":
			w.Header().Set("Mcp-Session-Id", "s1")
			answer(map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "serverInfo": map[string]any{"name": "fake", "version": "0"}})
		case "notifications/initialized":
			w.WriteHeader(202)
		case "tools/list":
			start := 0
			fmt.Sscan(m.Params.Cursor, &start)
			end := min(start+2, len(tools))
			var page []map[string]any
			for _, n := range tools[start:end] {
				page = append(page, map[string]any{"name": n, "inputSchema": map[string]any{"type": "object"}})
			}
			res := map[string]any{"tools": page}
			if end < len(tools) {
				res["nextCursor"] = fmt.Sprint(end)
			}
			answer(res)
		case "tools/call":
			switch callMode {
			case "ok":
				answer(map[string]any{"content": []any{map[string]any{"type": "text", "text": "fine"}}})
			case "malformed":
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(`{"jsonrpc":"2.0","id":`))
			case "garbage-sse":
				w.Header().Set("Content-Type", "text/event-stream")
				w.Write([]byte("data: {not json\n\n"))
			case "sse-ends":
				w.Header().Set("Content-Type", "text/event-stream")
				w.Write([]byte("id: 1\ndata: \n\n: comment\n\n"))
			case "silent":
				<-r.Context().Done()
			case "sse-held": // the answer, then the stream held open
				w.Header().Set("Content-Type", "text/event-stream")
				b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "fine"}}}})
				fmt.Fprintf(w, "data: %s\n\n", b)
				w.(http.Flusher).Flush()
				<-r.Context().Done()
			case "sse-release": // the answer, the stream held until the test releases it, then its end
				w.Header().Set("Content-Type", "text/event-stream")
				b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "fine"}}}})
				fmt.Fprintf(w, "data: %s\n\n", b)
				w.(http.Flusher).Flush()
				select {
				case <-releaseStream:
					fmt.Fprint(w, ": end\n\n")
					streamEnds <- "ended"
				case <-r.Context().Done():
					streamEnds <- "aborted by the client"
				}
			case "sse-closed": // the answer, then the stream's end
				w.Header().Set("Content-Type", "text/event-stream")
				b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "fine"}}}})
				fmt.Fprintf(w, ": priming\n\ndata: %s\n\n", b)
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestFakePaging(t *testing.T) {
	srv := fake(t, "ok")
	s := newSession(t, kernel.Governance{})
	st, err := s.AddMcp(context.Background(), mcp.Config{Name: "fake", URL: srv.URL})
	if err != nil || st.ToolCount != 5 {
		t.Fatalf("%+v %v", st, err)
	}
	names := strings.Join(s.ToolNames(), " ")
	for _, n := range []string{"mcp__fake__alpha", "mcp__fake__gamma_dot", "mcp__fake__epsilon"} {
		if !strings.Contains(names, n) {
			t.Errorf("missing %s in %s", n, names)
		}
	}
	res := call(t, s, "mcp__fake__gamma_dot", nil)
	if res.ExitCode != 0 || res.Output != "fine" || res.Metadata["tool"] != "gamma.dot" {
		t.Errorf("%+v", res)
	}
	// A second server of the same name is refused; a collision is a warning.
	if _, err := s.AddMcp(context.Background(), mcp.Config{Name: "fake", URL: srv.URL}); err == nil {
		t.Error("a second server named fake was accepted")
	}
}

func TestFakeFailures(t *testing.T) {
	for _, mode := range []string{"malformed", "garbage-sse", "sse-ends", "silent"} {
		t.Run(mode, func(t *testing.T) {
			srv := fake(t, mode)
			s := newSession(t, kernel.Governance{ToolTimeout: 2 * time.Second})
			if _, err := s.AddMcp(context.Background(), mcp.Config{Name: "fake", URL: srv.URL}); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			res := call(t, s, "mcp__fake__alpha", nil)
			want := kernel.ErrTransport
			if mode == "silent" {
				want = kernel.ErrTimeout
			}
			if res.ExitCode == 0 || res.ErrorKind == nil || res.ErrorKind.Type != want {
				t.Errorf("got %+v, want %s", res, want)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

// A stream answered and then held open (the spec's SHOULD close not kept)
// still gives its answer at once: the client reads on for a moment only
// (drain), and not at all once a server has held one open. A stream that
// ends after its answer is read to its end.
func TestFakeStreamAfterAnswer(t *testing.T) {
	for _, mode := range []string{"sse-held", "sse-closed"} {
		t.Run(mode, func(t *testing.T) {
			srv := fake(t, mode)
			s := newSession(t, kernel.Governance{ToolTimeout: 5 * time.Second})
			if _, err := s.AddMcp(context.Background(), mcp.Config{Name: "fake", URL: srv.URL}); err != nil {
				t.Fatal(err)
			}
			for range 3 {
				if res := call(t, s, "mcp__fake__alpha", nil); res.ExitCode != 0 || res.Output != "fine" {
					t.Fatalf("got %+v", res)
				}
			}
		})
	}
}

// The streams of sse-release: the test sends on releaseStream to end one,
// and reads how it ended from streamEnds.
var releaseStream, streamEnds = make(chan struct{}), make(chan string, 1)

// A call returns as soon as its answer arrived, before the stream ends;
// the rest of the stream is still read to its end (not aborted), call
// after call.
func TestFakeDrainAfterReturn(t *testing.T) {
	srv := fake(t, "sse-release")
	s := newSession(t, kernel.Governance{ToolTimeout: 20 * time.Second})
	if _, err := s.AddMcp(context.Background(), mcp.Config{Name: "fake", URL: srv.URL}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if res := call(t, s, "mcp__fake__alpha", nil); res.ExitCode != 0 || res.Output != "fine" {
			t.Fatalf("call %d: got %+v", i, res)
		}
		// A client that gave up on the stream has closed it by now (the
		// server sees that within milliseconds); one that drains it waits
		// for its end for up to a second.
		time.Sleep(100 * time.Millisecond)
		end := ""
		select {
		case releaseStream <- struct{}{}:
			end = <-streamEnds
		case end = <-streamEnds:
		}
		if end != "ended" {
			t.Fatalf("call %d: the stream was %s", i, end)
		}
	}
}
