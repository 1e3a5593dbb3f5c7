//go:build unix

package tools

import (
	"context"
	"net/http"
	"syscall"
	"testing"
	"time"
)

// BenchmarkWebFetch300KB: web_fetch of a 300 KB HTML page to Markdown from
// a local server, natively: request, read, convert, first window (issue 15
// goal ≤ 30 ms; bench/webfetch.bench.mjs runs it beside the wasm figure).
// cpu-ms/op is the process's CPU time (user+system, the local server's
// included) per op: on a shared machine wall time mostly measures waiting.
func BenchmarkWebFetch300KB(b *testing.B) {
	page := bigPage(300 << 10)
	s := newWebServer(b, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("content-type", "text/html; charset=utf-8")
		w.Write([]byte(page))
	})
	w, err := NewWebFetch([]string{s.URL})
	if err != nil {
		b.Fatal(err)
	}
	call := callOf("web_fetch", []byte(`{"url":"`+s.URL+`/page"}`))
	b.SetBytes(int64(len(page)))
	cpu0 := cpuTime()
	for b.Loop() {
		r, err := w.Execute(context.Background(), call)
		if err != nil || r.ExitCode != 0 || r.Metadata["bytes"] != len(page) {
			b.Fatalf("%v %+v", err, r)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

func cpuTime() time.Duration {
	var u syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &u)
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
