//go:build !js

package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/a3s-lab/code-wasm/kernel"
)

// webServer is a local server counting the requests it received.
type webServer struct {
	*httptest.Server
	hits atomic.Int64
}

func newWebServer(t testing.TB, h http.HandlerFunc) *webServer {
	s := &webServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func webFetch(t *testing.T, allow []string, args map[string]any) (*kernel.Result, error) {
	t.Helper()
	w, err := NewWebFetch(allow)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(args)
	return w.Execute(context.Background(), callOf("web_fetch", raw))
}

// bigPage is an HTML page of about n bytes with a table, a list and chrome
// web_fetch drops.
func bigPage(n int) string {
	var b strings.Builder
	b.WriteString(`<!doctype html><html><head><title>Big</title><style>p{color:red}</style><script>var x = "SCRIPT";</script></head><body>`)
	b.WriteString(`<nav><a href="/">NAVLINK</a></nav><h1>Report</h1><table><tr><th>k</th><th>v</th></tr><tr><td>a|b</td><td>1</td></tr></table><ul><li>one</li><li>two</li></ul>`)
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "<p>Paragraph %d with <a href=\"/p/%d\">a link</a>, <b>bold</b> text and ünïcödé — ok.</p>\n", i, i)
	}
	b.WriteString(`</body></html>`)
	return b.String()
}

func TestWebFetchMarkdownAndContinuation(t *testing.T) {
	page := bigPage(300 << 10)
	s := newWebServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("content-type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	})
	allow := []string{s.URL}
	whole, err := webFetch(t, allow, map[string]any{"url": s.URL + "/doc?secret=1#frag", "max_chars": 100000})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Report", "| k | v |", "| --- | --- |", `| a\|b | 1 |`, "- one", "[a link](/p/0)", "**bold**"} {
		if !strings.Contains(whole.Output, want) {
			t.Errorf("markdown lacks %q:\n%s", want, clip(whole.Output))
		}
	}
	for _, gone := range []string{"SCRIPT", "color:red", "NAVLINK", "Big"} {
		if strings.Contains(whole.Output, gone) {
			t.Errorf("markdown keeps %q", gone)
		}
	}
	rng := whole.Metadata["range"].(map[string]any)
	total := rng["total_chars"].(int)
	if total <= 100000 || rng["eof"] != false {
		t.Fatalf("range %v: want a page longer than one window", rng)
	}
	if a := whole.Metadata["source_anchors"].([]string); len(a) != 1 || a[0] != s.URL+"/doc" {
		t.Errorf("source_anchors %v", a)
	}
	// The whole conversion in one piece, then reassembled from windows of 20,000.
	var full, parts strings.Builder
	for off := 0; ; {
		r, err := webFetch(t, allow, map[string]any{"url": s.URL + "/doc", "offset": off, "max_chars": 100000})
		if err != nil {
			t.Fatal(err)
		}
		full.WriteString(r.Output)
		n := r.Metadata["range"].(map[string]any)["next_offset"]
		if n == nil {
			break
		}
		off = n.(int)
	}
	calls := 0
	for off := 0; ; calls++ {
		r, err := webFetch(t, allow, map[string]any{"url": s.URL + "/doc", "offset": off, "max_chars": 20000})
		if err != nil {
			t.Fatal(err)
		}
		parts.WriteString(r.Output)
		rg := r.Metadata["range"].(map[string]any)
		if rg["returned_chars"].(int) > 20000 {
			t.Fatalf("window of %v chars", rg["returned_chars"])
		}
		if rg["next_offset"] == nil {
			break
		}
		off = rg["next_offset"].(int)
	}
	if r, _ := webFetch(t, allow, map[string]any{"url": s.URL, "max_chars": 100000}); len(r.Output) > kernel.MaxOutputBytes || r.Metadata["window_cut_at_bytes"] != true {
		t.Errorf("a window of %d bytes passes the kernel's output limit", len(r.Output))
	}
	if parts.String() != full.String() || len([]rune(full.String())) != total {
		t.Fatalf("windows of 20000 (%d calls) do not reassemble the page of %d chars", calls, total)
	}
	if calls < total/20000 {
		t.Fatalf("%d calls for %d chars", calls, total)
	}
	clamped, err := webFetch(t, allow, map[string]any{"url": s.URL, "max_chars": 500000})
	if err != nil {
		t.Fatal(err)
	}
	if rg := clamped.Metadata["range"].(map[string]any); rg["applied_max_chars"] != 100000 || rg["limit_clamped"] != true {
		t.Errorf("clamp: %v", rg)
	}
	text, _ := webFetch(t, allow, map[string]any{"url": s.URL, "format": "text", "max_chars": 300})
	if strings.Contains(text.Output, "**") || strings.Contains(text.Output, "](") || !strings.Contains(text.Output, "k\tv") {
		t.Errorf("text format: %q", text.Output)
	}
	raw, _ := webFetch(t, allow, map[string]any{"url": s.URL, "format": "html", "max_chars": 60})
	if !strings.HasPrefix(raw.Output, "<nav>") {
		t.Errorf("html body_only: %q", raw.Output)
	}
	raw, _ = webFetch(t, allow, map[string]any{"url": s.URL, "format": "html", "body_only": false, "max_chars": 15})
	if raw.Output != "<!doctype html>" {
		t.Errorf("html whole: %q", raw.Output)
	}
}

