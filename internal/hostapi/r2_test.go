//go:build !codewasm_core

package hostapi

import (
	"context"
	"testing"
)

// An r2 workspace needs a host that states the r2.* kinds (the Worker
// entry's) and a root '<prefix>/<session>'; anything else is refused by
// name before a session exists.
func TestR2WorkspaceRefusals(t *testing.T) {
	host := func(ctx context.Context, kind string, payload []byte) ([]byte, error) { return []byte("null"), nil }
	r2 := Env{HostKinds: []string{"r2.head", "r2.get", "r2.put", "r2.list", "r2.delete"}}
	cases := []struct {
		name, opts string
		host       Host
		env        Env
		want       string
	}{
		{"kinds not stated", `{"workspace":{"kind":"r2","root":"ws/s"}}`, host, Env{}, "kind 'r2' needs the Cloudflare Worker entry"},
		{"no r2 kinds", `{"workspace":{"kind":"r2","root":"ws/s"}}`, host, Env{HostKinds: []string{"ptc.start"}}, "kind 'r2' needs the Cloudflare Worker entry"},
		{"no host", `{"workspace":{"kind":"r2","root":"ws/s"}}`, nil, r2, "kind 'r2' needs the Cloudflare Worker entry"},
		{"root without session", `{"workspace":{"kind":"r2","root":"ws"}}`, host, r2, `root "ws" must be '<prefix>/<session>'`},
		{"root with ..", `{"workspace":{"kind":"r2","root":"ws/../s"}}`, host, r2, "'..' segment"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := NewSessions()
			_, err := s.Create(context.Background(), []byte(c.opts), c.host, c.env)
			if err == nil {
				t.Fatal("created")
			}
			contains(t, err.Error(), c.want)
			contains(t, err.Error(), "createSession: options.workspace")
		})
	}
}
