//go:build !js

package fetch_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync/atomic"
	"testing"

	"github.com/a3s-lab/code-wasm/internal/fetch"
)

// TestAllowPinsAndRefuses: the native dialer vets the resolved address
// before connecting, and NoRedirect hands back the redirect itself.
func TestAllowPinsAndRefuses(t *testing.T) {
	var hits atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	}))
	defer s.Close()
	var seen []netip.Addr
	refuse := func(ip netip.Addr) error { seen = append(seen, ip); return errors.New(ip.String() + " is loopback") }
	_, err := fetch.Do(context.Background(), &fetch.Request{URL: s.URL, Allow: refuse})
	var r *fetch.Refused
	if !errors.As(err, &r) || len(seen) == 0 || !seen[0].IsLoopback() || hits.Load() != 0 {
		t.Fatalf("refused: err %v, vetted %v, server hits %d", err, seen, hits.Load())
	}
	res, err := fetch.Do(context.Background(), &fetch.Request{URL: s.URL, NoRedirect: true,
		Allow: func(netip.Addr) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.Status != http.StatusFound || res.Header()["location"] != "/elsewhere" || hits.Load() != 1 {
		t.Fatalf("manual redirect: %d %q, hits %d", res.Status, res.Header()["location"], hits.Load())
	}
}
