//go:build !js

package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"
)

// allowKey carries a Request's Allow to the guarded dialer.
type allowKey struct{}

// guarded dials only addresses the request's Allow accepts; it neither
// proxies nor keeps connections, so one request's vetting never serves
// another's.
var guarded = &http.Transport{
	DisableKeepAlives: true,
	DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		allow, _ := ctx.Value(allowKey{}).(func(netip.Addr) error)
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, err
		}
		var refused error
		for _, ip := range ips {
			ip = ip.Unmap()
			if err := allow(ip); err != nil {
				refused = err
				continue
			}
			d := net.Dialer{Timeout: 30 * time.Second}
			return d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		}
		if refused == nil {
			refused = fmt.Errorf("%s resolves to no address", host)
		}
		return nil, &Refused{Err: refused}
	},
	TLSHandshakeTimeout: 30 * time.Second,
}

func do(ctx context.Context, method string, req *Request) (*Response, error) {
	hr, err := http.NewRequestWithContext(ctx, method, req.URL, bytes.NewReader(req.Body))
	if err != nil {
		return nil, err
	}
	for k, v := range req.Header {
		hr.Header.Set(k, v)
	}
	client := http.DefaultClient
	if req.Allow != nil || req.NoRedirect {
		c := &http.Client{}
		if req.Allow != nil {
			c.Transport = guarded
			hr = hr.WithContext(context.WithValue(ctx, allowKey{}, req.Allow))
		}
		if req.NoRedirect {
			c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		}
		client = c
	}
	res, err := client.Do(hr)
	if err != nil {
		var r *Refused
		if errors.As(err, &r) {
			return nil, r
		}
		return nil, ctxErr(ctx, "fetch "+req.URL, err)
	}
	h := make(map[string]string, len(res.Header))
	for k, vs := range res.Header {
		h[strings.ToLower(k)] = strings.Join(vs, ", ")
	}
	return &Response{Status: res.StatusCode, header: h, Body: &body{ctx, res.Body}}, nil
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
