package tools

import (
	"context"
	"testing"

	"github.com/a3s-lab/code-wasm/workspace"
)

// BenchmarkGlobParts splits a glob over GOROOT/src into its parts, so the
// native and js/wasm figures of each can be compared side by side: the
// per-call cost (a one-file workspace), a no-op walk, a glob that matches
// nothing (walk + match, no rendering), and the full globs of
// BenchmarkTools.
//
//	go test -run '^$' -bench BenchmarkGlobParts -benchtime 20x -count 3 -cpu 1 ./tools/
//	GOOS=js GOARCH=wasm PATH="$(go env GOROOT)/lib/wasm:$PATH" go test -run '^$' -bench BenchmarkGlobParts -benchtime 20x -count 3 ./tools/
func BenchmarkGlobParts(b *testing.B) {
	ws, err := gorootWS()
	if err != nil {
		b.Skipf("GOROOT/src not readable here: %v", err)
	}
	ctx := context.Background()
	tiny := newWS(b, map[string]string{"a.go": "package a\n"})
	b.Run("call/one-file", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if res := run(b, tiny, "glob", map[string]any{"pattern": "**/*.go", "limit": 1000}); res.ExitCode != 0 {
				b.Fatal(res.Output)
			}
		}
	})
	b.Run("walk/noop", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			n := 0
			if err := ws.Walk(ctx, ".", func(string, workspace.Entry) error { n++; return nil }); err != nil || n == 0 {
				b.Fatal(n, err)
			}
		}
	})
	b.Run("walk/runs-noop", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			n := 0
			if err := ws.WalkRuns(ctx, ".", func(_ []string, es []workspace.Entry) error { n += len(es); return nil }); err != nil || n == 0 {
				b.Fatal(n, err)
			}
		}
	})
	cases := []struct {
		name string
		args map[string]any
	}{
		{"glob/nomatch", map[string]any{"pattern": "**/*.nomatch", "limit": 1000}},
		{"glob/**/*.go", map[string]any{"pattern": "**/*.go", "limit": 1000}},
		{"glob/sorted/**/*_test.go", map[string]any{"pattern": "**/*_test.go", "sort": "path", "limit": 1000}},
		{"glob/sub/net/**/*.go", map[string]any{"pattern": "net/**/*.go", "limit": 1000}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if res := run(b, ws, "glob", c.args); res.ExitCode != 0 {
					b.Fatal(res.Output)
				}
			}
		})
	}
}
