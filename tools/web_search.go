package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/a3s-lab/code-wasm/errkind"
	"github.com/a3s-lab/code-wasm/internal/lazyre"
	"github.com/a3s-lab/code-wasm/kernel"
)

// web_search limits (REFERENCE.md §2.11).
const (
	webSearchDefLimit   = 10
	webSearchMaxLimit   = 50
	webSearchDefTimeout = 20 // seconds
	webSearchMaxTimeout = 60
	webSearchMaxSnippet = 2000 // characters kept of one snippet
)

// SearchHit is one result a search provider found.
type SearchHit struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet"`
}

// SearchProvider is one web_search engine the host supplies. Search
// returns at most limit hits for query and must honour ctx. A rate limit
// is an error of kind rate_limited (a *kernel.Error with
// RetryAfterMs when known), a timeout one of kind timeout; any other error
// counts as a failure of that engine.
type SearchProvider interface {
	Name() string
	Search(ctx context.Context, query string, limit int) ([]SearchHit, error)
}

// WebSearch is the `web_search` tool: the query goes to every selected
// provider at once; their hits are merged in engine order, deduplicated
// by URL and cut to limit. Status complete, partial (some engines failed)
// or failed (no hits and some engine failed; an error, never an empty
// success).
type WebSearch struct{ providers []SearchProvider }

var engineName = lazyre.New(`^[A-Za-z0-9_-]{1,64}$`)

// NewWebSearch returns web_search over providers (at least one; names of
// [A-Za-z0-9_-], unique).
func NewWebSearch(providers []SearchProvider) (*WebSearch, error) {
	if len(providers) == 0 {
		return nil, kernel.InvalidArgument("webSearch.providers: give at least one provider {name, search}")
	}
	seen := map[string]bool{}
	for i, p := range providers {
		if p == nil {
			return nil, kernel.InvalidArgument("webSearch.providers[%d] is missing", i)
		}
		n := p.Name()
		if !engineName().MatchString(n) {
			return nil, kernel.InvalidArgument("webSearch.providers[%d].name %q must be 1–64 characters of [A-Za-z0-9_-]", i, n)
		}
		if seen[n] {
			return nil, kernel.InvalidArgument("webSearch.providers[%d].name %q is given twice", i, n)
		}
		seen[n] = true
	}
	return &WebSearch{providers: providers}, nil
}

