// `make bench` (node bench/run.mjs opfs): OPFS workspaces in Chromium.
// In one page: 2,000 small files written, read and grepped through the
// package (page → worker → wasm → OPFS driver), the same on a memory
// workspace (the tool layer's own cost), and the raw OPFS floor measured in
// a worker of the same page (bench/opfs-raw.worker.js). Then the page's
// responsiveness during a long grep, wasm in the Worker vs on the page.
// Prints one table; figures go to BENCHMARKS.md with this command.
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch, server, freshProfile, removeProfile } from '../web/test/browser.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const N = Number(process.env.BENCH_FILES ?? 2000);

async function pageBench(n) {
  const { createSession } = await import('/npm/src/entry-browser.mjs');
  const files = [];
  for (let i = 0; i < n; i++) {
    const size = 100 + ((i * 37) % 900);
    const word = i % 100 === 0 ? 'needle' : 'hay';
    files.push([`src/d${i % 20}/f${i}.txt`, `line one of ${i} ${word}\n`.padEnd(size - 1, 'abcdefgh ') + '\n']);
  }
  const ms = (t0) => performance.now() - t0;
  const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const out = { sizes: files.map(([, c]) => c.length) };

  async function stack(ws, tag) {
    let s = await createSession({ workspace: ws });
    let t0 = performance.now();
    for (const [p, c] of files) {
      const r = await s.writeFile(p, c);
      if (r.exitCode !== 0) throw new Error(r.output);
    }
    out[`${tag}.write`] = ms(t0);
    t0 = performance.now();
    for (const [p] of files) await s.readFile(p);
    out[`${tag}.read`] = ms(t0);
    const greps = [];
    for (let k = 0; k < 3; k++) {
      t0 = performance.now();
      const g = await s.grep('needle');
      greps.push(ms(t0));
      if (!g.includes(`${n / 100} match`)) throw new Error(`grep found the wrong count: ${g.slice(-200)}`);
    }
    out[`${tag}.grep`] = median(greps);
    if (ws.kind === 'opfs') {
      await s.close();
      t0 = performance.now();
      s = await createSession({ workspace: ws });
      out[`${tag}.reopen`] = ms(t0);
      t0 = performance.now();
      await s.grep('needle');
      out[`${tag}.grepAfterReopen`] = ms(t0);
    }
    await s.close();
  }
  await stack({ kind: 'opfs', root: `bench-${Date.now()}` }, 'opfs');
  await stack({ kind: 'memory' }, 'memory');

  const raw = await new Promise((resolve, reject) => {
    const w = new Worker('/bench/opfs-raw.worker.js');
    w.onmessage = (e) => { resolve(e.data); w.terminate(); };
    w.onerror = (e) => reject(new Error(e.message));
    w.postMessage({ n, sizes: out.sizes });
  });
  for (const [k, v] of Object.entries(raw)) out[`raw.${k}`] = v;

  // Responsiveness: the longest gap between page timer ticks while a grep
  // over 2,000 × 4 KB files runs, wasm in the Worker vs on the page.
  const big = {};
  for (let i = 0; i < n; i++) big[`d${i % 20}/f${i}.txt`] = `${i} `.padEnd(4095, 'lorem ipsum dolor ') + '\n';
  async function gaps(s) {
    let last = performance.now(), worst = 0, ticks = 0, running = true;
    const tick = () => { const now = performance.now(); worst = Math.max(worst, now - last); last = now; ticks++; if (running) setTimeout(tick, 0); };
    setTimeout(tick, 0);
    const t0 = performance.now();
    await s.grep('[q]uux\\d{3}');
    const dur = performance.now() - t0;
    running = false;
    worst = Math.max(worst, performance.now() - last);
    return { dur, worst, ticks };
  }
  const ws = { kind: 'memory', files: big };
  const inWorker = await createSession({ workspace: ws });
  const w = await gaps(inWorker);
  await inWorker.close();
  const { loadApi } = await import('/npm/src/loader.mjs');
  const { makeCreateSession } = await import('/npm/src/session.mjs');
  const { getModule } = await import('/npm/src/browser-wasm.mjs');
  const onPage = await makeCreateSession(() => loadApi(getModule))({ workspace: ws });
  const p = await gaps(onPage);
  await onPage.close();
  Object.assign(out, { 'resp.worker.grep': w.dur, 'resp.worker.worstGap': w.worst, 'resp.worker.ticks': w.ticks,
    'resp.page.grep': p.dur, 'resp.page.worstGap': p.worst, 'resp.page.ticks': p.ticks });
  delete out.sizes;
  return out;
}

const profile = freshProfile();
const srv = await server([['/bench/', here]]);
const ctx = await launch(profile);
try {
  const page = await ctx.newPage();
  await page.goto(`${srv.url}/test/blank.html`);
  const r = await page.evaluate(pageBench, N);
  const f = (x) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
  const per = (x) => `${((x / N) * 1000).toFixed(0)} µs/file`;
  console.log(`chromium ${ctx.browser()?.version() ?? ''}; ${N} files of 100–1,000 B in 20 dirs; ms`);
  const rows = [
    ['write 2,000 (one writeFile call each)', r['opfs.write'], r['memory.write'], r['raw.oneHandleWriteFlushEach'], r['raw.oneHandleWrite'], r['raw.filePerPayloadWrite']],
    ['read 2,000 (one readFile call each)', r['opfs.read'], r['memory.read'], null, r['raw.oneHandleRead'], r['raw.filePerPayloadRead']],
    ['grep all 2,000 (median of 3)', r['opfs.grep'], r['memory.grep'], null, null, null],
  ];
  console.log('| operation | OPFS workspace | memory workspace | raw: one handle, flush each | raw: one handle, one flush | raw: one file each |');
  console.log('|---|---|---|---|---|---|');
  for (const [name, ...xs] of rows) console.log(`| ${name} | ${xs.map((x) => (x == null ? '–' : `${f(x)} (${per(x)})`)).join(' | ')} |`);
  console.log(`\nreopen the 2,000-file OPFS workspace (replay the log): ${f(r['opfs.reopen'])} ms; first grep after reopen: ${f(r['opfs.grepAfterReopen'])} ms`);
  console.log(`\npage responsiveness during a grep over 2,000 × 4 KB (memory workspace):`);
  console.log(`| wasm runs | grep ms | longest page stall ms | page timer ticks during the grep |`);
  console.log('|---|---|---|---|');
  console.log(`| in a dedicated Worker (the package's browser entry) | ${f(r['resp.worker.grep'])} | ${f(r['resp.worker.worstGap'])} | ${r['resp.worker.ticks']} |`);
  console.log(`| on the page (loader.mjs directly) | ${f(r['resp.page.grep'])} | ${f(r['resp.page.worstGap'])} | ${r['resp.page.ticks']} |`);
} finally {
  await ctx.close();
  await srv.close();
  removeProfile(profile);
}
