package agent_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/internal/fetch"
	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/llm"
	"github.com/a3s-lab/code-wasm/llm/llmtest"
	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/memfs"
)

// BenchmarkAgentTurn is one send (a read of a 1 KiB file, then the
// answer: two model requests) against the scripted server on 127.0.0.1;
// BenchmarkAgentTurnReplay sends the same two request bodies with the
// HTTP seam alone. The difference is the loop's own cost per turn (bench
// "agent turn overhead"; bench/agent.bench.mjs measures it in wasm).
//
//	go test -run '^$' -bench AgentTurn ./agent/
func BenchmarkAgentTurn(b *testing.B) {
	w := benchWire(b, b.N+1)
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		if _, err := w.s.Send(ctx, "read k.txt", []llm.Message{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAgentTurnReplay(b *testing.B) {
	w := benchWire(b, 2)
	ctx := context.Background()
	if _, err := w.s.Send(ctx, "read k.txt", []llm.Message{}); err != nil {
		b.Fatal(err)
	}
	l := w.log(0)
	w2 := benchWire(b, b.N+1)
	b.ResetTimer()
	for range b.N {
		for _, r := range l.Requests[:2] {
			res, err := fetch.Do(ctx, &fetch.Request{Method: "POST", URL: w2.loaded.BaseURL + "/chat/completions",
				Header: map[string]string{"content-type": "application/json", "authorization": "Bearer sk-test"}, Body: r.Body})
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.Status != 200 {
				b.Fatal(res.Status)
			}
		}
	}
}

// benchWire loads n copies of the turn (a read call, then the answer).
func benchWire(b *testing.B, n int) *wire {
	w := newWire(b, "openai", benchOpts(b), benchReplies(n)...)
	w.sub.Close()
	return w
}

func benchReplies(n int) []llmtest.Reply {
	var replies []llmtest.Reply
	for range n {
		replies = append(replies, calls(call{"call_1", "read", `{"file_path":"k.txt"}`}), text("The file holds a kilobyte."))
	}
	return replies
}

// benchOpts: a workspace with a 1 KiB k.txt, and read allowed.
func benchOpts(tb testing.TB) core.Options {
	ws, err := workspace.New(memfs.New())
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := ws.WriteFile(context.Background(), "k.txt", []byte(strings.Repeat(strings.Repeat("x", 63)+"\n", 16))); err != nil {
		tb.Fatal(err)
	}
	return core.Options{Workspace: ws, Governance: kernel.Governance{Permission: kernel.PermissionPolicy{Allow: []string{"read"}}}}
}