func (*WebSearch) Name() string { return "web_search" }
func (w *WebSearch) Description() string {
	return "Search the web. The query goes to every configured engine (" + strings.Join(w.names(), ", ") + ") or those in engines; " +
		"results are merged, deduplicated by URL and cut to limit (default 10, maximum 50). metadata.status is complete, " +
		"partial (some engines failed; the output names them) or failed (no results and an engine failed: an error)."
}
func (*WebSearch) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"query":{"type":"string","minLength":1,"description":"What to search for."},` +
		`"engines":{"anyOf":[{"type":"array","items":{"type":"string"}},{"type":"string"}],"description":"Engines to ask: an array of names or a comma-separated string (default: all configured)."},` +
		`"limit":{"type":"integer","minimum":1,"description":"Results to return (default 10, maximum 50)."},` +
		`"timeout":{"type":"integer","minimum":1,"description":"Seconds for the whole search (default 20, maximum 60)."},` +
		`"format":{"type":"string","enum":["text","json"],"description":"Output format (default text)."}},` +
		`"required":["query"],"examples":[{"query":"golang wasm fetch"}]}`)
}
func (*WebSearch) Capabilities(json.RawMessage) kernel.Capabilities {
	return kernel.ParallelSafeRead(8)
}

func (w *WebSearch) names() []string { return namesOf(w.providers) }

var webSearchFields = []string{"query", "engines", "limit", "timeout", "format"}

type webSearchArgs struct {
	Query   *string         `json:"query"`
	Engines json.RawMessage `json:"engines"`
	Limit   *int            `json:"limit"`
	Timeout *int            `json:"timeout"`
	Format  *string         `json:"format"`
}

// parse reads the arguments; an unknown field names the known ones and,
// for engine, the engines field it probably meant.
func (w *WebSearch) parse(raw json.RawMessage) (a webSearchArgs, engines []SearchProvider, source string, err error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err == nil {
		for k := range fields {
			if slices.Contains(webSearchFields, k) {
				continue
			}
			hint := ""
			switch k {
			case "engine":
				hint = " (did you mean engines: an array of names or a comma-separated string?)"
			case "proxy", "full_text_bytes":
				hint = " (not supported here: the host's providers make the requests)"
			}
			return a, nil, "", kernel.InvalidArgument("web_search: unknown argument %q%s; known: %s", k, hint, strings.Join(webSearchFields, ", "))
		}
	}
	if err := decodeArgs("web_search", raw, &a); err != nil {
		return a, nil, "", err
	}
	if a.Query == nil || strings.TrimSpace(*a.Query) == "" {
		return a, nil, "", kernel.InvalidArgument("web_search: query is required and must not be blank")
	}
	if a.Format != nil && *a.Format != "text" && *a.Format != "json" {
		return a, nil, "", kernel.InvalidArgument("web_search: format must be text or json, not %q", *a.Format)
	}
	if a.Limit != nil && *a.Limit < 1 {
		return a, nil, "", kernel.InvalidArgument("web_search: limit must be at least 1, not %d", *a.Limit)
	}
	if a.Timeout != nil && *a.Timeout < 1 {
		return a, nil, "", kernel.InvalidArgument("web_search: timeout must be at least 1 second, not %d", *a.Timeout)
	}
	if len(a.Engines) == 0 || string(a.Engines) == "null" {
		return a, w.providers, "configured", nil
	}
	var list []string
	var one string
	if json.Unmarshal(a.Engines, &one) == nil {
		list = strings.Split(one, ",")
	} else if json.Unmarshal(a.Engines, &list) != nil {
		return a, nil, "", kernel.InvalidArgument("web_search: engines must be an array of names or a comma-separated string")
	}
	for _, n := range list {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		i := slices.IndexFunc(w.providers, func(p SearchProvider) bool { return p.Name() == n })
		if i < 0 {
			return a, nil, "", kernel.InvalidArgument("web_search: unknown engine %q; configured: %s", n, strings.Join(w.names(), ", "))
		}
		if !slices.Contains(engines, w.providers[i]) {
			engines = append(engines, w.providers[i])
		}
	}
	if len(engines) == 0 {
		return a, nil, "", kernel.InvalidArgument("web_search: the engine plan is empty; configured: %s", strings.Join(w.names(), ", "))
	}
	return a, engines, "request", nil
}

// engineOutcome is what one engine did.
type engineOutcome struct {
	Engine     string `json:"engine"`
	Status     string `json:"status"` // ok or error
	Results    int    `json:"results"`
	ErrorKind  string `json:"error_kind,omitempty"`
	Error      string `json:"error,omitempty"`
	DurationMs int64  `json:"duration_ms"`
	hits       []SearchHit
	kind       *kernel.ErrorKind
}

func (w *WebSearch) Execute(ctx context.Context, call *kernel.Call) (*kernel.Result, error) {
	a, engines, source, err := w.parse(call.Args)
	if err != nil {
		return nil, err
	}
	query := strings.TrimSpace(*a.Query)
	limit := webSearchDefLimit
	if a.Limit != nil {
		limit = min(*a.Limit, webSearchMaxLimit)
	}
	timeout := webSearchDefTimeout
	if a.Timeout != nil {
		timeout = min(*a.Timeout, webSearchMaxTimeout)
	}
	format := "text"
	if a.Format != nil {
		format = *a.Format
	}

	sctx, cancel := context.WithTimeout(ctx, time.Duration(timeout)*time.Second)
	defer cancel()
	outcomes := make([]engineOutcome, len(engines))
	var wg sync.WaitGroup
	for i, p := range engines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outcomes[i] = search(sctx, p, query, limit)
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}

	var hits []SearchHit
	seen := map[string]bool{}
	engineOf := map[string]string{}
	var failed []engineOutcome
	errs := map[string]string{}
	for _, o := range outcomes {
		if o.Status != "ok" {
			failed = append(failed, o)
			errs[o.Engine] = o.Error
			continue
		}
		for _, h := range o.hits {
			key := dedupKey(h.URL)
			if seen[key] {
				continue
			}
			seen[key] = true
			engineOf[h.URL] = o.Engine
			hits = append(hits, h)
		}
	}
	available := len(hits)
	hits = hits[:min(len(hits), limit)]

	status := "complete"
	var notices []string
	switch {
	case len(failed) > 0 && len(hits) == 0:
		status = "failed"
	case len(failed) > 0:
		status = "partial"
	}
	if len(failed) > 0 {
		var b strings.Builder
		b.WriteString("degraded engines: ")
		for i, o := range failed {
			if i > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, "%s (%s: %s)", o.Engine, o.ErrorKind, o.Error)
		}
		notices = append(notices, b.String())
	}
	meta := map[string]any{"status": status, "query": query, "engine_selection_source": source, "selected_engines": namesOf(engines),
		"engine_outcomes": outcomes, "engine_errors": errs, "engine_failures": len(failed), "notices": notices,
		"available_result_count": available, "returned_result_count": len(hits), "output_limited": available > len(hits),
		"format": format, "trust": "external"}

	if status == "failed" {
		kind := failureKind(failed)
		msg := fmt.Sprintf("web_search: no results for %q and %d of %d engines failed; %s", query, len(failed), len(engines), notices[0])
		return &kernel.Result{Name: "web_search", Output: msg, ExitCode: 1, ErrorKind: kind, Metadata: meta}, nil
	}

	var out string
	if format == "json" {
		type item struct {
			SearchHit
			Engine string `json:"engine"`
		}
		items := make([]item, len(hits))
		for i, h := range hits {
			items[i] = item{h, engineOf[h.URL]}
		}
		b, _ := json.Marshal(map[string]any{"query": query, "status": status, "results": items, "notices": notices})
		out = string(b)
	} else {
		var b strings.Builder
		if len(hits) == 0 {
			fmt.Fprintf(&b, "No results for %q.\n", query)
		}
		for i, h := range hits {
			fmt.Fprintf(&b, "%d. %s\n   %s\n", i+1, oneLine(h.Title), h.URL)
			if s := oneLine(h.Snippet); s != "" {
				fmt.Fprintf(&b, "   %s\n", s)
			}
		}
		for _, n := range notices {
			fmt.Fprintf(&b, "\nNotice: %s\n", n)
		}
		out = b.String()
	}
	return kernel.OK(out, meta), nil
}

// search asks one engine, keeping only hits with an http(s) URL.
func search(ctx context.Context, p SearchProvider, query string, limit int) (o engineOutcome) {
	o.Engine = p.Name()
	began := time.Now()
	defer func() { o.DurationMs = time.Since(began).Milliseconds() }()
	defer func() {
		if r := recover(); r != nil {
			o.Status, o.ErrorKind, o.Error = "error", string(kernel.ErrTransport), fmt.Sprintf("the provider panicked: %v", r)
			o.kind = &kernel.ErrorKind{Type: kernel.ErrTransport, Op: "web_search"}
		}
	}()
	hits, err := p.Search(ctx, query, limit)
	if err != nil {
		o.Status, o.Error = "error", err.Error()
		o.kind = searchErrorKind(ctx, err)
		o.ErrorKind = string(o.kind.Type)
		return o
	}
	o.Status = "ok"
	for _, h := range hits {
		u, err := url.Parse(h.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			continue
		}
		if r := []rune(h.Snippet); len(r) > webSearchMaxSnippet {
			h.Snippet = string(r[:webSearchMaxSnippet]) + "…"
		}
		o.hits = append(o.hits, h)
		if len(o.hits) == limit {
			break
		}
	}
	o.Results = len(o.hits)
	return o
}

// searchErrorKind classifies an engine's error: rate_limited and timeout
// as the provider said (or the deadline passed), anything else transport.
func searchErrorKind(ctx context.Context, err error) *kernel.ErrorKind {
	var ke *kernel.Error
	switch {
	case errors.As(err, &ke) && (ke.Kind.Type == kernel.ErrRateLimited || ke.Kind.Type == kernel.ErrTimeout):
		k := ke.Kind
		return &k
	case errkind.Is(err, errkind.RateLimited):
		return &kernel.ErrorKind{Type: kernel.ErrRateLimited}
	case errkind.Is(err, errkind.Timeout), errors.Is(err, context.DeadlineExceeded), ctx.Err() == context.DeadlineExceeded:
		return &kernel.ErrorKind{Type: kernel.ErrTimeout, Op: "web_search"}
	}
	return &kernel.ErrorKind{Type: kernel.ErrTransport, Op: "web_search"}
}

// failureKind is a failed search's kind: rate_limited when every failure
// was a rate limit (retry after the longest wait named), timeout when
// every one was a timeout, else transport.
func failureKind(failed []engineOutcome) *kernel.ErrorKind {
	all := func(t kernel.ErrorType) bool {
		return !slices.ContainsFunc(failed, func(o engineOutcome) bool { return o.kind.Type != t })
	}
	switch {
	case all(kernel.ErrRateLimited):
		k := &kernel.ErrorKind{Type: kernel.ErrRateLimited}
		for _, o := range failed {
			k.RetryAfterMs = max(k.RetryAfterMs, o.kind.RetryAfterMs)
		}
		return k
	case all(kernel.ErrTimeout):
		return &kernel.ErrorKind{Type: kernel.ErrTimeout, Op: "web_search"}
	}
	return &kernel.ErrorKind{Type: kernel.ErrTransport, Op: "web_search"}
}

// dedupKey is a URL compared without scheme, "www.", fragment, case of the
// host or a trailing slash.
func dedupKey(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	host := strings.TrimPrefix(strings.ToLower(u.Host), "www.")
	return host + strings.TrimSuffix(u.EscapedPath(), "/") + "?" + u.RawQuery
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func namesOf(ps []SearchProvider) []string {
	n := make([]string, len(ps))
	for i, p := range ps {
		n[i] = p.Name()
	}
	return n
}
