package agent_test

import (
	"context"
	"io"
	"sync"
	"testing"

	"github.com/a3s-lab/code-wasm/agent"
	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/internal/fetch"
)

// BenchmarkFanOut32 is one session.tasks of 32 explore children, each
// answering one text turn, all 32 at once (maxParallelTasks 32), against
// the scripted server on 127.0.0.1; BenchmarkFanOut32Replay sends the same
// 32 request bodies concurrently with the HTTP seam alone. The difference
// is delegation's own cost per fan-out (the goal: ≤ 20 ms in
// wasm).
//
//	go test -run '^$' -bench FanOut32 ./agent/
func BenchmarkFanOut32(b *testing.B) {
	w := newWire(b, "openai", core.Options{MaxParallelTasks: 32}, text("done"))
	w.sub.Close()
	tasks := make([]agent.TaskSpec, 32)
	for i := range tasks {
		tasks[i] = explore("look")
	}
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		res, err := w.s.Tasks(ctx, tasks, core.TaskOptions{})
		if err != nil || res.ExitCode != 0 {
			b.Fatal(err, res)
		}
	}
}

func BenchmarkFanOut32Replay(b *testing.B) {
	w := newWire(b, "openai", core.Options{}, text("done"))
	w.sub.Close()
	if _, err := w.s.Task(context.Background(), explore("look")); err != nil {
		b.Fatal(err)
	}
	body := w.log(0).Requests[0].Body
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		var wg sync.WaitGroup
		for range 32 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := fetch.Do(ctx, &fetch.Request{Method: "POST", URL: w.loaded.BaseURL + "/chat/completions",
					Header: map[string]string{"content-type": "application/json", "authorization": "Bearer sk-test"}, Body: body})
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}()
		}
		wg.Wait()
	}
}
