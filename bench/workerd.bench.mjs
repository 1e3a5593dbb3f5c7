// The Cloudflare Workers deployment's costs (issue 17's benchmark lines)
// on real workerd on loopback: the package packed and installed as a
// user would, API.md's one-line app (`@a3s-lab/code-wasm/worker`) bundled
// by `wrangler deploy --dry-run` and served by plain `workerd serve`
// (SQLite Durable Objects on local disk, R2 through the tier's local
// gateway, npm/test/workerd/r2gateway.mjs), or with VIA=wrangler by
// `wrangler dev` (its local R2, and its proxy Worker in front of the app).
// Start-up code: npm/test/workerd/rig.mjs, the workerd tier's. Every figure
// is taken from Node over HTTP; the first row (a route the app's fetch
// handler answers alone) is the floor of that.
//   node bench/workerd.bench.mjs      (make bench runs it; needs make build)
//   N=500 COLD=3 VIA=wrangler node bench/workerd.bench.mjs
//   N=100 COLD=1 MEM_CALLS=500 WARM=1000 node bench/workerd.bench.mjs   (a quick look)
import { mkdtempSync, writeFileSync, rmSync, existsSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { Agent, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { bundleApp, installApp, repo, startWorkerd, startWranglerDev, wranglerEnv } from '../npm/test/workerd/rig.mjs';

const N = Number(process.env.N || 300); // sequential requests per row
const COLD = Number(process.env.COLD || 3); // wrangler dev starts for the cold row
const MEM_CALLS = Number(process.env.MEM_CALLS || 10000); // the memory row's tool calls (the goal's 10,000)
const WARM = Number(process.env.WARM || 3000); // calls before the steady tool-call row
const WARM_PROGRAMS = Number(process.env.WARM_PROGRAMS || 1000); // programs before the steady program row
const PAUSE = Number(process.env.PAUSE || 20); // ms before each request of the paced rows
// CLIENT: how Node sends the requests. 'http' (the default): node:http
// over one kept-alive socket, the client research/workers.md measured its
// figures with; 'fetch': Node's fetch (undici), whose own cost per request
// is about 0.3-0.5 ms more on these machines (RATIONALE.md "How are the
// Workers figures measured?").
const CLIENT = process.env.CLIENT || 'http';
const agent = new Agent({ keepAlive: true, maxSockets: 8 });
// send makes one request and answers {status, text}.
const send = (url, method, body) => {
  if (CLIENT === 'fetch') return fetch(url, { method, body }).then(async (r) => ({ status: r.status, text: await r.text() }));
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, agent, headers: body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
};
if (!existsSync(join(repo, 'npm/dist/code.wasm'))) { console.log('npm/dist/code.wasm missing: run make build'); process.exit(1); }

const started = new Date();
const load0 = loadavg()[0];
const scratch = mkdtempSync(join(tmpdir(), 'code-wasm-workerd-bench-'));
let dev;
try {
  const project = installApp(scratch);
  writeFileSync(join(project, '.dev.vars'), 'ALLOW_UNAUTHENTICATED=true\n');
  const env = wranglerEnv(scratch);
  const state = join(project, 'state');
  const wrangler = process.env.VIA === 'wrangler';
  const ready = async (b) => (await fetch(`${b}/v1/stats`)).ok;
  if (!wrangler) bundleApp({ project, state, env, vars: { ALLOW_UNAUTHENTICATED: 'true' } });
  const start = () => (wrangler ? startWranglerDev({ project, state, env, ready }) : startWorkerd({ project, ready }));

  let base;
  const call = async (method, path, body, want = 200) => {
    const res = await send(base + path, method, body === undefined ? undefined : JSON.stringify(body));
    const text = res.text;
    if (res.status !== want) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
  // timed runs f n times in sequence: p50, p90, and requests per second;
  // with pause, each after that many ms idle (not timed; req/s counts it).
  const timed = async (n, f, pause = 0) => {
    const lat = [];
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      if (pause) await new Promise((r) => setTimeout(r, pause));
      const s = performance.now();
      await f(i);
      lat.push(performance.now() - s);
    }
    const total = performance.now() - t0;
    lat.sort((a, b) => a - b);
    return { p50: lat[Math.floor(n / 2)], p90: lat[Math.floor(n * 0.9)], rps: n / (total / 1000) };
  };

  // Cold: a fresh process (a fresh isolate), then the first session
  // create, which instantiates the Go wasm and runs its init.
  const cold = [];
  for (let i = 0; i < COLD; i++) {
    dev = await start();
    base = dev.base;
    const s = performance.now();
    await call('POST', '/v1/sessions', {}, 201);
    cold.push(performance.now() - s);
    if (i < COLD - 1) await dev.stop();
  }
  cold.sort((a, b) => a - b);

  const { id } = await call('POST', '/v1/sessions', { workspace: { files: { 'a.txt': 'alpha\n' } } }, 201);
  const tools = `/v1/sessions/${id}/tools`;
  const prog = `/v1/sessions/${id}/program`;
  await call('POST', `${tools}/read`, { file_path: 'a.txt' }); // warm the DO's Go session
  const rows = [];
  const row = (what, r, goal, research) => rows.push([what, r.p50, r.p90, r.rps, goal, research]);

  row(`floor: GET /v1/stats (${wrangler ? 'proxy → ' : ''}Worker, no DO, no Go)`, await timed(N, () => call('GET', '/v1/stats')), '–', '–');
  // read with no file_path: Go's argument check answers (exit 1), no R2.
  // Entries into Go per request (/v1/stats goEntries) count work that
  // does not depend on the machine's load.
  const entries0 = (await call('GET', '/v1/stats')).goEntries;
  row('tool call Worker → DO → Go (read {}: the argument check, no R2), the session\'s first calls', await timed(N, async () => {
    if ((await call('POST', `${tools}/read`, {})).exitCode !== 1) throw new Error('read {} was not refused');
  }), '≤ 2 ms, ≥ 500/s', '1.04 ms, 784/s');
  const entriesPerCall = ((await call('GET', '/v1/stats')).goEntries - entries0) / N;
  // The same call in the steady state: V8 compiles the Go wasm's hot
  // functions again with its optimizing tier in the background, over the
  // isolate's first thousands of calls (the row above runs while it
  // does); a deployed isolate serves far more. WARM calls first, then
  // the p50 and rate of N.
  for (let i = 0; i < WARM; i++) await call('POST', `${tools}/read`, {});
  const steady = await timed(N, async () => {
    if ((await call('POST', `${tools}/read`, {})).exitCode !== 1) throw new Error('read {} was not refused');
  });
  row(`tool call Worker → DO → Go (read {}), steady: after ${WARM.toLocaleString('en')} more calls`, steady, '≤ 2 ms, ≥ 500/s', '1.04 ms, 784/s');
  row(`R2 tool call: read a.txt (Worker → DO → Go → ${wrangler ? 'wrangler\'s local R2' : 'the local gateway'})`, await timed(N, () => call('POST', `${tools}/read`, { file_path: 'a.txt' })), '≤ 10 ms', '3.05 ms');
  row('R2 tool call: write w.txt', await timed(N, (i) => call('POST', `${tools}/write`, { file_path: 'w.txt', content: `${i}\n` })), '≤ 10 ms', '3.46 ms');
  row('session create, warm isolate (POST /v1/sessions {})', await timed(Math.min(N, 50), () => call('POST', '/v1/sessions', {}, 201)), '≤ 10 ms', '3.9 ms');
  const trivialSrc = { source: 'async function run() { return 1 }' };
  row('program, trivial, fresh QuickJS runtime (whole request), the session\'s first programs', await timed(N, () => call('POST', prog, trivialSrc)), '–', '2.53 ms (1 ctx call)');
  // The steady state, as for the tool call: V8 tiers up QuickJS's and
  // the program tool's code over the first programs.
  for (let i = 0; i < WARM_PROGRAMS; i++) await call('POST', prog, trivialSrc);
  const trivial = await timed(N, () => call('POST', prog, trivialSrc));
  row(`program, trivial, fresh QuickJS runtime (whole request), steady: after ${WARM_PROGRAMS.toLocaleString('en')} more`, trivial, '–', '2.53 ms (1 ctx call)');
  // Paced: each request after a pause (PAUSE ms), as an agent's program
  // comes after a model turn. The pool makes the next run's runtime and
  // realm while the isolate is idle (ptc-quickjs.mjs makeQuickJSPool), so
  // these rows are the latency a program sees; back to back (the rows
  // above) that work is in the next request's way. A tool call paced the
  // same way is what the program row is compared with.
  const pacedTool = await timed(Math.min(N, 100), async () => {
    if ((await call('POST', `${tools}/read`, {})).exitCode !== 1) throw new Error('read {} was not refused');
  }, PAUSE);
  row(`tool call (read {}), each after a ${PAUSE} ms pause`, pacedTool, '–', '–');
  const pacedTrivial = await timed(Math.min(N, 100), () => call('POST', prog, trivialSrc), PAUSE);
  row(`program, trivial, each after a ${PAUSE} ms pause (its runtime and realm made ahead while idle)`, pacedTrivial, '–', '–');
  const K = 100; // ctx calls in one program: the per-call cost is the difference over K
  const many = await timed(Math.max(20, Math.floor(N / 5)), async () => {
    const r = await call('POST', prog, { source: `async function run(ctx) { for (let i = 0; i < ${K}; i++) { try { await ctx.tools.read({}) } catch {} } return 1 }`, limits: { maxToolCalls: K } });
    if (r.exitCode !== 0) throw new Error(r.output);
  });
  row(`program with ${K} ctx.tools.read({}) calls (whole request)`, many, '–', '–');
  // The crossing alone: ctx.tool('') goes QuickJS → host → Go (its poll
  // answered, Go's bridge refuses the empty name before the kernel) → host
  // → QuickJS (the refusal delivered), as every ctx call does, and runs no
  // tool, writes no event.
  const bare = await timed(Math.max(20, Math.floor(N / 5)), async () => {
    const r = await call('POST', prog, { source: `async function run(ctx) { let n = 0; for (let i = 0; i < ${K}; i++) { try { await ctx.tool('') } catch { n++ } } return n }`, limits: { maxToolCalls: K } });
    if (r.exitCode !== 0 || !r.output.includes(String(K))) throw new Error(r.output);
  });
  row(`program with ${K} ctx.tool('') calls, each refused by Go's bridge before the kernel (whole request)`, bare, '–', '–');

  // Memory: 10,000 tool calls over 20 sessions, then Go's linear memory.
  const before = await call('GET', '/v1/stats');
  const ids = [];
  for (let i = 0; i < 20; i++) ids.push((await call('POST', '/v1/sessions', { workspace: { files: { 'f.txt': `${i}\n` } } }, 201)).id);
  const mix = [['read', { file_path: 'f.txt' }], ['write', { file_path: 'g.txt', content: 'x\n' }], ['ls', { path: '.' }], ['grep', { pattern: 'x' }], ['read', {}]];
  const C = 4; // in flight at once, each on its own session
  const memT0 = performance.now();
  await Promise.all(Array.from({ length: C }, async (_, w) => {
    for (let i = w; i < MEM_CALLS; i += C) {
      const [tool, args] = mix[i % mix.length];
      await call('POST', `/v1/sessions/${ids[i % 20]}/tools/${tool}`, args);
    }
  }));
  const memS = (performance.now() - memT0) / 1000;
  const after = await call('GET', '/v1/stats');
  if (after.goInstances !== 1) throw new Error(`goInstances ${after.goInstances} after 20 sessions`);

  const ms = (v) => `${v.toFixed(2)} ms`;
  console.log(`\n${wrangler ? 'wrangler dev' : 'workerd serve'} on 127.0.0.1; ${started.toISOString()}; load average ${load0.toFixed(1)} → ${loadavg()[0].toFixed(1)}; N=${N} sequential requests per row; client: ${CLIENT === 'fetch' ? "Node's fetch" : 'node:http, kept-alive socket'}\n`);
  console.log('| measure | p50 | p90 | req/s (sequential) | goal | research |');
  console.log('|---|---:|---:|---:|---|---|');
  for (const [w, p50, p90, rps, goal, research] of rows) console.log(`| ${w} | ${ms(p50)} | ${ms(p90)} | ${rps.toFixed(0)} | ${goal} | ${research} |`);
  const perCtx = (many.p50 - trivial.p50) / K;
  const perCrossing = (bare.p50 - trivial.p50) / K;
  console.log(`| trivial program on a fresh QuickJS runtime, beyond a request's own cost (the steady trivial program row less the steady tool call row: Go's program tool, the runtime, its realm, the script) | ${ms(trivial.p50 - steady.p50)} | | | ≤ 2 ms | 0.4–0.8 ms (runProgram alone) |`);
  console.log(`| the same, each request after a ${PAUSE} ms pause (the paced trivial program row less the paced tool call row) | ${ms(pacedTrivial.p50 - pacedTool.p50)} | | | | |`);
  console.log(`| one ctx crossing: QuickJS → host → Go's bridge → host → QuickJS, no tool (the ctx.tool('') row less the trivial one, / ${K}) | ${(perCrossing * 1000).toFixed(0)} µs | | | ≤ 60 µs (host call) | 19–37 µs (no-op host call, no Go) |`);
  console.log(`| one ctx call with its Go tool call: the crossing, plus the kernel's read {} and its events (the ctx.tools.read row less the trivial one, / ${K}) | ${(perCtx * 1000).toFixed(0)} µs | | | – | – |`);
  console.log(`| cold first request: fresh process, first POST /v1/sessions (Go init) | ${ms(cold[Math.floor(cold.length / 2)])} | max ${ms(cold[cold.length - 1])} | | ≤ 300 ms | 133 ms (Go init) |`);
  console.log(`| Go linear memory: before / after ${MEM_CALLS.toLocaleString('en')} tool calls over 20 new sessions (${C} in flight, ${memS.toFixed(1)} s) | ${(before.goMemoryBytes / 2 ** 20).toFixed(1)} MiB | ${(after.goMemoryBytes / 2 ** 20).toFixed(1)} MiB | ${(MEM_CALLS / memS).toFixed(0)} | ≤ 32 MB | 6.8 MB after init |`);
  console.log(`\nGo instances in the isolate after it all: ${after.goInstances}. Cold runs (ms): ${cold.map((c) => c.toFixed(0)).join(', ')}.`);
  console.log(`Entries into Go per tool call request (read {}): ${entriesPerCall.toFixed(1)} (the call and its Promise, the event pump's nextEvents).`);
} finally {
  agent.destroy();
  if (dev) await dev.stop();
  rmSync(scratch, { recursive: true, force: true });
}
