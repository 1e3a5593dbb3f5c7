//go:build !codewasm_core

package hostapi

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/tools"
)

// WebSearchSpec is options.webSearch. A provider with a search function
// stays in JS (Go sees its name; the host kind "webSearch" asks it); one
// with a kind (searxng, brave) is reached from Go over HTTP, under
// webFetch.allowOrigins like web_fetch.
type WebSearchSpec struct {
	Providers []tools.HTTPSearchConfig `json:"providers"`
}

// webSearchTool builds web_search over the JS providers o names; nil
// when there are none (the tool is then not listed).
func (o *Options) webSearchTool(host Host) (*tools.WebSearch, error) {
	if o.WebSearch == nil {
		return nil, nil
	}
	var allow []string
	if o.WebFetch != nil {
		allow = o.WebFetch.AllowOrigins
	}
	ps := make([]tools.SearchProvider, len(o.WebSearch.Providers))
	for i, p := range o.WebSearch.Providers {
		if p.Kind != "" {
			e, err := tools.NewHTTPSearch(p, allow)
			if err != nil {
				return nil, err
			}
			ps[i] = e
			continue
		}
		if host == nil {
			return nil, fmt.Errorf("webSearch.providers[%d] has no kind and its search function needs the host dispatcher", i)
		}
		ps[i] = &hostSearch{host: host, name: p.Name}
	}
	return tools.NewWebSearch(ps)
}

// hostSearch is a JS provider {name, search(query, {limit, signal})}
// asked through the host kind "webSearch" ({provider, query, limit}); JS
// answers {results} or {error: {code, message, retryAfterMs}}.
type hostSearch struct {
	host Host
	name string
}

func (h *hostSearch) Name() string { return h.name }

func (h *hostSearch) Search(ctx context.Context, query string, limit int) ([]tools.SearchHit, error) {
	b, _ := json.Marshal(map[string]any{"provider": h.name, "query": query, "limit": limit})
	out, err := h.host(ctx, "webSearch", b)
	if err != nil {
		return nil, err
	}
	var a struct {
		Results []tools.SearchHit `json:"results"`
		Error   *struct {
			Code         string `json:"code"`
			Message      string `json:"message"`
			RetryAfterMs int64  `json:"retryAfterMs"`
		} `json:"error"`
	}
	if err := json.Unmarshal(out, &a); err != nil {
		return nil, fmt.Errorf("search resolved to %.200s, not an array of {title, url, snippet}", out)
	}
	if e := a.Error; e != nil {
		switch e.Code {
		case "rate_limited":
			return nil, &kernel.Error{Kind: kernel.ErrorKind{Type: kernel.ErrRateLimited, RetryAfterMs: max(e.RetryAfterMs, 0)}, Msg: e.Message}
		case "timeout":
			return nil, &kernel.Error{Kind: kernel.ErrorKind{Type: kernel.ErrTimeout, Op: "web_search"}, Msg: e.Message}
		}
		return nil, fmt.Errorf("%s", e.Message)
	}
	return a.Results, nil
}
