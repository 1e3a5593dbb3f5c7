// Delegation (issue 14): fan-out overhead — 32 explore children each
// answering one text turn against the scripted server on 127.0.0.1, less
// the same 32 requests sent concurrently through the HTTP seam alone
// (goal <= 20 ms per fan-out in wasm), natively and under js/wasm in Node;
// and memory per child under js/wasm (goal <= 200 KB beyond the child's
// transcript). Runs the Go benchmarks BenchmarkFanOut32Steady (warmed,
// alternating; see its comment) and BenchmarkChildMemory32 of ./agent; a
// wasm instance cannot listen, so the llmtestserver binary serves the
// scripts for the js/wasm run, as make test-wasm-llm does.
//   node bench/delegation.bench.mjs
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const goroot = execFileSync('go', ['env', 'GOROOT'], { encoding: 'utf8' }).trim();
const server = join(mkdtempSync(join(tmpdir(), 'llmq-')), 'llmtestserver');
execFileSync('go', ['build', '-o', server, './llm/llmtest/cmd/llmtestserver']);
const env = { ...process.env, PATH: `${goroot}/lib/wasm:${process.env.PATH}` };
const args = (bench, times) => ['test', '-run', '^$', '-bench', bench, '-benchtime', times, './agent/'];
const both = (bench, times) => [
  execFileSync('go', args(bench, times), { encoding: 'utf8', env }),
  execFileSync(server, ['--', 'env', 'GOOS=js', 'GOARCH=wasm', 'go', ...args(bench, times)], { encoding: 'utf8', env }),
];
const [fanNative, fanWasm] = both('FanOut32Steady', '100x');
const [memNative, memWasm] = both('ChildMemory32', '3x');
const native = fanNative + memNative;
const wasm = fanWasm + memWasm;
const metric = (out, bench, unit) => {
  const line = out.split('\n').find((l) => l.startsWith(`Benchmark${bench}`));
  const m = line?.match(new RegExp(`([\\d.]+) ${unit}`));
  return m ? Number(m[1]) : NaN;
};
console.log('| measure | native | js/wasm (Node) | goal |');
console.log('|---|---:|---:|---|');
for (const [label, unit] of [['fan-out of 32, wall ms', 'fanout-ms'], ['the same 32 requests replayed, wall ms', 'replay-ms']]) {
  console.log(`| ${label} | ${metric(native, 'FanOut32Steady', unit).toFixed(2)} | ${metric(wasm, 'FanOut32Steady', unit).toFixed(2)} | |`);
}
const over = metric(wasm, 'FanOut32Steady', 'overhead-ms');
console.log(`| delegation's own cost per fan-out, ms | ${metric(native, 'FanOut32Steady', 'overhead-ms').toFixed(2)} | ${over.toFixed(2)} | <= 20 ms in wasm: ${over <= 20 ? 'met' : 'MISSED'} |`);
const beyond = metric(wasm, 'ChildMemory32', 'beyond-B/child');
console.log(`| memory per child beyond its transcript, KB | ${(metric(native, 'ChildMemory32', 'beyond-B/child') / 1000).toFixed(1)} | ${(beyond / 1000).toFixed(1)} | <= 200 KB in wasm: ${beyond <= 200000 ? 'met' : 'MISSED'} |`);
console.log('(FanOut32Steady: 100 warm-up rounds, then 100 rounds of a fan-out and a replay, alternating which goes first; ChildMemory32: 3x)');
