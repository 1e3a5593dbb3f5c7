package gojaengine_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/a3s-lab/code-wasm/ptc"
	"github.com/a3s-lab/code-wasm/ptc/gojaengine"
)

// echo answers every ctx call at once: it isolates the engine's own cost
// (bench/ptc.bench.mjs puts these beside the Node and browser engines).
type echo struct{}

func (echo) Call(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return json.RawMessage(`{"output":"x","exitCode":0}`), nil
}

func program(src string) *ptc.Program {
	return &ptc.Program{Name: "bench.js", Source: src, Inputs: json.RawMessage(`{}`), Methods: []string{"tool"}, Tools: []string{"read"}}
}

// BenchmarkStart: a fresh runtime, prelude, script and one run() to the end.
func BenchmarkStart(b *testing.B) {
	e, p := gojaengine.New(), program("async function run(ctx, inputs) { return 1 }")
	for b.Loop() {
		if _, err := e.Run(context.Background(), p, echo{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCtxCall: one awaited ctx.tool call (1000 per program).
func BenchmarkCtxCall(b *testing.B) {
	e, p := gojaengine.New(), program("async function run(ctx) { for (let i = 0; i < 1000; i++) await ctx.tool('read', {i}); }")
	for b.Loop() {
		if _, err := e.Run(context.Background(), p, echo{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000)/1000, "µs/call")
}
