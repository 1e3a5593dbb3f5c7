// One ctx crossing of the workerd host, in Node: the real Go wasm and the
// workerd host kinds (src/ptc-workerd.mjs: QuickJS on Go's thread, the
// direct door) in one thread, as npm/test/ptc-workerd.test.mjs drives
// them. A crossing is QuickJS → host → Go's bridge → host → QuickJS with
// no tool (ctx.tool(''), refused by Go's bridge before the kernel): the
// median program with K of them less the median trivial program, / K. Wall time and the process's CPU
// time (which holds better under load) are both reported.
//   node bench/ctx-crossing.bench.mjs                 (needs make build)
//   BASE=/tmp/old node bench/ctx-crossing.bench.mjs   A/B: /tmp/old/npm is
//     another tree's npm/ (src and dist, node_modules reachable from it);
//     its Go and host alternate with this tree's in one process.
//   REPS=40 K=100 node --cpu-prof bench/ctx-crossing.bench.mjs
import { readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';

const REPS = Number(process.env.REPS || 30);
const K = Number(process.env.K || 500);

async function side(name, npmDir) {
  const src = (f) => import(new URL(`src/${f}`, npmDir).href);
  const { workerdPtcHostKinds } = await src('ptc-workerd.mjs');
  const { loadApi } = await src('loader.mjs');
  const { makeCreateSession } = await src('session.mjs');
  const qjs = await WebAssembly.compile(await readFile(new URL('dist/quickjs.wasm', npmDir)));
  const go = await WebAssembly.compile(await readFile(process.env.GOWASM && npmDir.href === new URL('../npm/', import.meta.url).href ? process.env.GOWASM : new URL('dist/code.wasm', npmDir)));
  const create = makeCreateSession(() => loadApi(async () => go), { hostKinds: workerdPtcHostKinds(qjs) });
  const s = await create({ workspace: { kind: 'memory', files: { 'a.txt': 'alpha\n' } } });
  const run = async (source) => {
    const r = await s.program({ source, allowedTools: ['read'], limits: { timeoutMs: 60000, maxToolCalls: K + 5 } });
    if (r.exitCode !== 0) throw new Error(`${name}: ${r.output}`);
    return r;
  };
  const trivial = 'async function run() { return 1 }';
  const many = `async function run(ctx) { let n = 0; for (let i = 0; i < ${K}; i++) { try { await ctx.tool('') } catch { n++ } } return n }`;
  const time = async (source) => {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await run(source);
    const wall = performance.now() - t0;
    const c = process.cpuUsage(c0);
    return { wall, cpu: (c.user + c.system) / 1000 };
  };
  for (let i = 0; i < 5; i++) { await run(trivial); await run(many); } // warm both paths
  const r = await run(many);
  if (!r.output.includes(String(K))) throw new Error(`${name}: ${r.output}`);
  return { name, time, trivial, many, close: () => s.close(), tw: [], mw: [], tc: [], mc: [] };
}

const load0 = loadavg()[0];
const sides = [await side('this tree', new URL('../npm/', import.meta.url))];
if (process.env.BASE) sides.push(await side(`BASE ${process.env.BASE}`, pathToFileURL(`${process.env.BASE.replace(/\/$/, '')}/npm/`)));
// PROFILE=n: run the K-call program n times only (node --cpu-prof).
if (process.env.PROFILE) {
  const s = sides[0];
  const t0 = performance.now();
  for (let i = 0; i < Number(process.env.PROFILE); i++) await s.time(s.many);
  console.log(`${process.env.PROFILE} programs of ${K} crossings: ${((performance.now() - t0) / Number(process.env.PROFILE) / K * 1000).toFixed(1)} µs per crossing (with the program's own cost)`);
  process.exit(0);
}
for (let rep = 0; rep < REPS; rep++) {
  // Alternate which side goes first, and within a side which program.
  const order = rep % 2 ? [...sides].reverse() : sides;
  for (const s of order) {
    let a, b;
    if (rep % 4 < 2) { a = await s.time(s.trivial); b = await s.time(s.many); } else { b = await s.time(s.many); a = await s.time(s.trivial); }
    s.tw.push(a.wall); s.mw.push(b.wall); s.tc.push(a.cpu); s.mc.push(b.cpu);
  }
}
const med = (v) => { const x = [...v].sort((p, q) => p - q); return x[Math.floor(x.length / 2)]; };
const per = (m, t) => ((med(m) - med(t)) / K * 1000).toFixed(1);
console.log(`ctx crossing (ctx.tool('') x ${K} less a trivial program, / ${K}; medians of ${REPS} reps), load ${load0.toFixed(1)} → ${loadavg()[0].toFixed(1)}`);
for (const s of sides) {
  console.log(`  ${s.name}: wall ${per(s.mw, s.tw)} µs, cpu ${per(s.mc, s.tc)} µs (trivial program: wall ${med(s.tw).toFixed(2)} ms, cpu ${med(s.tc).toFixed(2)} ms)`);
  await s.close();
}
