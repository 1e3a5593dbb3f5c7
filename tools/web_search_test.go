package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/kernel"
)

// fakeEngine answers hits, or fails with err, after delay; it counts calls.
type fakeEngine struct {
	name  string
	hits  []SearchHit
	err   error
	delay time.Duration
	calls atomic.Int64
	limit atomic.Int64
}

func (f *fakeEngine) Name() string { return f.name }
func (f *fakeEngine) Search(ctx context.Context, query string, limit int) ([]SearchHit, error) {
	f.calls.Add(1)
	f.limit.Store(int64(limit))
	select {
	case <-time.After(f.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return f.hits, f.err
}

func hitsOf(prefix string, n int) []SearchHit {
	h := make([]SearchHit, n)
	for i := range h {
		h[i] = SearchHit{Title: fmt.Sprintf("%s %d", prefix, i), URL: fmt.Sprintf("https://%s.example/%d", prefix, i), Snippet: "about " + prefix}
	}
	return h
}

func webSearch(t *testing.T, engines []SearchProvider, args map[string]any) (*kernel.Result, error) {
	t.Helper()
	w, err := NewWebSearch(engines)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(args)
	return w.Execute(context.Background(), callOf("web_search", raw))
}

func rateLimited(ms int64) error {
	return &kernel.Error{Kind: kernel.ErrorKind{Type: kernel.ErrRateLimited, RetryAfterMs: ms}, Msg: "429 from upstream"}
}

func TestWebSearchStatus(t *testing.T) {
	ok := &fakeEngine{name: "ok", hits: hitsOf("a", 3)}
	down := &fakeEngine{name: "down", err: errors.New("connection refused")}

	t.Run("complete", func(t *testing.T) {
		r, err := webSearch(t, []SearchProvider{ok, &fakeEngine{name: "b", hits: append(hitsOf("a", 1), hitsOf("b", 2)...)}}, map[string]any{"query": "q"})
		if err != nil || r.ExitCode != 0 || r.Metadata["status"] != "complete" {
			t.Fatalf("%v %+v", err, r)
		}
		// a/0 is found by both engines: once in the output.
		if r.Metadata["returned_result_count"] != 5 || strings.Count(r.Output, "https://a.example/0") != 1 || r.Metadata["trust"] != "external" {
			t.Fatalf("merge: %v\n%s", r.Metadata, r.Output)
		}
	})
	t.Run("ok + fail is partial", func(t *testing.T) {
		r, err := webSearch(t, []SearchProvider{down, ok}, map[string]any{"query": "q"})
		if err != nil || r.ExitCode != 0 || r.Metadata["status"] != "partial" || r.Metadata["engine_failures"] != 1 {
			t.Fatalf("%v %+v", err, r)
		}
		if !strings.Contains(r.Output, "degraded engines: down (transport: connection refused)") || !strings.Contains(r.Output, "https://a.example/2") {
			t.Fatalf("output:\n%s", r.Output)
		}
	})
	t.Run("all rate-limited fails with rate_limited", func(t *testing.T) {
		r, err := webSearch(t, []SearchProvider{&fakeEngine{name: "x", err: rateLimited(2000)}, &fakeEngine{name: "y", err: rateLimited(5000)}}, map[string]any{"query": "q"})
		if err != nil || r.ExitCode != 1 || r.Metadata["status"] != "failed" || r.ErrorKind == nil ||
			r.ErrorKind.Type != kernel.ErrRateLimited || r.ErrorKind.RetryAfterMs != 5000 {
			t.Fatalf("%v %+v %+v", err, r, r.ErrorKind)
		}
	})
	t.Run("empty with an error fails", func(t *testing.T) {
		r, err := webSearch(t, []SearchProvider{&fakeEngine{name: "empty"}, down}, map[string]any{"query": "q"})
		if err != nil || r.ExitCode != 1 || r.Metadata["status"] != "failed" || r.ErrorKind.Type != kernel.ErrTransport ||
			!strings.Contains(r.Output, "no results") {
			t.Fatalf("%v %+v", err, r)
		}
	})
	t.Run("empty without errors is a complete success", func(t *testing.T) {
		r, err := webSearch(t, []SearchProvider{&fakeEngine{name: "empty"}}, map[string]any{"query": "q"})
		if err != nil || r.ExitCode != 0 || r.Metadata["status"] != "complete" || !strings.Contains(r.Output, "No results") {
			t.Fatalf("%v %+v", err, r)
		}
	})
	t.Run("all timed out fails with timeout", func(t *testing.T) {
		slow := &fakeEngine{name: "slow", delay: time.Minute}
		began := time.Now()
		r, err := webSearch(t, []SearchProvider{slow}, map[string]any{"query": "q", "timeout": 1})
		if err != nil || r.ExitCode != 1 || r.ErrorKind.Type != kernel.ErrTimeout || time.Since(began) > 20*time.Second {
			t.Fatalf("%v %+v", err, r)
		}
	})
}

func TestWebSearchLimitsEnginesAndFormat(t *testing.T) {
	a, b := &fakeEngine{name: "a", hits: hitsOf("a", 40)}, &fakeEngine{name: "b", hits: hitsOf("b", 40)}
	r, err := webSearch(t, []SearchProvider{a, b}, map[string]any{"query": "q", "limit": 500})
	if err != nil || r.Metadata["returned_result_count"] != 50 || r.Metadata["available_result_count"] != 80 ||
		r.Metadata["output_limited"] != true || a.limit.Load() != 50 {
		t.Fatalf("%v %v", err, r.Metadata)
	}
	a.calls.Store(0)
	r, err = webSearch(t, []SearchProvider{a, b}, map[string]any{"query": "q", "engines": "b", "limit": 2, "format": "json"})
	if err != nil || a.calls.Load() != 0 || r.Metadata["engine_selection_source"] != "request" {
		t.Fatalf("%v %v", err, r.Metadata)
	}
	var out struct {
		Results []struct{ Title, URL, Engine string }
	}
	if json.Unmarshal([]byte(r.Output), &out) != nil || len(out.Results) != 2 || out.Results[0].Engine != "b" || out.Results[1].URL != "https://b.example/1" {
		t.Fatalf("json output: %s", r.Output)
	}
	r, err = webSearch(t, []SearchProvider{a, &fakeEngine{name: "bad", hits: []SearchHit{{Title: "x", URL: "javascript:alert(1)"}, {Title: "y", URL: "https://ok.example/"}}}},
		map[string]any{"query": "q", "engines": []string{"bad"}})
	if err != nil || strings.Contains(r.Output, "javascript:") || !strings.Contains(r.Output, "https://ok.example/") {
		t.Fatalf("%v %s", err, r.Output)
	}
}

func TestWebSearchBadInput(t *testing.T) {
	e := &fakeEngine{name: "a", hits: hitsOf("a", 1)}
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{}, "query is required"},
		{map[string]any{"query": "  "}, "query is required"},
		{map[string]any{"query": "q", "engine": "a"}, "did you mean engines"},
		{map[string]any{"query": "q", "proxy": "http://p"}, "not supported here"},
		{map[string]any{"query": "q", "engines": []string{"nope"}}, `unknown engine "nope"; configured: a`},
		{map[string]any{"query": "q", "engines": " , "}, "engine plan is empty"},
		{map[string]any{"query": "q", "engines": 3}, "engines must be"},
		{map[string]any{"query": "q", "limit": 0}, "limit must be at least 1"},
		{map[string]any{"query": "q", "timeout": 0}, "timeout must be at least 1"},
		{map[string]any{"query": "q", "format": "xml"}, "format must be text or json"},
	} {
		_, err := webSearch(t, []SearchProvider{e}, c.args)
		if kernelKind(err) != "invalid_argument" || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want invalid_argument with %q", c.args, err, c.want)
		}
	}
	if e.calls.Load() != 0 {
		t.Fatalf("bad input reached the engine %d times", e.calls.Load())
	}
	for _, ps := range [][]SearchProvider{nil, {&fakeEngine{name: "a b"}}, {e, &fakeEngine{name: "a"}}} {
		if _, err := NewWebSearch(ps); kernelKind(err) != "invalid_argument" {
			t.Errorf("NewWebSearch(%v): %v", ps, err)
		}
	}
}
