// grep (content and count) and glob over the whole GOROOT/src loaded into a
// memory workspace: the Go benchmark tools.BenchmarkTools, run natively and
// as js/wasm in this Node, side by side in one run, with the ratios.
//   node bench/tools.bench.mjs            (make bench runs it)
//   BENCHTIME=1s COUNT=5 ROUNDS=3 node bench/tools.bench.mjs
import { spawnSync } from 'node:child_process';

// Time-based, so each benchmark runs long enough for V8 to finish tiering
// the wasm up (Liftoff, then TurboFan in the background): a 1 ms glob run
// 3 times measures mostly the baseline compiler (RATIONALE.md, "Why does
// the tools benchmark run each case for 400 ms?").
const benchtime = process.env.BENCHTIME || '400ms';
// Each benchmark runs COUNT times in one process; the fastest is kept (the
// machines are shared and noisy; GOROOT/src is loaded once per process).
const count = process.env.COUNT || '3';
const goroot = spawnSync('go', ['env', 'GOROOT'], { encoding: 'utf8' }).stdout.trim();
const base = ['test', '-run', '^$', '-bench', '^BenchmarkTools$', '-benchtime', benchtime, '-count', count];

function runGo(label, extraArgs, env) {
  const t0 = Date.now();
  const r = spawnSync('go', [...base, ...extraArgs, './tools/'], { encoding: 'utf8', env: { ...process.env, ...env }, maxBuffer: 64 << 20 });
  if (r.status !== 0) {
    console.log(`${label} failed:\n${r.stdout}\n${r.stderr}`);
    process.exit(1);
  }
  const out = {};
  for (const line of r.stdout.split('\n')) {
    const m = /^BenchmarkTools\/(\S+?)(?:-\d+)?\s+\d+\s+([\d.]+) ns\/op/.exec(line);
    if (m) out[m[1]] = Math.min(out[m[1]] ?? Infinity, Number(m[2]));
  }
  console.log(`${label}: ${Object.keys(out).length} benchmarks in ${((Date.now() - t0) / 1000).toFixed(1)} s (including build and loading GOROOT/src)`);
  return out;
}

// One CPU for both: js/wasm runs Go on a single thread, so the native
// figure is measured with GOMAXPROCS=1 too; the 2-CPU native figure is shown
// for reference.
// Native and wasm alternate for ROUNDS rounds so both see the same spells of
// load from other jobs on the machine; each keeps its fastest figure.
const rounds = Number(process.env.ROUNDS || 2);
const minInto = (acc, r) => { for (const [k, v] of Object.entries(r)) acc[k] = Math.min(acc[k] ?? Infinity, v); return acc; };
const native1 = {}, wasm = {};
for (let i = 1; i <= rounds; i++) {
  minInto(native1, runGo(`round ${i}: native -cpu 1`, ['-cpu', '1'], {}));
  minInto(wasm, runGo(`round ${i}: js/wasm (Node ${process.version})`, [], {
    GOOS: 'js', GOARCH: 'wasm', PATH: `${goroot}/lib/wasm:${process.env.PATH}`,
  }));
}
const native2 = runGo('native -cpu 2', ['-cpu', '2'], {});

const ms = (ns) => (ns / 1e6).toFixed(ns < 1e7 ? 3 : 1).padStart(9);
console.log(`\n${'benchmark'.padEnd(28)} ${'native 1cpu'.padStart(11)} ${'native 2cpu'.padStart(11)} ${'wasm'.padStart(9)}  wasm/native(1cpu)`);
let logSum = 0, n = 0;
for (const k of Object.keys(native1)) {
  if (!(k in wasm)) continue;
  const ratio = wasm[k] / native1[k];
  logSum += Math.log(ratio); n++;
  console.log(`${k.padEnd(28)} ${ms(native1[k])}ms ${ms(native2[k] ?? NaN)}ms ${ms(wasm[k])}ms  ${ratio.toFixed(2)}x`);
}
const geo = Math.exp(logSum / n);
console.log(`\ngeometric mean wasm/native(1cpu): ${geo.toFixed(2)}x  (goal: within 2.5x: ${geo <= 2.5 ? 'met' : 'NOT met'})`);
