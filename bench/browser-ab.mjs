// A/B of the Chromium tool('read') round trip: an old package tree (OLD,
// a checkout built with `make build` or its wasm step) and this one, each
// with its own Worker in one page, rounds interleaved with the bare
// page -> Worker -> Go Promise -> page floor of browser.bench.mjs (the
// order of old and new alternates by round). Prints wall medians, the
// per-round new/old ratios, and the CPU time per call of the page's
// thread and of each Worker's thread (Linux schedstat), which a loaded
// machine does not skew as it does wall time.
//   OLD=/path/to/old/checkout ROUNDS=9 CALLS=300 [NEW_FIRST=1] node bench/browser-ab.mjs
import { rmSync, readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { launch, server, freshProfile, removeProfile, chromiumPids } from '../web/test/browser.mjs';
import { buildBareFloor } from './bare-floor.mjs';
import { descendants } from '../web/test/watchdog.mjs';

const OLD = process.env.OLD;
if (!OLD) throw new Error('OLD=<an old checkout, built> is required');
const ROUNDS = Number(process.env.ROUNDS || 9);
const CALLS = Number(process.env.CALLS || 300);
const NEW_FIRST = process.env.NEW_FIRST === '1';
const tmp = buildBareFloor(); // the floor of browser.bench.mjs

const srv = await server([['/bare/', tmp], ['/old/', OLD]]);
const profile = freshProfile();
const ctx = await launch(profile);
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
try {
  const page = await ctx.newPage();
  await page.goto(`${srv.url}/bare/blank.html`);
  await page.evaluate(async (newFirst) => {
    const w = new Worker('/bare/worker.js');
    await new Promise((res) => { w.onmessage = res; });
    const pending = new Map();
    let next = 0;
    w.onmessage = (e) => { pending.get(e.data.id)(e.data.s); pending.delete(e.data.id); };
    const bare = (s) => new Promise((res) => { const id = next++; pending.set(id, res); w.postMessage({ id, s }); });
    const files = { 'a.txt': 'hello\n' };
    const start = async (url) => (await import(url)).createSession({ workspace: { kind: 'memory', files } });
    let oldS, newS;
    if (newFirst) { newS = await start('/npm/src/entry-browser.mjs'); oldS = await start('/old/npm/src/entry-browser.mjs'); }
    else { oldS = await start('/old/npm/src/entry-browser.mjs'); newS = await start('/npm/src/entry-browser.mjs'); }
    const args = JSON.stringify({ name: 'read', args: { file_path: 'a.txt' } });
    /** @type {any} */ (self).runs = {
      bare: () => bare(args),
      old: () => oldS.tool('read', { file_path: 'a.txt' }),
      new: () => newS.tool('read', { file_path: 'a.txt' }),
    };
  }, NEW_FIRST);
  const run = (which, N) => page.evaluate(async ({ which, N }) => {
    const f = /** @type {any} */ (self).runs[which];
    const t = performance.now();
    for (let i = 0; i < N; i++) await f();
    return (performance.now() - t) * 1000 / N;
  }, { which, N });
  // CPU time of the renderer's threads (/proc/<pid>/task/<tid>/schedstat,
  // ns on a CPU): the page's main thread and each Worker's thread, which
  // holds under load where wall time does not. The three Workers were
  // started in order: bare, old, new (NEW_FIRST=1: bare, new, old; the
  // Worker started second measured up to 5 % less CPU in an A/A run, so
  // a figure is taken both ways).
  const renderer = chromiumPids(profile).flatMap((p) => descendants(p))
    .filter((pid) => { try { return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--type=renderer'); } catch { return false; } })
    .find((pid) => readdirSync(`/proc/${pid}/task`).some((t) => readFileSync(`/proc/${pid}/task/${t}/comm`, 'utf8').startsWith('DedicatedWorker')));
  const workers = readdirSync(`/proc/${renderer}/task`).filter((t) => readFileSync(`/proc/${renderer}/task/${t}/comm`, 'utf8').startsWith('DedicatedWorker')).map(Number).sort((a, b) => a - b);
  if (workers.length !== 3) throw new Error(`expected 3 Worker threads, found ${workers.length}`);
  const threads = { page: Number(renderer), bare: workers[0], old: workers[NEW_FIRST ? 2 : 1], new: workers[NEW_FIRST ? 1 : 2] };
  const cpu = () => Object.fromEntries(Object.entries(threads).map(([k, tid]) => [k, Number(readFileSync(`/proc/${renderer}/task/${tid}/schedstat`, 'utf8').split(' ')[0])]));
  for (let i = 0; i < 4; i++) for (const w of ['bare', 'old', 'new']) await run(w, CALLS); // warm-up: lazy compile, tier-up
  const wall = { bare: [], old: [], new: [] };
  const cpuPage = { bare: 0, old: 0, new: 0 }, cpuWorker = { bare: 0, old: 0, new: 0 };
  for (let round = 0; round < ROUNDS; round++) {
    for (const w of round % 2 ? ['bare', 'new', 'old'] : ['bare', 'old', 'new']) {
      const a = cpu();
      wall[w].push(await run(w, CALLS));
      const b = cpu();
      cpuPage[w] += b.page - a.page;
      cpuWorker[w] += b[w] - a[w];
    }
  }
  const n = ROUNDS * CALLS;
  const per = (ns) => (ns / n / 1000).toFixed(1);
  const ratios = wall.new.map((x, i) => x / wall.old[i]);
  const b = median(wall.bare), o = median(wall.old), nw = median(wall.new);
  console.log(`${ROUNDS} rounds x ${CALLS} calls, ${NEW_FIRST ? 'new' : 'old'} Worker started first, load ${loadavg()[0].toFixed(1)}`);
  console.log(`wall median us: bare ${b.toFixed(0)}, old ${o.toFixed(0)} (${(o / b).toFixed(2)}x), new ${nw.toFixed(0)} (${(nw / b).toFixed(2)}x); new/old paired median ${median(ratios).toFixed(3)} (${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)})`);
  console.log(`CPU us per call (page thread + its Worker's thread): bare ${per(cpuPage.bare)} + ${per(cpuWorker.bare)}, old ${per(cpuPage.old)} + ${per(cpuWorker.old)}, new ${per(cpuPage.new)} + ${per(cpuWorker.new)}; Worker new/old ${(cpuWorker.new / cpuWorker.old).toFixed(3)}, page new/old ${(cpuPage.new / cpuPage.old).toFixed(3)}`);
  console.log(`rounds us: bare ${wall.bare.map((x) => x.toFixed(0)).join(' ')}; old ${wall.old.map((x) => x.toFixed(0)).join(' ')}; new ${wall.new.map((x) => x.toFixed(0)).join(' ')}`);
} finally {
  await ctx.close();
  await srv.close();
  removeProfile(profile);
  rmSync(tmp, { recursive: true, force: true });
}
