package fetch

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"sync"
)

// Request is one HTTP request.
type Request struct {
	Method string // "" means GET
	URL    string
	Header map[string]string
	Body   []byte
	// NoRedirect returns a redirect's own response instead of following it
	// (natively; in JS fetch runs with redirect: 'manual', and a browser
	// answers with an opaque redirect of status 0).
	NoRedirect bool
	// Allow, when set, vets every address the host name resolves to
	// natively: the connection goes to the first address it accepts, pinned
	// for this request, without proxy or connection reuse; an error when it
	// accepts none. JS cannot resolve names, so there it is not called.
	Allow func(netip.Addr) error
}

// Response is the answer's head and its streaming body. The caller closes
// Body; a read after the request's context ended fails with an error
// wrapping the context's error.
type Response struct {
	Status int
	Body   io.ReadCloser

	once   sync.Once
	head   func() map[string]string // reads the header fields (js), once
	header map[string]string
}

// Header maps the answer's lower-case field names to their values
// (repeated fields joined with ", "). Under js/wasm the fields cross from
// JS on the first call: a model's streamed answer needs none of them, and
// reading them all cost ~30 µs a response (RATIONALE.md, fetch).
func (r *Response) Header() map[string]string {
	r.once.Do(func() {
		if r.head != nil {
			r.header, r.head = r.head(), nil
		}
		if r.header == nil {
			r.header = map[string]string{}
		}
	})
	return r.header
}

// Do sends req and returns once the response headers arrived. An error is
// a network failure, or wraps ctx's error (errors.Is(err,
// context.Canceled) or context.DeadlineExceeded) when ctx ended first.
func Do(ctx context.Context, req *Request) (*Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("fetch %s: %w", req.URL, err)
	}
	method := req.Method
	if method == "" {
		method = "GET"
	}
	if !strings.HasPrefix(req.URL, "http://") && !strings.HasPrefix(req.URL, "https://") && !strings.HasPrefix(req.URL, "/") {
		return nil, fmt.Errorf("fetch %q: not an http(s) URL", req.URL)
	}
	return do(ctx, method, req)
}

// ctxErr wraps the error of ctx if it ended, else err.
func ctxErr(ctx context.Context, op string, err error) error {
	if ce := ctx.Err(); ce != nil {
		return fmt.Errorf("%s: %w", op, ce)
	}
	return fmt.Errorf("%s: %w", op, err)
}

// Refused is the error when Allow accepted none of a host's addresses.
type Refused struct{ Err error }

func (e *Refused) Error() string { return e.Err.Error() }
func (e *Refused) Unwrap() error { return e.Err }
