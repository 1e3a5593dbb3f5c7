package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/a3s-lab/code-wasm/internal/fetch"
	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/tools/internal/htmlmd"
)

// web_fetch limits (REFERENCE.md §2.10).
const (
	webFetchMaxBytes     = 5 << 20 // decoded bytes read from the body
	webFetchMaxRedirects = 10
	webFetchMaxChars     = 100_000
	webFetchDefChars     = 50_000
	webFetchDefTimeout   = 30 // seconds
	webFetchMaxTimeout   = 120
)

// WebFetch is the `web_fetch` tool: one http(s) page as Markdown, text or
// HTML, in character windows (REFERENCE.md §2.10). Every hop must reach a
// public address unless its origin is allowed exactly.
type WebFetch struct{ allow map[string]bool }

// NewWebFetch returns web_fetch allowing the exact origins listed
// ("http://127.0.0.1:8787") even when they are not public.
func NewWebFetch(allowOrigins []string) (*WebFetch, error) {
	w := &WebFetch{allow: map[string]bool{}}
	for _, o := range allowOrigins {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
			(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
			return nil, kernel.InvalidArgument("webFetch.allowOrigins: %q is not an origin like http://127.0.0.1:8787", o)
		}
		w.allow[u.Scheme+"://"+strings.ToLower(u.Host)] = true
	}
	return w, nil
}

