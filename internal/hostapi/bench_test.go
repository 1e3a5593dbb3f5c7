package hostapi

import (
	"context"
	"encoding/json"
	"testing"
)

// BenchmarkCall separates this layer's cost (JSON decode of the call,
// encode of the result) from the kernel's: the same read through
// Sessions.Call plus json.Marshal, and through core.Session.Tool.
func BenchmarkCall(b *testing.B) {
	ctx := context.Background()
	s := NewSessions()
	id, err := s.Create(ctx, []byte(`{"workspace":{"kind":"memory","files":{"a.txt":"hello\n"}}}`), nil, Env{})
	if err != nil {
		b.Fatal(err)
	}
	args := []byte(`{"name":"read","args":{"file_path":"a.txt"}}`)
	b.Run("hostapi", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			v, err := s.Call(ctx, id, "tool", args)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := json.Marshal(v); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The browser Worker's state read after every call (AFTER_CALL in
	// npm/src/browser-worker.mjs).
	after := []byte(`{"methods":["activeTools","pendingConfirmations","isClosed","toolNames","mcpStatus","skillNames"]}`)
	b.Run("syncState", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			v, err := s.CallSync(id, "syncState", after)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := json.Marshal(v); err != nil {
				b.Fatal(err)
			}
		}
	})
	e, _ := s.get(id)
	raw := json.RawMessage(`{"file_path":"a.txt"}`)
	b.Run("core", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := e.s.Tool(ctx, "read", raw); err != nil {
				b.Fatal(err)
			}
		}
	})
}
