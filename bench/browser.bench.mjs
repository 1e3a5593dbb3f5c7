// The session API in Chromium against the bare Go-wasm floor, side by side
// in one run (issue 18 goals):
//   ready:      page -> createSession (the package's Worker) -> first
//               tool('read') answered, vs page -> a bare Go wasm started in
//               a Worker -> its ready message;
//   round trip: `await session.tool('read', ...)` from the page, vs page ->
//               Worker postMessage -> a Promise-returning Go no-op -> page.
// Beside them, code.wasm's own fetch + compileStreaming in a Worker (no Go,
// none of the package's JS): what any start of this module costs before
// its first instruction runs, the lower bound of the session's ready.
// Goals: ready <= 2.5x, round trip <= 3x. Each cold start is a fresh page
// of one browser (HTTP cache warm for both), A/B alternated.
//   node bench/browser.bench.mjs      (needs make build; Debian's chromium)
//   RUNS=7 CALLS=1000 node bench/browser.bench.mjs
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { launch, server, freshProfile, removeProfile, repo } from '../web/test/browser.mjs';
import { buildBareFloor } from './bare-floor.mjs';

const RUNS = Number(process.env.RUNS || 5);
const CALLS = Number(process.env.CALLS || 500);
// WARM: calls of each before the round trips are timed. V8 recompiles the
// Go wasm's hot functions with TurboFan over the first thousands of calls
// (the rounds still fell round after round without it).
const WARM = Number(process.env.WARM || 3000);
// The floor: bench/bare-floor.mjs.
const tmp = buildBareFloor();
// A failed fetch or compile posts why, and fails the run (bareReady)
// instead of hanging it.
writeFileSync(join(tmp, 'compile.js'), "WebAssembly.compileStreaming(fetch('/npm/dist/code.wasm')).then(() => postMessage(1), (e) => postMessage({ error: String(e) }));\n");

