package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"

	"github.com/a3s-lab/code-wasm/internal/fetch"
	"github.com/a3s-lab/code-wasm/kernel"
)

// HTTPSearchConfig is a web_search engine the session reaches itself over
// HTTP: a kind (the request and response shape) and its endpoint.
//   - "searxng": a SearXNG instance's search URL (https://searx.example/search),
//     asked with format=json; no key.
//   - "brave": the Brave Search API (URL defaults to
//     https://api.search.brave.com/res/v1/web/search); APIKey is required.
//
// The endpoint is reached like web_fetch reaches a page: public addresses
// only, unless its origin is in allowOrigins.
type HTTPSearchConfig struct {
	Name    string            `json:"name"`
	Kind    string            `json:"kind"`
	URL     string            `json:"url"`
	APIKey  string            `json:"apiKey"`
	Headers map[string]string `json:"headers"`
}

const (
	braveURL            = "https://api.search.brave.com/res/v1/web/search"
	httpSearchMaxBytes  = 4 << 20
	braveMaxCount       = 20
	httpSearchUserAgent = "a3s-code web_search"
)

// NewHTTPSearch returns the engine c describes; allowOrigins are exact
// origins it may reach though they are not public (as web_fetch's).
func NewHTTPSearch(c HTTPSearchConfig, allowOrigins []string) (SearchProvider, error) {
	at := "webSearch provider " + strconv.Quote(c.Name)
	switch c.Kind {
	case "searxng":
		if c.URL == "" {
			return nil, kernel.InvalidArgument("%s: kind searxng needs url, the instance's search URL (https://searx.example/search)", at)
		}
	case "brave":
		if c.APIKey == "" {
			return nil, kernel.InvalidArgument("%s: kind brave needs apiKey", at)
		}
		if c.URL == "" {
			c.URL = braveURL
		}
	default:
		return nil, kernel.InvalidArgument("%s: kind must be searxng or brave, not %q (or give a search function instead)", at, c.Kind)
	}
	guard, err := NewWebFetch(allowOrigins)
	if err != nil {
		return nil, err
	}
	u, err := guard.check(c.URL)
	if err != nil {
		return nil, kernel.InvalidArgument("%s: url: %v", at, err)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, kernel.InvalidArgument("%s: url %q must have no query or fragment", at, c.URL)
	}
	return &httpSearch{c: c, u: u, guard: guard}, nil
}

type httpSearch struct {
	c     HTTPSearchConfig
	u     *url.URL
	guard *WebFetch
}

func (h *httpSearch) Name() string { return h.c.Name }

func (h *httpSearch) Search(ctx context.Context, query string, limit int) ([]SearchHit, error) {
	q := url.Values{"q": {query}}
	hdr := map[string]string{"accept": "application/json", "user-agent": httpSearchUserAgent}
	for k, v := range h.c.Headers {
		hdr[k] = v
	}
	if h.c.Kind == "searxng" {
		q.Set("format", "json")
	} else {
		q.Set("count", strconv.Itoa(min(limit, braveMaxCount)))
		hdr["x-subscription-token"] = h.c.APIKey
	}
	u := *h.u
	u.RawQuery = q.Encode()
	req := &fetch.Request{URL: u.String(), Header: hdr, NoRedirect: true}
	if !h.guard.allowed(h.u) {
		req.Allow = publicAddr
	}
	res, err := fetch.Do(ctx, req)
	if err != nil {
		var r *fetch.Refused
		if errors.As(err, &r) {
			return nil, fmt.Errorf("%s refused: %v (only public addresses, or webFetch.allowOrigins)", anchor(h.u), r.Err)
		}
		return nil, err
	}
	defer res.Body.Close()
	switch {
	case res.Status == 429:
		return nil, &kernel.Error{Kind: kernel.ErrorKind{Type: kernel.ErrRateLimited, RetryAfterMs: retryAfter(res.Header()["retry-after"])},
			Msg: fmt.Sprintf("%s answered 429 Too Many Requests", anchor(h.u))}
	case res.Status < 200 || res.Status > 299:
		return nil, fmt.Errorf("%s answered HTTP %d", anchor(h.u), res.Status)
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, httpSearchMaxBytes))
	if err != nil {
		return nil, err
	}
	var hits []SearchHit
	if h.c.Kind == "searxng" {
		var r struct {
			Results []struct{ Title, URL, Content string }
		}
		if err := json.Unmarshal(body, &r); err != nil {
			return nil, fmt.Errorf("%s answered %.100q, not SearXNG's JSON (is format=json enabled on the instance?)", anchor(h.u), body)
		}
		for _, x := range r.Results {
			hits = append(hits, SearchHit{Title: x.Title, URL: x.URL, Snippet: x.Content})
		}
	} else {
		var r struct {
			Web struct {
				Results []struct{ Title, URL, Description string }
			}
		}
		if err := json.Unmarshal(body, &r); err != nil {
			return nil, fmt.Errorf("%s answered %.100q, not Brave Search's JSON", anchor(h.u), body)
		}
		for _, x := range r.Web.Results {
			hits = append(hits, SearchHit{Title: x.Title, URL: x.URL, Snippet: x.Description})
		}
	}
	return hits[:min(len(hits), limit)], nil
}
