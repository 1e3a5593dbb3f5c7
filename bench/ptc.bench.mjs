// PTC engines side by side: start time (a fresh sandbox, one trivial
// run() to its end) and the overhead of one awaited ctx call, for the
// native engine (goja, Go benchmark), Node's engine (worker thread + vm
// context) and Chromium's (locked-down Web Worker), each with a host that
// answers ctx calls at once; then end to end through the wasm package in
// Node (session.program making N ctx.tool('read') calls vs N direct
// session.tool('read') calls). FIELD-NOTES.md's quickjs-emscripten figures
// (new context 0.46-0.61 ms, guest->host call 5.5-6.1 us) are the peer.
import { execFileSync } from 'node:child_process';
import { nodePtcHostKinds } from '../npm/src/ptc-node.mjs';

const CALLS = 1000;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (ms) => (ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`);

// drive runs one script on a kinds table as Go's HostEngine does, answering
// every ctx call at once; returns ms.
// Returns {total, calls}: calls is the time from the first ctx call to the
// end, so worker boot does not leak into the per-call figure.
async function drive(kinds, source) {
  const t0 = performance.now();
  const { run } = await kinds['ptc.start']({ name: 'bench.js', source, inputs: {}, methods: ['tool'], tools: ['read'], timeoutMs: 60000 });
  let first = 0;
  for (;;) {
    const p = await kinds['ptc.poll']({ run });
    if (!first) first = performance.now();
    for (const c of p.calls) kinds['ptc.reply']({ run, id: c.id, ok: true, value: '{"output":"x","exitCode":0}' });
    if (p.done) {
      if (!p.done.ok) throw new Error(p.done.error.message);
      break;
    }
  }
  const end = performance.now();
  await kinds['ptc.stop']({ run });
  return { total: end - t0, calls: end - first };
}
const TRIVIAL = 'async function run(ctx, inputs) { return 1 }';
const LOOP = `async function run(ctx) { for (let i = 0; i < ${CALLS}; i++) await ctx.tool('read', { i }); }`;

async function engineFigures(kinds) {
  await drive(kinds, TRIVIAL); // warm
  const starts = [];
  for (let i = 0; i < 15; i++) starts.push((await drive(kinds, TRIVIAL)).total);
  const loops = [];
  for (let i = 0; i < 5; i++) loops.push((await drive(kinds, LOOP)).calls / CALLS);
  return { start: median(starts), call: median(loops) };
}

const rows = [];

// goja (native Go).
{
  const out = execFileSync('go', ['test', '-run', '^$', '-bench', '.', '-benchtime', '30x', './ptc/gojaengine/'], { encoding: 'utf8' });
  const start = Number(/BenchmarkStart\S*\s+\d+\s+(\d+) ns\/op/.exec(out)[1]) / 1e6;
  const call = Number(/([\d.]+) µs\/call/.exec(out)[1]) / 1000;
  rows.push(['goja (native Go)', start, call]);
}

// Node worker thread + vm context.
{
  const f = await engineFigures(nodePtcHostKinds());
  rows.push(['Node worker + vm context', f.start, f.call]);
}

// Chromium Web Worker (skipped when there is no browser).
try {
  const { launch, server, freshProfile, removeProfile } = await import('../web/test/browser.mjs');
  const profile = freshProfile();
  const srv = await server();
  const ctx = await launch(profile);
  try {
    const page = await ctx.newPage();
    await page.goto(`${srv.url}/test/blank.html`);
    const f = await page.evaluate(async ({ CALLS, TRIVIAL, LOOP }) => {
      const { browserPtcHostKinds } = await import('/npm/src/ptc-browser.mjs');
      const kinds = browserPtcHostKinds();
      const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
      async function drive(source) {
        const t0 = performance.now();
        const { run } = await kinds['ptc.start']({ name: 'bench.js', source, inputs: {}, methods: ['tool'], tools: ['read'], timeoutMs: 60000 });
        let first = 0;
        for (;;) {
          const p = await kinds['ptc.poll']({ run });
          if (!first) first = performance.now();
          for (const c of p.calls) kinds['ptc.reply']({ run, id: c.id, ok: true, value: '{"output":"x","exitCode":0}' });
          if (p.done) { if (!p.done.ok) throw new Error(p.done.error.message); break; }
        }
        const end = performance.now();
        await kinds['ptc.stop']({ run });
        return { total: end - t0, calls: end - first };
      }
      await drive(TRIVIAL);
      const starts = [];
      for (let i = 0; i < 15; i++) starts.push((await drive(TRIVIAL)).total);
      const loops = [];
      for (let i = 0; i < 5; i++) loops.push((await drive(LOOP)).calls / CALLS);
      return { start: median(starts), call: median(loops) };
    }, { CALLS, TRIVIAL, LOOP });
    rows.push(['Chromium Web Worker (locked down)', f.start, f.call]);
  } finally {
    await ctx.close();
    await srv.close();
    removeProfile(profile);
  }
} catch (e) {
  console.log(`(Chromium skipped: ${e.message})`);
}

console.log(`\nPTC engine cost (median; start = ptc.start to the end of a trivial run; ctx call = first ctx call to the end of a run of ${CALLS} awaited ctx.tool calls, / ${CALLS}; the host answers at once)`);
console.log('| engine | start (fresh sandbox + trivial run) | per ctx call |');
console.log('|---|---:|---:|');
for (const [n, s, c] of rows) console.log(`| ${n} | ${fmt(s)} | ${fmt(c)} |`);
console.log('| quickjs-emscripten 0.32 (FIELD-NOTES.md) | 0.46-0.61 ms new context (+10-14 ms module load) | 5.5-6.1 µs guest->host |');

// End to end in Node through the wasm package: what a program's ctx call
// costs beyond a direct host call of the same tool.
{
  const { createSession } = await import('../npm/src/entry-node.mjs');
  const N = 200;
  const s = await createSession({ workspace: { kind: 'memory', files: { 'a.txt': 'alpha\n' } } });
  const direct = [], viaProgram = [], trivial = [];
  for (let k = 0; k < 5; k++) {
    let t0 = performance.now();
    for (let i = 0; i < N; i++) await s.tool('read', { file_path: 'a.txt' });
    direct.push(performance.now() - t0);
    t0 = performance.now();
    let r = await s.program({ source: TRIVIAL });
    trivial.push(performance.now() - t0);
    if (r.exitCode !== 0) throw new Error(r.output);
    t0 = performance.now();
    r = await s.program({ source: `async function run(ctx) { for (let i = 0; i < ${N}; i++) await ctx.tool('read', { file_path: 'a.txt' }); }`, limits: { maxToolCalls: N } });
    viaProgram.push(performance.now() - t0);
    if (r.exitCode !== 0) throw new Error(r.output);
  }
  await s.close();
  const d = median(direct) / N, t = median(trivial), p = (median(viaProgram) - t) / N;
  console.log(`\nEnd to end, Node, packaged wasm (median of 5; ${N} sequential read calls of a 6-byte file)`);
  console.log('| what | time |');
  console.log('|---|---:|');
  console.log(`| session.program, trivial script (worker start + Go round trips) | ${fmt(t)} |`);
  console.log(`| one ctx.tool('read') inside a program | ${fmt(p)} |`);
  console.log(`| one direct session.tool('read') | ${fmt(d)} |`);
  console.log(`| ratio ctx call / direct call | ${(p / d).toFixed(2)}x |`);
}
