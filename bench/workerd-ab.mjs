// Two trees' Worker apps side by side on real workerd, their requests
// alternating: the p50 of `read {}` (Worker → DO → Go), of a trivial
// program or of a session create, per round, after a warm-up (V8 tiers the Go wasm up over the
// first thousands of calls). Each tree's package is packed, installed and
// bundled as an app would (npm/test/workerd/rig.mjs of that tree) and
// served by its own `workerd serve`. Medians of the rounds' p50s; wall
// time, so compare only sides measured in the same run.
//   BASE=/tmp/old node bench/workerd-ab.mjs          (both trees built)
//   BASE=/tmp/old WARM=2000 ROUNDS=15 N=60 ROUTE=program node bench/workerd-ab.mjs
//   BASE=/tmp/old WARM=200 ROUNDS=10 N=30 ROUTE=create node bench/workerd-ab.mjs
//   BASE=/tmp/old PAUSE=20 WARM=1000 ROUNDS=8 N=30 ROUTE=program node bench/workerd-ab.mjs
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = join(dirname(fileURLToPath(import.meta.url)), '..');
const trees = [process.env.BASE, here].filter(Boolean);
const N = Number(process.env.N || 60), ROUNDS = Number(process.env.ROUNDS || 15), WARM = Number(process.env.WARM || 2000);
const ROUTE = process.env.ROUTE || 'tool';
// PAUSE: ms of idle before each timed request (0: back to back), as an
// agent's call comes after a model turn; the pause is not timed.
const PAUSE = Number(process.env.PAUSE || 0);
const routes = {
  tool: ['tools/read', {}],
  program: ['program', { source: 'async function run() { return 1 }' }],
  create: [null, {}], // POST /v1/sessions {}: a new session each time
  // 100 ctx crossings (workerd.bench.mjs's ctx.tool('') row): less the
  // program route, / 100, one crossing
  crossing: ['program', { source: "async function run(ctx) { let n = 0; for (let i = 0; i < 100; i++) { try { await ctx.tool('') } catch { n++ } } return n }", limits: { maxToolCalls: 100 } }],
};
if (!routes[ROUTE]) throw new Error(`ROUTE must be tool, program, create or crossing, got ${ROUTE}`);

const sides = [];
try {
  for (const root of trees) {
    const rig = await import(pathToFileURL(join(root, 'npm/test/workerd/rig.mjs')).href);
    const scratch = mkdtempSync(join(tmpdir(), 'code-wasm-workerd-ab-'));
    const project = rig.installApp(scratch);
    writeFileSync(join(project, '.dev.vars'), 'ALLOW_UNAUTHENTICATED=true\n');
    rig.bundleApp({ project, state: join(project, 'state'), env: rig.wranglerEnv(scratch), vars: { ALLOW_UNAUTHENTICATED: 'true' } });
    const dev = await rig.startWorkerd({ project, ready: async (b) => (await fetch(`${b}/v1/stats`)).ok });
    sides.push({ root, scratch, dev, p50s: [], means: [] });
  }
  const call = async (side, path, body) => {
    const res = await fetch(side.dev.base + path, { method: 'POST', body: JSON.stringify(body) });
    const text = await res.text();
    if (!res.ok) throw new Error(`${path}: ${res.status} ${text}`);
    return JSON.parse(text);
  };
  const [suffix, body] = routes[ROUTE];
  for (const s of sides) {
    s.path = suffix === null ? '/v1/sessions' : `/v1/sessions/${(await call(s, '/v1/sessions', {})).id}/${suffix}`;
    for (let i = 0; i < WARM; i++) await call(s, s.path, body);
  }
  for (let r = 0; r < ROUNDS; r++) {
    for (const s of r % 2 ? [...sides].reverse() : sides) {
      const lat = [];
      for (let i = 0; i < N; i++) {
        if (PAUSE) await new Promise((r) => setTimeout(r, PAUSE));
        const t0 = performance.now();
        await call(s, s.path, body);
        lat.push(performance.now() - t0);
      }
      s.means.push(lat.reduce((a, b) => a + b, 0) / N);
      lat.sort((a, b) => a - b);
      s.p50s.push(lat[N >> 1]);
    }
  }
  const med = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
  console.log(`${ROUTE} route, ${WARM} warm-up requests each, ${ROUNDS} rounds x ${N} alternating${PAUSE ? `, each after a ${PAUSE} ms pause` : ''}, load ${loadavg()[0].toFixed(1)}`);
  for (const s of sides) console.log(`| ${s.root} | median p50 ${med(s.p50s).toFixed(2)} ms | best ${Math.min(...s.p50s).toFixed(2)} ms | median mean ${med(s.means).toFixed(2)} ms (${(1000 / med(s.means)).toFixed(0)} req/s sequential) |`);
} finally {
  for (const s of sides) {
    await s.dev.stop();
    rmSync(s.scratch, { recursive: true, force: true });
  }
}