func TestWebFetchCapAndRedirects(t *testing.T) {
	var s *webServer
	s = newWebServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/big":
			w.Header().Set("content-type", "text/plain")
			chunk := strings.Repeat("x", 1<<20)
			for range 6 {
				fmt.Fprint(w, chunk)
			}
		case r.URL.Path == "/a":
			http.Redirect(w, r, "/b?token=1", http.StatusFound)
		case r.URL.Path == "/b":
			http.Redirect(w, r, s.URL+"/final#x", http.StatusMovedPermanently)
		case r.URL.Path == "/final":
			fmt.Fprint(w, "<html><body><p>landed</p></body></html>")
		case r.URL.Path == "/meta":
			fmt.Fprint(w, `<html><head><meta http-equiv="refresh" content="0; url=/final"></head><body>moving</body></html>`)
		case strings.HasPrefix(r.URL.Path, "/loop/"):
			var n int
			fmt.Sscanf(r.URL.Path, "/loop/%d", &n)
			if n == 11 {
				http.Redirect(w, r, "/final", http.StatusFound)
				return
			}
			http.Redirect(w, r, fmt.Sprintf("/loop/%d", n+1), http.StatusFound)
		case r.URL.Path == "/limited":
			w.Header().Set("retry-after", "7")
			w.WriteHeader(http.StatusTooManyRequests)
		default:
			http.NotFound(w, r)
		}
	})
	allow := []string{s.URL}
	r, err := webFetch(t, allow, map[string]any{"url": s.URL + "/big", "max_chars": 10})
	if err != nil {
		t.Fatal(err)
	}
	if r.Metadata["bytes"] != 5<<20 || r.Metadata["download_truncated"] != true || r.Metadata["range"].(map[string]any)["total_chars"] != 5<<20 {
		t.Fatalf("6 MB body: bytes %v truncated %v", r.Metadata["bytes"], r.Metadata["download_truncated"])
	}
	r, err = webFetch(t, allow, map[string]any{"url": s.URL + "/a"})
	if err != nil {
		t.Fatal(err)
	}
	if a := r.Metadata["source_anchors"].([]string); strings.TrimSpace(r.Output) != "landed" || len(a) != 2 || a[1] != s.URL+"/final" {
		t.Fatalf("302 → 301: %q anchors %v", r.Output, a)
	}
	r, err = webFetch(t, allow, map[string]any{"url": s.URL + "/meta"})
	if err != nil || strings.TrimSpace(r.Output) != "landed" {
		t.Fatalf("meta refresh: %v %v", r, err)
	}
	if _, err := webFetch(t, allow, map[string]any{"url": s.URL + "/loop/1"}); kernelKind(err) != "transport" || !strings.Contains(err.Error(), "more than 10 redirects") {
		t.Fatalf("11 redirects: %v", err)
	}
	if _, err := webFetch(t, allow, map[string]any{"url": s.URL + "/loop/2"}); err != nil {
		t.Fatalf("10 redirects must be followed: %v", err)
	}
	_, err = webFetch(t, allow, map[string]any{"url": s.URL + "/limited"})
	if k := kernel.KindOf(err); k == nil || k.Type != kernel.ErrRateLimited || k.RetryAfterMs != 7000 {
		t.Fatalf("429: %v %+v", err, k)
	}
	if _, err := webFetch(t, allow, map[string]any{"url": s.URL + "/missing"}); kernelKind(err) != "transport" || !strings.Contains(err.Error(), "404") {
		t.Fatalf("404: %v", err)
	}
}

