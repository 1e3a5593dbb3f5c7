// The incremental partial-JSON parser (llm.PartialJSON): objects of 16, 64
// and 256 KiB streamed in 8-byte fragments, µs per KiB natively and as
// js/wasm in this Node. Flat across sizes means the total work is linear
// (a re-parse of the buffer per fragment would grow 16x from 16 to 256 KiB).
//   node bench/partialjson.bench.mjs         (make bench runs it)
//   COUNT=5 node bench/partialjson.bench.mjs
import { spawnSync } from 'node:child_process';

const count = process.env.COUNT || '4';
const goroot = spawnSync('go', ['env', 'GOROOT'], { encoding: 'utf8' }).stdout.trim();
const args = ['test', '-run', '^$', '-bench', '^BenchmarkPartialJSON$', '-benchmem', '-benchtime', '40x', '-count', count, '-cpu', '1', './llm/'];

// Each size keeps its fastest run (the machines are shared and noisy);
// allocations are exact and the same in every run.
function runGo(label, env) {
  const r = spawnSync('go', args, { encoding: 'utf8', env: { ...process.env, ...env }, maxBuffer: 16 << 20 });
  if (r.status !== 0) {
    console.log(`${label} failed:\n${r.stdout}\n${r.stderr}`);
    process.exit(1);
  }
  const out = {};
  for (const line of r.stdout.split('\n')) {
    const m = /^BenchmarkPartialJSON\/(\d+)KiB\S*\s+\d+\s+\d+ ns\/op.*?([\d.]+) µs\/KiB\s+(\d+) B\/op\s+(\d+) allocs\/op/.exec(line);
    if (!m) continue;
    const kib = Number(m[1]);
    const prev = out[kib];
    const us = Number(m[2]);
    if (!prev || us < prev.us) out[kib] = { us, bytesPerByte: Number(m[3]) / (kib << 10), allocsPerKiB: Number(m[4]) / kib };
  }
  return out;
}

const native = runGo('native', {});
const wasm = runGo('js/wasm', { GOOS: 'js', GOARCH: 'wasm', PATH: `${goroot}/lib/wasm:${process.env.PATH}` });
console.log(`${'object'.padEnd(8)} ${'native µs/KiB'.padStart(14)} ${`wasm (Node ${process.version}) µs/KiB`.padStart(28)} ${'B alloc/B'.padStart(10)} ${'allocs/KiB'.padStart(11)}`);
for (const kib of Object.keys(native).map(Number).sort((a, b) => a - b)) {
  const n = native[kib], w = wasm[kib];
  console.log(`${`${kib} KiB`.padEnd(8)} ${n.us.toFixed(1).padStart(14)} ${(w ? w.us.toFixed(1) : '-').padStart(28)} ${n.bytesPerByte.toFixed(2).padStart(10)} ${n.allocsPerKiB.toFixed(0).padStart(11)}`);
}
const sizes = Object.keys(native).map(Number).sort((a, b) => a - b);
const growth = native[sizes.at(-1)].allocsPerKiB / native[sizes[0]].allocsPerKiB;
console.log(`\nallocations per KiB, ${sizes.at(-1)} KiB vs ${sizes[0]} KiB: ${growth.toFixed(2)}x (linear work: ~1x)`);
