//go:build !js

package tools

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/kernel"
)

// searchAPI is a local server answering as SearXNG (/search) and Brave
// (/brave) do; /limited answers 429.
func searchAPI(t *testing.T) *webServer {
	return newWebServer(t, func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query().Get("q")
		switch r.URL.Path {
		case "/search":
			if r.URL.Query().Get("format") != "json" {
				http.Error(w, "format", 400)
				return
			}
			fmt.Fprintf(w, `{"query":%q,"results":[{"title":"S1","url":"https://s.example/1","content":"about %s"},{"title":"S2","url":"https://s.example/2","content":""}]}`, q, q)
		case "/brave":
			if r.Header.Get("X-Subscription-Token") != "k1" || r.URL.Query().Get("count") != "2" {
				http.Error(w, "token or count", 401)
				return
			}
			fmt.Fprint(w, `{"web":{"results":[{"title":"B1","url":"https://b.example/1","description":"brave one"},{"title":"B2","url":"https://s.example/1/","description":"dup"}]}}`)
		case "/limited":
			w.Header().Set("retry-after", "9")
			w.WriteHeader(429)
		default:
			http.NotFound(w, r)
		}
	})
}

func TestWebSearchHTTPEngines(t *testing.T) {
	s := searchAPI(t)
	allow := []string{s.URL}
	searx, err := NewHTTPSearch(HTTPSearchConfig{Name: "searx", Kind: "searxng", URL: s.URL + "/search"}, allow)
	if err != nil {
		t.Fatal(err)
	}
	brave, err := NewHTTPSearch(HTTPSearchConfig{Name: "brave", Kind: "brave", URL: s.URL + "/brave", APIKey: "k1"}, allow)
	if err != nil {
		t.Fatal(err)
	}
	r, err := webSearch(t, []SearchProvider{searx, brave}, map[string]any{"query": "wasm", "limit": 2, "format": "json"})
	if err != nil || r.Metadata["status"] != "complete" {
		t.Fatalf("%v %+v", err, r)
	}
	var out struct {
		Results []struct{ Title, URL, Snippet, Engine string }
	}
	json.Unmarshal([]byte(r.Output), &out)
	if len(out.Results) != 2 || out.Results[0].Snippet != "about wasm" || out.Results[1].URL != "https://s.example/2" {
		t.Fatalf("%s", r.Output)
	}
	// s.example/1/ from brave is a duplicate of searx's s.example/1.
	r, _ = webSearch(t, []SearchProvider{searx, brave}, map[string]any{"query": "wasm", "limit": 2, "engines": "brave,searx"})
	if r.Metadata["available_result_count"] != 3 || !strings.Contains(r.Output, "B1") {
		t.Fatalf("%v\n%s", r.Metadata, r.Output)
	}
	limited, _ := NewHTTPSearch(HTTPSearchConfig{Name: "lim", Kind: "searxng", URL: s.URL + "/limited"}, allow)
	r, _ = webSearch(t, []SearchProvider{limited}, map[string]any{"query": "q"})
	if r.ExitCode != 1 || r.ErrorKind.Type != kernel.ErrRateLimited || r.ErrorKind.RetryAfterMs != 9000 {
		t.Fatalf("%+v %+v", r, r.ErrorKind)
	}
	down, _ := NewHTTPSearch(HTTPSearchConfig{Name: "down", Kind: "searxng", URL: s.URL + "/nothing"}, allow)
	r, _ = webSearch(t, []SearchProvider{down, searx}, map[string]any{"query": "q"})
	if r.Metadata["status"] != "partial" || !strings.Contains(r.Output, "answered HTTP 404") {
		t.Fatalf("%v\n%s", r.Metadata, r.Output)
	}
}

func TestWebSearchHTTPRefusesNonPublic(t *testing.T) {
	s := searchAPI(t)
	for _, c := range []struct {
		cfg  HTTPSearchConfig
		want string
	}{
		{HTTPSearchConfig{Name: "a", Kind: "searxng", URL: s.URL + "/search"}, "is loopback"},
		{HTTPSearchConfig{Name: "a", Kind: "searxng", URL: "http://169.254.169.254/search"}, "link-local"},
		{HTTPSearchConfig{Name: "a", Kind: "searxng", URL: "http://u:p@example.com/search"}, "credentials"},
		{HTTPSearchConfig{Name: "a", Kind: "searxng", URL: "https://searx.example/search?x=1"}, "no query"},
		{HTTPSearchConfig{Name: "a", Kind: "searxng"}, "needs url"},
		{HTTPSearchConfig{Name: "a", Kind: "brave"}, "needs apiKey"},
		{HTTPSearchConfig{Name: "a", Kind: "google"}, "kind must be searxng or brave"},
	} {
		if _, err := NewHTTPSearch(c.cfg, nil); kernelKind(err) != "invalid_argument" || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
	if n := s.hits.Load(); n != 0 {
		t.Fatalf("%d requests arrived", n)
	}
}