func TestWebFetchTimeout(t *testing.T) {
	release := make(chan struct{})
	s := newWebServer(t, func(w http.ResponseWriter, r *http.Request) { <-release })
	defer close(release)
	_, err := webFetch(t, []string{s.URL}, map[string]any{"url": s.URL, "timeout": 1})
	if k := kernel.KindOf(err); k == nil || k.Type != kernel.ErrTimeout {
		t.Fatalf("timeout: %v %+v", err, k)
	}
}

func TestWebFetchRefusesNonPublicBeforeConnecting(t *testing.T) {
	s := newWebServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "reached") })
	port := s.URL[strings.LastIndex(s.URL, ":")+1:]
	targets := []string{s.URL, "http://[::1]:" + port + "/", "http://169.254.169.254/latest/meta-data/",
		"http://10.0.0.1/", "http://localhost:" + port + "/", "http://[::ffff:127.0.0.1]:" + port + "/", "http://0.0.0.0:" + port + "/",
		// Reserved ranges netip does not classify: shared address space,
		// NAT64 of 127.0.0.1, 6to4 of 127.0.0.1, benchmarking, the old class E.
		"http://100.64.0.1/", "http://[64:ff9b::7f00:1]:" + port + "/", "http://[2002:7f00:1::1]:" + port + "/",
		"http://198.18.0.1/", "http://240.0.0.1/"}
	for _, u := range targets {
		_, err := webFetch(t, nil, map[string]any{"url": u})
		if kernelKind(err) != "invalid_argument" || !strings.Contains(err.Error(), "only public addresses") {
			t.Errorf("%s: %v", u, err)
		}
	}
	// A redirect from an allowed origin to each of them is refused too.
	var other *webServer
	other = newWebServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	})
	for _, u := range targets {
		_, err := webFetch(t, []string{other.URL}, map[string]any{"url": other.URL + "/?to=" + u})
		if kernelKind(err) != "invalid_argument" || !strings.Contains(err.Error(), "only public addresses") {
			t.Errorf("redirect to %s: %v", u, err)
		}
	}
	for _, u := range []string{"http://user:pw@" + s.Listener.Addr().String() + "/", "ftp://example.com/", "file:///etc/passwd", "http:///x"} {
		if _, err := webFetch(t, []string{s.URL}, map[string]any{"url": u}); kernelKind(err) != "invalid_argument" {
			t.Errorf("%s: %v", u, err)
		}
	}
	if n := s.hits.Load(); n != 0 {
		t.Fatalf("the server saw %d requests", n)
	}
	if r, err := webFetch(t, []string{s.URL}, map[string]any{"url": s.URL}); err != nil || strings.TrimSpace(r.Output) != "reached" {
		t.Fatalf("allowed origin: %v %v", r, err)
	}
	for _, bad := range []string{"127.0.0.1:80", "http://127.0.0.1/x", "ftp://h", "http://u@h"} {
		if _, err := NewWebFetch([]string{bad}); kernelKind(err) != "invalid_argument" {
			t.Errorf("allowOrigins %q: %v", bad, err)
		}
	}
}

