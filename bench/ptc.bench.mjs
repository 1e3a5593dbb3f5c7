// PTC engines side by side: the first program of a host (cold: the QuickJS
// wasm compiled, a worker booted), then back-to-back programs (warm: a
// fresh worker and QuickJS runtime each, the compiled module reused, one
// trivial run() to its end), and the overhead of one awaited ctx call,
// for the native engine(s) (Go benchmarks of every ptc/<engine> package
// that has one), Node's engine (QuickJS in a worker thread) and
// Chromium's (QuickJS in a Web Worker), each with a host that answers ctx
// calls at once; then a compute-heavy script (QuickJS is an interpreter);
// then end to end through the wasm package in Node (session.program making
// N ctx.tool('read') calls vs N direct session.tool('read') calls); then
// what the engine adds to a browser bundle.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { createRequire } from 'node:module';
import { nodePtcHostKinds } from '../npm/src/ptc-node.mjs';
import { fileURLToPath } from 'node:url';
import { CALLS, TRIVIAL, median, engineFigures } from './ptc-figures.mjs';

const fmt = (ms) => (ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`);

const rows = [];

// Native engines: every ptc/<engine> package with a BenchmarkStart.
for (const d of readdirSync('ptc', { withFileTypes: true })) {
  if (!d.isDirectory() || !existsSync(`ptc/${d.name}/bench_test.go`)) continue;
  try {
    const out = execFileSync('go', ['test', '-run', '^$', '-bench', '.', '-benchtime', '30x', `./ptc/${d.name}/`], { encoding: 'utf8' });
    const start = /BenchmarkStart\S*\s+\d+\s+(\d+) ns\/op/.exec(out);
    const call = /([\d.]+) µs\/call/.exec(out);
    rows.push([`${d.name} (native Go)`, null, start ? Number(start[1]) / 1e6 : null, call ? Number(call[1]) / 1000 : null, null]);
  } catch (e) {
    console.log(`(ptc/${d.name} benchmark failed: ${e.message.split('\n')[0]})`);
  }
}

// Node: QuickJS in a worker thread.
{
  const f = await engineFigures(nodePtcHostKinds());
  rows.push(['Node: QuickJS in a worker thread', f.cold, f.start, f.call, f.compute]);
}

// Chromium: QuickJS in a Web Worker (skipped when there is no browser).
try {
  const { launch, server, freshProfile, removeProfile } = await import('../web/test/browser.mjs');
  const profile = freshProfile();
  const srv = await server([['/bench/', fileURLToPath(new URL('.', import.meta.url))]]);
  const ctx = await launch(profile);
  try {
    const page = await ctx.newPage();
    await page.goto(`${srv.url}/test/blank.html`);
    const f = await page.evaluate(async () => {
      const { browserPtcHostKinds } = await import('/npm/src/ptc-browser.mjs');
      const { engineFigures } = await import('/bench/ptc-figures.mjs');
      return engineFigures(browserPtcHostKinds());
    });
    rows.push(['Chromium: QuickJS in a Web Worker', f.cold, f.start, f.call, f.compute]);
  } finally {
    await ctx.close();
    await srv.close();
    removeProfile(profile);
  }
} catch (e) {
  console.log(`(Chromium skipped: ${e.message})`);
}

const cell = (v) => (v === null || v === undefined ? '—' : fmt(v));
console.log(`\nPTC engine cost (median; cold = the first program of a host; warm start = ptc.start to the end of a trivial run, back to back; ctx call = first ctx call to the end of a run of ${CALLS} awaited ctx.tool calls, / ${CALLS}; compute = a 1e6-iteration arithmetic loop filling a 10,000-key object; the host answers at once)`);
console.log('| engine | cold start | warm start | per ctx call | compute |');
console.log('|---|---:|---:|---:|---:|');
for (const [n, c, s, k, x] of rows) console.log(`| ${n} | ${cell(c)} | ${cell(s)} | ${cell(k)} | ${cell(x)} |`);

// End to end in Node through the wasm package: what a program's ctx call
// costs beyond a direct host call of the same tool. The script times its
// own calls, so the program's start does not leak into the figure.
{
  const { createSession } = await import('../npm/src/entry-node.mjs');
  const N = 20; // the default maxToolCalls: the figure does not depend on Go sending the limit
  const s = await createSession({ workspace: { kind: 'memory', files: { 'a.txt': 'alpha\n' } } });
  await s.program({ source: TRIVIAL });
  const direct = [], viaProgram = [], trivial = [];
  for (let k = 0; k < 9; k++) {
    let t0 = performance.now();
    for (let i = 0; i < N; i++) await s.tool('read', { file_path: 'a.txt' });
    direct.push((performance.now() - t0) / N);
    t0 = performance.now();
    let r = await s.program({ source: TRIVIAL });
    trivial.push(performance.now() - t0);
    if (r.exitCode !== 0) throw new Error(r.output);
    r = await s.program({ source: `async function run(ctx) { const t = Date.now(); for (let i = 0; i < ${N}; i++) await ctx.tool('read', { file_path: 'a.txt' }); return Date.now() - t; }` });
    if (r.exitCode !== 0) throw new Error(r.output);
    viaProgram.push(JSON.parse(r.metadataJson).script_result / N);
  }
  await s.close();
  const d = median(direct), t = median(trivial), p = median(viaProgram);
  console.log(`\nEnd to end, Node, packaged wasm (median of 9; ${N} sequential read calls of a 6-byte file, timed inside the script)`);
  console.log('| what | time |');
  console.log('|---|---:|');
  console.log(`| session.program, trivial script (worker + QuickJS start, Go round trips) | ${fmt(t)} |`);
  console.log(`| one ctx.tool('read') inside a program | ${fmt(p)} |`);
  console.log(`| one direct session.tool('read') | ${fmt(d)} |`);
  console.log(`| ratio ctx call / direct call | ${(p / d).toFixed(2)}x |`);
}

// What the engine adds to a browser bundle: the files its worker loads
// (unminified as shipped; a bundler minifies the package's own and keeps
// the rest), and the QuickJS wasm.
{
  const require = createRequire(import.meta.url);
  const variant = require.resolve('@jitl/quickjs-ng-wasmfile-release-sync/package.json').replace(/package\.json$/, 'dist/');
  const core = require.resolve('quickjs-emscripten-core').replace(/index\.js$/, '');
  const ffiTypes = require.resolve('@jitl/quickjs-ffi-types/package.json').replace(/package\.json$/, 'dist/');
  const js = ['npm/src/ptc-browser-worker.mjs', 'npm/src/ptc-quickjs.mjs', 'npm/src/ptc-prelude.mjs', 'npm/src/ptc-host.mjs',
    `${variant}emscripten-module.browser.mjs`, `${variant}ffi.mjs`, `${ffiTypes}index.mjs`,
    ...readdirSync(core).filter((f) => /^(index|chunk-.*|module-[^a].*)\.mjs$/.test(f)).map((f) => core + f)];
  const size = (files) => files.reduce((a, f) => a + statSync(f).size, 0);
  const gz = (files) => files.reduce((a, f) => a + gzipSync(readFileSync(f)).length, 0);
  const wasm = [`${variant}emscripten-module.wasm`];
  const kb = (n) => `${(n / 1024).toFixed(0)} KiB`;
  console.log('\nWhat the program engine adds to a browser bundle (loaded by its worker only, on the first program)');
  console.log('| part | raw | gzip |');
  console.log('|---|---:|---:|');
  console.log(`| QuickJS wasm (quickjs-ng, release-sync) | ${kb(size(wasm))} | ${kb(gz(wasm))} |`);
  console.log(`| JS: worker, engine, quickjs-emscripten-core, FFI, Emscripten glue | ${kb(size(js))} | ${kb(gz(js))} |`);
}
