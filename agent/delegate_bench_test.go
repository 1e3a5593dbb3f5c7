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
	_, fan := fanOut32(b)
	b.ResetTimer()
	for range b.N {
		fan()
	}
}

// fanOut32 is a session that fans out to 32 explore children, each
// answering one text turn (maxParallelTasks 32), and one such fan-out.
func fanOut32(b *testing.B) (*wire, func()) {
	w := newWire(b, "openai", core.Options{MaxParallelTasks: 32}, text("done"))
	w.sub.Close()
	tasks := make([]agent.TaskSpec, 32)
	for i := range tasks {
		tasks[i] = explore("look")
	}
	return w, func() {
		res, err := w.s.Tasks(context.Background(), tasks, core.TaskOptions{})
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
		replay32(b, ctx, w.loaded.BaseURL, body)
	}
}

// BenchmarkFanOut32Steady measures the same two things in one session,
// the way they compare fairly under js/wasm: a warm-up of 100 of each (V8
// compiles the Go wasm's hot code on background threads for seconds after
// start, and in a fresh test process that work lands in whichever runs
// first), then b.N rounds, each a fan-out and a replay, alternating which
// goes first. overhead-ms is delegation's own cost per fan-out: the mean
// fan-out less the mean replay (the goal: ≤ 20 ms in wasm).
//
//	go test -run '^$' -bench FanOut32Steady -benchtime 100x ./agent/
func BenchmarkFanOut32Steady(b *testing.B) {
	w, once := fanOut32(b)
	ctx := context.Background()
	fan := func() time.Duration {
		t0 := time.Now()
		once()
		return time.Since(t0)
	}
	fan()
	body := w.log(0).Requests[0].Body
	replay := func() time.Duration {
		t0 := time.Now()
		replay32(b, ctx, w.loaded.BaseURL, body)
		return time.Since(t0)
	}
	for range 100 {
		fan()
		replay()
	}
	b.ResetTimer()
	var f, r time.Duration
	for i := range b.N {
		if i%2 == 0 {
			f += fan()
			r += replay()
		} else {
			r += replay()
			f += fan()
		}
	}
	n := float64(b.N) * float64(time.Millisecond)
	b.ReportMetric(float64(f)/n, "fanout-ms")
	b.ReportMetric(float64(r)/n, "replay-ms")
	b.ReportMetric(float64(f-r)/n, "overhead-ms")
}

// replay32 sends body to the chat completions URL 32 times at once through
// the HTTP seam alone, each answer read to its end.
func replay32(b *testing.B, ctx context.Context, baseURL string, body []byte) {
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := fetch.Do(ctx, &fetch.Request{Method: "POST", URL: baseURL + "/chat/completions",
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
