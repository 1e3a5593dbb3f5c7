//go:build !js

package fetch

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
)

func do(ctx context.Context, method string, req *Request) (*Response, error) {
	hr, err := http.NewRequestWithContext(ctx, method, req.URL, bytes.NewReader(req.Body))
	if err != nil {
		return nil, err
	}
	for k, v := range req.Header {
		hr.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(hr)
	if err != nil {
		return nil, ctxErr(ctx, "fetch "+req.URL, err)
	}
	h := make(map[string]string, len(res.Header))
	for k, vs := range res.Header {
		h[strings.ToLower(k)] = strings.Join(vs, ", ")
	}
	return &Response{Status: res.StatusCode, Header: h, Body: &body{ctx, res.Body}}, nil
}

// body reports a read cut by the context as the context's error.
type body struct {
	ctx context.Context
	rc  io.ReadCloser
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil && err != io.EOF {
		err = ctxErr(b.ctx, "fetch body", err)
	}
	return n, err
}

func (b *body) Close() error { return b.rc.Close() }