func TestWebFetchArguments(t *testing.T) {
	for _, args := range []map[string]any{{}, {"url": ""}, {"url": "https://example.com", "format": "pdf"},
		{"url": "https://example.com", "timeout": 0}, {"url": "https://example.com", "offset": -1},
		{"url": "https://example.com", "max_chars": 0}, {"url": "https://example.com", "engine": "x"}} {
		if _, err := webFetch(t, nil, args); kernelKind(err) != "invalid_argument" {
			t.Errorf("%v: %v", args, err)
		}
	}
}

// Every reserved range web_fetch refuses beyond netip's own classes (the
// nonPublic list, built from bytes at package init): both ends of each
// range, IPv4-mapped forms, and the public neighbour just outside each end
// (where it is not itself in another refused class).
func TestPublicAddrReservedRanges(t *testing.T) {
	ranges := []struct{ prefix, first, last string }{
		{"0.0.0.0/8", "0.0.0.1", "0.255.255.255"},
		{"100.64.0.0/10", "100.64.0.0", "100.127.255.255"},
		{"192.0.0.0/24", "192.0.0.0", "192.0.0.255"},
		{"192.0.2.0/24", "192.0.2.0", "192.0.2.255"},
		{"198.18.0.0/15", "198.18.0.0", "198.19.255.255"},
		{"198.51.100.0/24", "198.51.100.0", "198.51.100.255"},
		{"203.0.113.0/24", "203.0.113.0", "203.0.113.255"},
		{"240.0.0.0/4", "240.0.0.0", "255.255.255.254"},
		{"64:ff9b::/96", "64:ff9b::", "64:ff9b::ffff:ffff"},
		{"64:ff9b:1::/48", "64:ff9b:1::", "64:ff9b:1:ffff:ffff:ffff:ffff:ffff"},
		{"2001:db8::/32", "2001:db8::", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff"},
		{"2002::/16", "2002::", "2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
		{"100::/64", "100::", "100::ffff:ffff:ffff:ffff"},
	}
	reserved := func(ip, prefix string) {
		t.Helper()
		err := publicAddr(netip.MustParseAddr(ip))
		if err == nil || !strings.Contains(err.Error(), "is reserved ("+prefix+")") {
			t.Errorf("%s: %v, want reserved (%s)", ip, err, prefix)
		}
	}
	for _, r := range ranges {
		reserved(r.first, r.prefix)
		reserved(r.last, r.prefix)
		if a := netip.MustParseAddr(r.first); a.Is4() {
			reserved("::ffff:"+r.first, r.prefix)
			reserved("::ffff:"+r.last, r.prefix)
		}
	}
	// The addresses just outside each end, public or refused for another
	// reason, but never as one of these ranges.
	for _, ip := range []string{"1.0.0.0", "100.63.255.255", "100.128.0.0", "191.255.255.255", "192.0.1.0",
		"192.0.3.0", "198.17.255.255", "198.20.0.0", "198.51.99.255", "198.51.101.0", "203.0.112.255", "203.0.114.0",
		"239.255.255.255", "64:ff9a:ffff:ffff:ffff:ffff:ffff:ffff", "64:ff9b::1:0:0", "64:ff9b:0:ffff:ffff:ffff:ffff:ffff",
		"64:ff9b:2::", "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db9::", "2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
		"2003::", "ff::ffff:ffff:ffff:ffff:ffff", "100:0:0:1::", "2606:4700::1111", "::ffff:8.8.8.8"} {
		if err := publicAddr(netip.MustParseAddr(ip)); err != nil && strings.Contains(err.Error(), "is reserved") {
			t.Errorf("%s: %v, want no reserved range", ip, err)
		}
	}
}