func (*WebFetch) Name() string { return "web_fetch" }
func (*WebFetch) Description() string {
	return "Fetch one http(s) URL and return the page as Markdown (default; tables kept, scripts, styles and navigation dropped), " +
		"plain text or raw HTML. Long pages come in windows of max_chars characters (default 50000, maximum 100000): " +
		"pass metadata.range.next_offset as offset to continue. Downloads stop at 5 MB; at most 10 redirects; " +
		"only public addresses are reachable."
}
func (*WebFetch) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"url":{"type":"string","description":"The http or https URL to fetch."},` +
		`"format":{"type":"string","enum":["markdown","text","html"],"description":"Output format (default markdown)."},` +
		`"timeout":{"type":"integer","minimum":1,"description":"Seconds for the whole fetch (default 30, maximum 120)."},` +
		`"body_only":{"type":"boolean","description":"Keep only the page body (default true); false also keeps the title."},` +
		`"offset":{"type":"integer","minimum":0,"description":"Character offset into the converted page (default 0)."},` +
		`"max_chars":{"type":"integer","minimum":1,"description":"Characters to return (default 50000, maximum 100000; larger values are clamped)."}},` +
		`"required":["url"],"additionalProperties":false,"examples":[{"url":"https://example.com/"},{"url":"https://example.com/","offset":50000}]}`)
}
func (*WebFetch) Capabilities(json.RawMessage) kernel.Capabilities {
	return kernel.ReadOnlyPaginated(8)
}

type webFetchArgs struct {
	URL      *string `json:"url"`
	Format   *string `json:"format"`
	Timeout  *int    `json:"timeout"`
	BodyOnly *bool   `json:"body_only"`
	Offset   *int    `json:"offset"`
	MaxChars *int    `json:"max_chars"`
}

func (w *WebFetch) Execute(ctx context.Context, call *kernel.Call) (*kernel.Result, error) {
	var a webFetchArgs
	if err := decodeArgs("web_fetch", call.Args, &a); err != nil {
		return nil, err
	}
	if a.URL == nil || *a.URL == "" {
		return nil, kernel.InvalidArgument("web_fetch: url is required")
	}
	format := "markdown"
	if a.Format != nil {
		format = *a.Format
	}
	if format != "markdown" && format != "text" && format != "html" {
		return nil, kernel.InvalidArgument("web_fetch: format must be markdown, text or html, not %q", format)
	}
	timeout := webFetchDefTimeout
	if a.Timeout != nil {
		if *a.Timeout < 1 {
			return nil, kernel.InvalidArgument("web_fetch: timeout must be at least 1 second, not %d", *a.Timeout)
		}
		timeout = min(*a.Timeout, webFetchMaxTimeout)
	}
	offset := 0
	if a.Offset != nil {
		if *a.Offset < 0 {
			return nil, kernel.InvalidArgument("web_fetch: offset must be 0 or more, not %d", *a.Offset)
		}
		offset = *a.Offset
	}
	requested := webFetchDefChars
	if a.MaxChars != nil {
		if *a.MaxChars < 1 {
			return nil, kernel.InvalidArgument("web_fetch: max_chars must be at least 1, not %d", *a.MaxChars)
		}
		requested = *a.MaxChars
	}
	applied := min(requested, webFetchMaxChars)
	start, err := w.check(*a.URL)
	if err != nil {
		return nil, err
	}

	ctx, cancel := context.WithTimeout(ctx, time.Duration(timeout)*time.Second)
	defer cancel()
	began := time.Now()
	page, final, ctype, cut, err := w.get(ctx, start)
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded && errors.Is(err, context.DeadlineExceeded) {
			return nil, &kernel.Error{Kind: kernel.ErrorKind{Type: kernel.ErrTimeout, Op: "web_fetch", DurationMs: time.Since(began).Milliseconds()},
				Msg: fmt.Sprintf("web_fetch: %s did not finish within %d s", anchor(start), timeout), Err: err}
		}
		return nil, err
	}

	body := page
	isHTML := strings.Contains(ctype, "html") || (ctype == "" && htmlLike(page))
	if isHTML && *orTrue(a.BodyOnly) && format == "html" {
		body = htmlmd.Body(page)
	}
	text := string(body)
	if isHTML && format != "html" {
		text = htmlmd.Convert(page, format == "markdown", *orTrue(a.BodyOnly))
	}
	text = strings.ToValidUTF8(text, "\uFFFD")

	total := utf8.RuneCountInString(text)
	lo := min(offset, total)
	bi := byteAt(text, lo)
	chunk := text[bi:]
	chunk = chunk[:byteAt(chunk, applied)]
	// A window of multi-byte characters may exceed what the kernel passes
	// whole; it ends earlier instead, and next_offset continues from there.
	byteCut := len(chunk) > kernel.MaxOutputBytes
	if byteCut {
		end := kernel.MaxOutputBytes
		for end > 0 && !utf8.RuneStart(chunk[end]) {
			end--
		}
		chunk = chunk[:end]
	}
	returned := utf8.RuneCountInString(chunk)
	eof := lo+returned >= total
	rng := map[string]any{"offset": offset, "requested_max_chars": requested, "applied_max_chars": applied,
		"returned_chars": returned, "total_chars": total, "next_offset": nil, "eof": eof, "limit_clamped": requested != applied}
	if !eof {
		rng["next_offset"] = lo + returned
	}
	anchors := []string{anchor(start)}
	if fa := anchor(final); fa != anchors[0] {
		anchors = append(anchors, fa)
	}
	meta := map[string]any{"url": anchor(start), "final_url": anchor(final), "content_type": ctype, "format": format,
		"bytes": len(page), "download_truncated": cut, "window_cut_at_bytes": byteCut, "range": rng, "source_anchors": anchors, "trust": "external"}
	return kernel.OK(chunk, meta), nil
}

func orTrue(b *bool) *bool {
	if b == nil {
		t := true
		return &t
	}
	return b
}

// byteAt is the byte index of the n-th character of s (len(s) past the end).
func byteAt(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

func htmlLike(b []byte) bool {
	head := strings.ToLower(string(b[:min(len(b), 512)]))
	return strings.Contains(head, "<html") || strings.Contains(head, "<!doctype html")
}

// anchor is u without credentials, query and fragment.
func anchor(u *url.URL) string {
	c := *u
	c.User, c.RawQuery, c.ForceQuery, c.Fragment, c.RawFragment = nil, "", false, "", ""
	return c.String()
}

// check parses raw and refuses, before any connection, what may not be
// fetched: other schemes, credentials, and literal addresses that are not
// public (unless the origin is allowed).
func (w *WebFetch) check(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, kernel.InvalidArgument("web_fetch: %q is not a URL: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, kernel.InvalidArgument("web_fetch: only http and https URLs can be fetched, not %q", raw)
	}
	if u.Hostname() == "" {
		return nil, kernel.InvalidArgument("web_fetch: %q has no host", raw)
	}
	if u.User != nil {
		return nil, kernel.InvalidArgument("web_fetch: URLs with credentials are refused (%s)", anchor(u))
	}
	if w.allowed(u) {
		return u, nil
	}
	host := strings.ToLower(u.Hostname())
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return nil, w.refuse(u, host+" is loopback")
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if err := publicAddr(ip.Unmap()); err != nil {
			return nil, w.refuse(u, err.Error())
		}
	}
	return u, nil
}

func (w *WebFetch) allowed(u *url.URL) bool { return w.allow[u.Scheme+"://"+strings.ToLower(u.Host)] }

func (w *WebFetch) refuse(u *url.URL, why string) error {
	return kernel.InvalidArgument("web_fetch: %s refused: the address %s; only public addresses can be fetched "+
		"(a host allows an exact origin with webFetch.allowOrigins)", anchor(u), why)
}

// get follows up to webFetchMaxRedirects redirects (Location and HTML meta
// refresh), vetting every hop, and reads at most webFetchMaxBytes.
func (w *WebFetch) get(ctx context.Context, u *url.URL) (page []byte, final *url.URL, ctype string, cut bool, err error) {
	for hops := 0; ; hops++ {
		req := &fetch.Request{URL: u.String(), NoRedirect: true, Header: map[string]string{
			"accept": "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.8", "user-agent": "a3s-code web_fetch"}}
		if !w.allowed(u) {
			req.Allow = publicAddr
		}
		res, err := fetch.Do(ctx, req)
		if err != nil {
			var r *fetch.Refused
			if errors.As(err, &r) {
				return nil, nil, "", false, w.refuse(u, r.Err.Error())
			}
			if ctx.Err() != nil {
				return nil, nil, "", false, err
			}
			hint := ""
			if runtime.GOOS == "js" {
				hint = " (in a browser a server that sends no CORS headers, Access-Control-Allow-Origin, fails the same way)"
			}
			return nil, nil, "", false, &kernel.Error{Kind: kernel.ErrorKind{Type: kernel.ErrTransport, Op: "web_fetch"},
				Msg: fmt.Sprintf("web_fetch: %s: %v%s", anchor(u), err, hint), Err: err}
		}
		next := ""
		switch {
		case res.Status >= 300 && res.Status < 400 && res.Header()["location"] != "":
			next = res.Header()["location"]
		case res.Status == 0:
			res.Body.Close()
			return nil, nil, "", false, &kernel.Error{Kind: kernel.ErrorKind{Type: kernel.ErrTransport, Op: "web_fetch"},
				Msg: fmt.Sprintf("web_fetch: %s answered with a redirect or a response this host cannot read (in a browser the server's CORS policy decides)", anchor(u))}
		case res.Status == 429:
			res.Body.Close()
			return nil, nil, "", false, &kernel.Error{Kind: kernel.ErrorKind{Type: kernel.ErrRateLimited, RetryAfterMs: retryAfter(res.Header()["retry-after"])},
				Msg: fmt.Sprintf("web_fetch: %s answered 429 Too Many Requests", anchor(u))}
		case res.Status >= 400:
			res.Body.Close()
			return nil, nil, "", false, &kernel.Error{Kind: kernel.ErrorKind{Type: kernel.ErrTransport, Op: "web_fetch"},
				Msg: fmt.Sprintf("web_fetch: %s answered HTTP %d", anchor(u), res.Status)}
		}
		if next == "" {
			page, err = io.ReadAll(io.LimitReader(res.Body, webFetchMaxBytes+1))
			res.Body.Close()
			if err != nil {
				if ctx.Err() != nil {
					return nil, nil, "", false, err
				}
				return nil, nil, "", false, &kernel.Error{Kind: kernel.ErrorKind{Type: kernel.ErrTransport, Op: "web_fetch"},
					Msg: fmt.Sprintf("web_fetch: reading %s: %v", anchor(u), err), Err: err}
			}
			if cut = len(page) > webFetchMaxBytes; cut {
				page = page[:webFetchMaxBytes]
			}
			ctype = strings.ToLower(strings.TrimSpace(strings.Split(res.Header()["content-type"], ";")[0]))
			if strings.Contains(ctype, "html") || (ctype == "" && htmlLike(page)) {
				next = htmlmd.Refresh(page)
			}
			if next == "" {
				return page, u, ctype, cut, nil
			}
		} else {
			res.Body.Close()
		}
		if hops == webFetchMaxRedirects {
			return nil, nil, "", false, &kernel.Error{Kind: kernel.ErrorKind{Type: kernel.ErrTransport, Op: "web_fetch"},
				Msg: fmt.Sprintf("web_fetch: more than %d redirects starting at the requested URL (last: %s)", webFetchMaxRedirects, anchor(u))}
		}
		ref, err := u.Parse(next)
		if err != nil {
			return nil, nil, "", false, &kernel.Error{Kind: kernel.ErrorKind{Type: kernel.ErrTransport, Op: "web_fetch"},
				Msg: fmt.Sprintf("web_fetch: %s redirects to an invalid URL %q", anchor(u), next)}
		}
		if u, err = w.check(ref.String()); err != nil {
			return nil, nil, "", false, err
		}
	}
}

// retryAfter reads Retry-After seconds as milliseconds (0 when absent or a date).
func retryAfter(v string) int64 {
	s, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || s < 0 {
		return 0
	}
	return int64(s) * 1000
}

// nonPublic lists the ranges web_fetch never reaches besides those netip
// classifies (loopback, private, link-local, multicast, unspecified).
// Built from bytes, not parsed: netip's parser at package init put 27 KB of
// wasm body, which V8 compiles on first call, into every start.
var nonPublic = []netip.Prefix{
	v4(0, 0, 0, 0, 8), v4(100, 64, 0, 0, 10), v4(192, 0, 0, 0, 24), v4(192, 0, 2, 0, 24),
	v4(198, 18, 0, 0, 15), v4(198, 51, 100, 0, 24), v4(203, 0, 113, 0, 24), v4(240, 0, 0, 0, 4),
	v6(0x0064, 0xff9b, 0, 96), v6(0x0064, 0xff9b, 1, 48), v6(0x2001, 0x0db8, 0, 32), v6(0x2002, 0, 0, 16),
	v6(0x0100, 0, 0, 64),
}

// v4 is the prefix a.b.c.d/bits; v6 is h0:h1:h2::/bits.
func v4(a, b, c, d byte, bits int) netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{a, b, c, d}), bits)
}

func v6(h0, h1, h2 uint16, bits int) netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom16([16]byte{byte(h0 >> 8), byte(h0), byte(h1 >> 8), byte(h1), byte(h2 >> 8), byte(h2)}), bits)
}

// publicAddr is nil for a public unicast address, else an error saying
// what ip is.
func publicAddr(ip netip.Addr) error {
	ip = ip.Unmap()
	why := ""
	switch {
	case ip.IsLoopback():
		why = "is loopback"
	case ip.IsPrivate():
		why = "is private"
	case ip.IsLinkLocalUnicast():
		why = "is link-local (cloud metadata lives there)"
	case ip.IsUnspecified(), ip.IsMulticast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast():
		why = "is not unicast"
	}
	for _, p := range nonPublic {
		if why == "" && p.Contains(ip) {
			why = "is reserved (" + p.String() + ")"
		}
	}
	if why == "" {
		return nil
	}
	return fmt.Errorf("%s %s", ip, why)
}
