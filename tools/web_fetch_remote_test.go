package tools

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/internal/fetch"
	"github.com/a3s-lab/code-wasm/kernel"
)

// TestWebFetchRemote runs web_fetch against the server at WEBFETCH_URL:
// web/test/webfetch.test.mjs starts it (with CORS headers; /hits counts
// the other requests) and runs this test compiled to js/wasm in Chromium,
// with WEBFETCH_BROWSER=1 (redirects there are opaque: the browser's
// fetch never shows a 3xx to the page).
func TestWebFetchRemote(t *testing.T) {
	origin := os.Getenv("WEBFETCH_URL")
	if origin == "" {
		t.Skip("WEBFETCH_URL is not set (web/test/webfetch.test.mjs sets it)")
	}
	browser := os.Getenv("WEBFETCH_BROWSER") == "1"
	w, err := NewWebFetch([]string{origin})
	if err != nil {
		t.Fatal(err)
	}
	run := func(w *WebFetch, args map[string]any) (*kernel.Result, error) {
		raw, _ := json.Marshal(args)
		return w.Execute(context.Background(), callOf("web_fetch", raw))
	}
	hits := func() int {
		res, err := fetch.Do(context.Background(), &fetch.Request{URL: origin + "/hits"})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		n, err := strconv.Atoi(string(b))
		if err != nil {
			t.Fatalf("/hits answered %q", b)
		}
		return n
	}

	t.Run("windows of 20000 reassemble the single call", func(t *testing.T) {
		whole, err := run(w, map[string]any{"url": origin + "/page", "max_chars": 100000})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(whole.Output, "| k | v |") || strings.Contains(whole.Output, "SCRIPT") || whole.Metadata["trust"] != "external" {
			t.Fatalf("markdown: %.300s", whole.Output)
		}
		total := whole.Metadata["range"].(map[string]any)["total_chars"].(int)
		var full, parts strings.Builder
		for _, step := range []int{100000, 20000} {
			b := &full
			if step == 20000 {
				b = &parts
			}
			for off := 0; ; {
				r, err := run(w, map[string]any{"url": origin + "/page", "offset": off, "max_chars": step})
				if err != nil {
					t.Fatal(err)
				}
				b.WriteString(r.Output)
				n := r.Metadata["range"].(map[string]any)["next_offset"]
				if n == nil {
					break
				}
				off = n.(int)
			}
		}
		if parts.String() != full.String() || len([]rune(full.String())) != total {
			t.Fatalf("windows of 20000 do not reassemble the page of %d chars", total)
		}
	})
	t.Run("6 MB is cut at 5 MB", func(t *testing.T) {
		r, err := run(w, map[string]any{"url": origin + "/big", "max_chars": 10})
		if err != nil || r.Metadata["bytes"] != 5<<20 || r.Metadata["download_truncated"] != true {
			t.Fatalf("%v %v", err, r.Metadata)
		}
	})
	t.Run("429 is rate_limited", func(t *testing.T) {
		_, err := run(w, map[string]any{"url": origin + "/limited"})
		if k := kernel.KindOf(err); k == nil || k.Type != kernel.ErrRateLimited {
			t.Fatalf("%v", err)
		}
	})
	t.Run("redirects", func(t *testing.T) {
		r, err := run(w, map[string]any{"url": origin + "/a"})
		if browser {
			// Opaque in a browser: a transport error that says why.
			if k := kernel.KindOf(err); k == nil || k.Type != kernel.ErrTransport || !strings.Contains(err.Error(), "CORS") {
				t.Fatalf("%v %v", err, r)
			}
			return
		}
		if err != nil || r.Metadata["final_url"] != origin+"/final" {
			t.Fatalf("%v %v", err, r)
		}
	})
	t.Run("no CORS headers is transport, saying so", func(t *testing.T) {
		if !browser {
			t.Skip("only a browser enforces CORS")
		}
		_, err := run(w, map[string]any{"url": origin + "/nocors"})
		if k := kernel.KindOf(err); k == nil || k.Type != kernel.ErrTransport || !strings.Contains(err.Error(), "CORS") {
			t.Fatalf("%v", err)
		}
	})
	t.Run("loopback without allowOrigins is refused before a request", func(t *testing.T) {
		strict, _ := NewWebFetch(nil)
		before := hits()
		for _, u := range []string{origin + "/page", "http://[::1]/", "http://169.254.169.254/latest/meta-data/", "http://10.0.0.1/",
			"http://user:pw@example.com/"} {
			if _, err := run(strict, map[string]any{"url": u}); kernel.KindOf(err) == nil || kernel.KindOf(err).Type != kernel.ErrInvalidArgument {
				t.Errorf("%s: %v", u, err)
			}
		}
		if n := hits(); n != before {
			t.Fatalf("%d requests arrived", n-before)
		}
	})
}
