// LLM stream parsing (issue 13): SSE framing alone and framing plus each
// provider's JSON decoding, natively and under js/wasm in Node (MB/s of
// stream bytes; goal >= 50 MB/s framing in wasm). Runs the Go benchmarks
// BenchmarkSSE and BenchmarkDecode of ./llm.
//   node bench/llm.bench.mjs
import { execFileSync } from 'node:child_process';

const goroot = execFileSync('go', ['env', 'GOROOT'], { encoding: 'utf8' }).trim();
function run(env) {
  const out = execFileSync('go', ['test', '-run', '^$', '-bench', 'SSE|Decode', '-count', '3', './llm/'], {
    encoding: 'utf8', env: { ...process.env, PATH: `${goroot}/lib/wasm:${process.env.PATH}`, ...env },
  });
  const best = new Map();
  for (const m of out.matchAll(/^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+[\d.]+ ns\/op\s+([\d.]+) MB\/s/gm)) {
    best.set(m[1], Math.max(best.get(m[1]) ?? 0, Number(m[2])));
  }
  return best;
}
const native = run({});
const wasm = run({ GOOS: 'js', GOARCH: 'wasm' });
console.log('| benchmark | native MB/s | js/wasm (Node) MB/s |');
console.log('|---|---:|---:|');
for (const [name, v] of native) console.log(`| ${name} | ${v.toFixed(0)} | ${(wasm.get(name) ?? 0).toFixed(1)} |`);
console.log('(best of 3 runs; SSE = framing only, Decode = framing + the provider\'s JSON into chunks)');