const srv = await server([['/bare/', tmp]]);
const profile = freshProfile();
const ctx = await launch(profile);
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
try {
  const onPage = async (fn, arg) => {
    const page = await ctx.newPage();
    try {
      await page.goto(`${srv.url}/bare/blank.html`);
      return await page.evaluate(fn, arg);
    } finally {
      await page.close();
    }
  };
  const bareReady = (script = '/bare/worker.js') => new Promise((resolve, reject) => {
    const t0 = performance.now();
    const w = new Worker(script);
    w.onmessage = (e) => {
      const ms = performance.now() - t0;
      w.terminate();
      if (e.data?.error) reject(new Error(`${script}: ${e.data.error}`));
      else resolve(ms);
    };
    w.onerror = (e) => { reject(new Error(`${script}: ${e.message}`)); w.terminate(); };
  });
  const sessionReady = async () => {
    const t0 = performance.now();
    const { createSession } = await import('/npm/src/entry-browser.mjs');
    const s = await createSession({ workspace: { kind: 'memory', files: { 'a.txt': 'a\n' } } });
    await s.tool('read', { file_path: 'a.txt' });
    const ms = performance.now() - t0;
    await s.close();
    return ms;
  };
  // A warm-up of each (HTTP cache, the browser's wasm code cache).
  await onPage(bareReady);
  await onPage(bareReady, '/bare/compile.js');
  await onPage(sessionReady);
  const ready = { bare: [], compile: [], session: [] };
  for (let i = 0; i < RUNS; i++) {
    ready.bare.push(await onPage(bareReady));
    ready.compile.push(await onPage(bareReady, '/bare/compile.js'));
    ready.session.push(await onPage(sessionReady));
  }
  // Round trips in one page, rounds interleaved.
  const trips = await onPage(async ([N, WARM]) => {
    const w = new Worker('/bare/worker.js');
    await new Promise((r) => { w.onmessage = r; });
    const pending = new Map();
    let next = 0;
    w.onmessage = (e) => { pending.get(e.data.id)(e.data.s); pending.delete(e.data.id); };
    const bare = (s) => new Promise((r) => { const id = next++; pending.set(id, r); w.postMessage({ id, s }); });
    const { createSession } = await import('/npm/src/entry-browser.mjs');
    const s = await createSession({ workspace: { kind: 'memory', files: { 'a.txt': 'hello\n' } } });
    const args = JSON.stringify({ name: 'read', args: { file_path: 'a.txt' } });
    const time = async (f) => { const t = performance.now(); for (let i = 0; i < N; i++) await f(); return (performance.now() - t) * 1000 / N; };
    const rounds = async () => {
      const r = { bare: [], tool: [] };
      for (let round = 0; round < 5; round++) {
        r.bare.push(await time(() => bare(args)));
        r.tool.push(await time(() => s.tool('read', { file_path: 'a.txt' })));
      }
      return r;
    };
    const early = await rounds();
    for (let i = 0; i < WARM; i++) { await bare(args); await s.tool('read', { file_path: 'a.txt' }); }
    const r = await rounds();
    r.early = early;
    await s.close();
    w.terminate();
    return r;
  }, [CALLS, WARM]);
  // Work per call, which does not depend on load: the entries into Go
  // (loader.mjs stats.goEntries) in the package's Worker during
  // createSession + the first tool('read'), and per warm tool('read'). The
  // floor's call is 2 entries by construction (noopAsync, and the Promise
  // executor it runs).
  const entries = await (async () => {
    const page = await ctx.newPage();
    try {
      await page.goto(`${srv.url}/bare/blank.html`);
      await page.evaluate(async () => {
        const { createSession } = await import('/npm/src/entry-browser.mjs');
        const s = await createSession({ workspace: { kind: 'memory', files: { 'a.txt': 'hello\n' } } });
        await s.tool('read', { file_path: 'a.txt' });
        /** @type {any} */ (self).s = s;
      });
      const w = page.workers().find((x) => x.url().endsWith('/browser-worker.mjs'));
      const count = () => w.evaluate(async () => (await import('/npm/src/loader.mjs')).stats.goEntries);
      const ready = await count();
      const n = 200;
      await page.evaluate(async (n) => { for (let i = 0; i < n; i++) await /** @type {any} */ (self).s.tool('read', { file_path: 'a.txt' }); }, n);
      return { ready, perCall: (await count() - ready) / n };
    } finally {
      await page.close();
    }
  })();
  const version = ctx.browser()?.version() ?? execFileSync(process.env.CHROMIUM ?? '/usr/bin/chromium', ['--version'], { encoding: 'utf8' }).trim();
  const rS = median(ready.session), rB = median(ready.bare), rC = median(ready.compile);
  const tS = median(trips.tool.slice(1)), tB = median(trips.bare.slice(1));
  const ok = (b) => (b ? 'met' : 'MISSED');
  console.log(`Chromium ${version}, ${RUNS} cold pages each (median); round trips in one page: 5 rounds of ${CALLS} calls of each, ${WARM} more of each, 5 rounds again (the first round of each five dropped, median), load ${loadavg()[0].toFixed(1)}\n`);
  console.log('| measure | session API | bare Go wasm in a Worker | ratio | goal |');
  console.log('|---|---:|---:|---:|---|');
  console.log(`| ready (ms): createSession + first tool('read') vs the bare Worker's ready | ${rS.toFixed(0)} | ${rB.toFixed(0)} | ${(rS / rB).toFixed(2)}x | <= 2.5x: ${ok(rS / rB <= 2.5)} |`);
  console.log(`| code.wasm fetched + compiled in a Worker, nothing run (the lower bound of ready) vs the bare Worker's ready | ${rC.toFixed(0)} | ${rB.toFixed(0)} | ${(rC / rB).toFixed(2)}x | |`);
  const eS = median(trips.early.tool.slice(1)), eB = median(trips.early.bare.slice(1));
  console.log(`| round trip (us), the page's first ${5 * CALLS} calls of each (V8 tiering up) | ${eS.toFixed(0)} | ${eB.toFixed(0)} | ${(eS / eB).toFixed(2)}x | |`);
  console.log(`| round trip (us): tool('read') vs page -> Worker -> Go Promise -> page, after ${WARM} more calls of each | ${tS.toFixed(0)} | ${tB.toFixed(0)} | ${(tS / tB).toFixed(2)}x | <= 3x: ${ok(tS / tB <= 3)} |`);
  console.log(`| Go entries (count): createSession + first tool('read') / per tool('read') round trip | ${entries.ready} / ${entries.perCall.toFixed(2)} | – / 2 | | |`);
  console.log(`\ncold (ms): session ${ready.session.map((x) => x.toFixed(0)).join(' ')}; code.wasm compiled ${ready.compile.map((x) => x.toFixed(0)).join(' ')}; bare ${ready.bare.map((x) => x.toFixed(0)).join(' ')}`);
  console.log(`round trips (us), first rounds: session ${trips.early.tool.map((x) => x.toFixed(0)).join(' ')}; bare ${trips.early.bare.map((x) => x.toFixed(0)).join(' ')}`);
  console.log(`round trips (us), after the warm-up: session ${trips.tool.map((x) => x.toFixed(0)).join(' ')}; bare ${trips.bare.map((x) => x.toFixed(0)).join(' ')}`);
} finally {
  await ctx.close();
  await srv.close();
  removeProfile(profile);
  rmSync(tmp, { recursive: true, force: true });
}
