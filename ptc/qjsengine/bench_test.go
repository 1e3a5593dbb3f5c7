//go:build !js

package qjsengine_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/a3s-lab/code-wasm/ptc"
	"github.com/a3s-lab/code-wasm/ptc/qjsengine"
)

// echo answers every ctx call at once: it isolates the engine's own cost
// (bench/ptc.bench.mjs puts these beside the Node and browser engines).
type echo struct{}

func (echo) Call(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return json.RawMessage(`{"output":"x","exitCode":0}`), nil
}

func program(src string) *ptc.Program {
	return &ptc.Program{Name: "bench.js", Source: src, Inputs: json.RawMessage(`{}`), Methods: []string{"tool"}, Tools: []string{"read"}, MaxToolCalls: 1000}
}

// BenchmarkStart: a fresh module instance and QuickJS runtime, the
// prelude, the script and one run() to the end (the module is compiled
// once per process, before the timer).
func BenchmarkStart(b *testing.B) {
	e, p := qjsengine.New(), program("async function run(ctx, inputs) { return 1 }")
	if _, err := e.Run(context.Background(), p, echo{}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := e.Run(context.Background(), p, echo{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCtxCall: one awaited ctx.tool call (1000 per program).
func BenchmarkCtxCall(b *testing.B) {
	e, p := qjsengine.New(), program("async function run(ctx) { for (let i = 0; i < 1000; i++) await ctx.tool('read', {i}); }")
	for b.Loop() {
		if _, err := e.Run(context.Background(), p, echo{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000)/1000, "µs/call")
}

// BenchmarkLoop: 10 million iterations of a plain loop, the cost of the
// interrupt checks included.
func BenchmarkLoop(b *testing.B) {
	e, p := qjsengine.New(), program("async function run() { let s = 0; for (let i = 0; i < 1e7; i++) s += i; return s }")
	for b.Loop() {
		if _, err := e.Run(context.Background(), p, echo{}); err != nil {
			b.Fatal(err)
		}
	}
}
