package agent_test

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/agent"
	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/internal/fetch"
	"github.com/a3s-lab/code-wasm/llm/llmtest"
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

// BenchmarkChildMemory32 measures what a delegated child holds while it
// runs: 32 explore children all waiting on their reply (held 1.5 s by the
// scripted server), the Go heap and goroutine stacks in use (after a GC)
// against the same session idle, per child. live-B/child is that figure,
// body-B/child the child's request body (its transcript as sent: system
// prompt, tools, prompt), beyond-B/child the difference (the goal:
// ≤ 200 KB in wasm); retained-B/child is what stays per child after the
// fan-out returned.
//
//	go test -run '^$' -bench ChildMemory32 -benchtime 3x ./agent/
func BenchmarkChildMemory32(b *testing.B) {
	held := text("done")
	held.DelayMs = 1500
	w := newWire(b, "openai", core.Options{MaxParallelTasks: 32}, held)
	w.sub.Close()
	tasks := make([]agent.TaskSpec, 32)
	for i := range tasks {
		tasks[i] = explore("look")
	}
	ctx := context.Background()
	if _, err := w.s.Task(ctx, explore("warm up")); err != nil {
		b.Fatal(err)
	}
	inUse := func() float64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return float64(m.HeapInuse + m.StackInuse)
	}
	var live, body, retained float64
	sent := 1
	b.ResetTimer()
	for range b.N {
		idle := inUse()
		done := make(chan error, 1)
		go func() {
			res, err := w.s.Tasks(ctx, tasks, core.TaskOptions{})
			if err == nil && res.ExitCode != 0 {
				err = fmt.Errorf("%s", res.Output)
			}
			done <- err
		}()
		sent += 32
		body += float64(waitRequests(w, sent))
		live += (inUse() - idle) / 32
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		retained += (inUse() - idle) / 32
	}
	n := float64(b.N)
	b.ReportMetric(live/n, "live-B/child")
	b.ReportMetric(body/n, "body-B/child")
	b.ReportMetric((live-body)/n, "beyond-B/child")
	b.ReportMetric(retained/n, "retained-B/child")
}

// waitRequests waits until the server has n requests and returns the size
// of the last one's body (the log, with every body, is dropped before the
// caller measures).
func waitRequests(w *wire, n int) int {
	var l llmtest.Log
	for l = w.log(0); len(l.Requests) < n; l = w.log(0) {
		time.Sleep(10 * time.Millisecond)
	}
	return len(l.Requests[n-1].Body)
}
