// One ctx crossing on real workerd, in CPU time: workerd.bench.mjs's
// "one ctx crossing" row (a program of K ctx.tool('') calls less a trivial
// program, / K) measured as the workerd process's CPU time (Linux
// /proc/<pid>/task/*/schedstat, ns), which holds on a busy machine where
// the wall-clock row does not. With BASE=<another tree> both trees' apps
// run at once, each in its own workerd, and their requests alternate.
//   node bench/workerd-crossing.bench.mjs                (needs make build)
//   BASE=/tmp/old REPS=10 node bench/workerd-crossing.bench.mjs
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const REPS = Number(process.env.REPS || 8);
const BATCH = Number(process.env.BATCH || 10); // requests per measurement
const K = 100;

// cpuOf sums the CPU time (ns) of every process whose command line holds
// marker, over all its threads.
function cpuOf(marker) {
  let ns = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes(marker)) continue;
      for (const t of readdirSync(`/proc/${pid}/task`)) ns += Number(readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'latin1').split(' ')[0]);
    } catch { /* gone */ }
  }
  return ns;
}

async function side(name, root) {
  const rig = await import(pathToFileURL(join(root, 'npm/test/workerd/rig.mjs')).href);
  const scratch = mkdtempSync(join(tmpdir(), 'code-wasm-crossing-'));
  const project = rig.installApp(scratch);
  writeFileSync(join(project, '.dev.vars'), 'ALLOW_UNAUTHENTICATED=true\n');
  const env = rig.wranglerEnv(scratch);
  rig.bundleApp({ project, state: join(project, 'state'), env, vars: { ALLOW_UNAUTHENTICATED: 'true' } });
  const dev = await rig.startWorkerd({ project, ready: async (b) => (await fetch(`${b}/v1/stats`)).ok });
  const marker = `127.0.0.1:${new URL(dev.base).port}`;
  const call = async (path, body) => {
    const res = await fetch(dev.base + path, { method: 'POST', body: JSON.stringify(body) });
    const text = await res.text();
    if (!res.ok) throw new Error(`${name} ${path}: ${res.status} ${text}`);
    return JSON.parse(text);
  };
  const { id } = await call('/v1/sessions', {});
  const prog = `/v1/sessions/${id}/program`;
  const trivial = { source: 'async function run() { return 1 }' };
  const many = { source: `async function run(ctx) { let n = 0; for (let i = 0; i < ${K}; i++) { try { await ctx.tool('') } catch { n++ } } return n }`, limits: { maxToolCalls: K } };
  const measure = async (body) => {
    const c0 = cpuOf(marker);
    for (let i = 0; i < BATCH; i++) {
      const r = await call(prog, body);
      if (r.exitCode !== 0) throw new Error(`${name}: ${r.output}`);
    }
    return (cpuOf(marker) - c0) / BATCH / 1000; // µs per request
  };
  for (let i = 0; i < 3; i++) { await measure(trivial); await measure(many); }
  return { name, measure, trivial, many, t: [], m: [], stop: async () => { await dev.stop(); rmSync(scratch, { recursive: true, force: true }); } };
}

const load0 = loadavg()[0];
const sides = [await side('this tree', new URL('..', import.meta.url).pathname)];
try {
  if (process.env.BASE) sides.push(await side(`BASE ${process.env.BASE}`, process.env.BASE));
  for (let rep = 0; rep < REPS; rep++) {
    for (const s of rep % 2 ? [...sides].reverse() : sides) {
      s.t.push(await s.measure(s.trivial));
      s.m.push(await s.measure(s.many));
    }
  }
  const med = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
  console.log(`workerd CPU per request, medians of ${REPS} x ${BATCH} requests; load ${load0.toFixed(1)} → ${loadavg()[0].toFixed(1)}`);
  for (const s of sides) {
    console.log(`  ${s.name}: one ctx crossing ${((med(s.m) - med(s.t)) / K).toFixed(1)} µs CPU (trivial program ${(med(s.t) / 1000).toFixed(2)} ms, with ${K} ctx.tool('') ${(med(s.m) / 1000).toFixed(2)} ms)`);
  }
} finally {
  for (const s of sides) await s.stop();
}
