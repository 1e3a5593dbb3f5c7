// `make bench` (node bench/run.mjs opfs): OPFS workspaces in Chromium.
// In one page: 2,000 small files written, read and grepped through the
// package (page → worker → wasm → OPFS driver), the same on a memory
// workspace (the tool layer's own cost), and the raw OPFS floor measured in
// a worker of the same page (bench/opfs-raw.worker.js). Then the page's
// responsiveness during a long grep, wasm in the Worker vs on the page.
// Prints one table; figures go to BENCHMARKS.md with this command.
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { launch, server, freshProfile, removeProfile, repo } from '../web/test/browser.mjs';

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

  // Writes and reads per workspace; greps interleaved between the two open
  // sessions (5 rounds, median), so a load spike hits both columns alike.
  async function fill(ws, tag) {
    const s = await createSession({ workspace: ws });
    let t0 = performance.now();
    for (const [p, c] of files) {
      const r = await s.writeFile(p, c);
      if (r.exitCode !== 0) throw new Error(r.output);
    }
    out[`${tag}.write`] = ms(t0);
    t0 = performance.now();
    for (const [p] of files) await s.readFile(p);
    out[`${tag}.read`] = ms(t0);
    return s;
  }
  const opfsWs = { kind: 'opfs', root: `bench-${Date.now()}` };
  let o = await fill(opfsWs, 'opfs');
  const m = await fill({ kind: 'memory' }, 'memory');
  const greps = { opfs: [], memory: [] };
  for (let k = 0; k < 5; k++) {
    for (const [tag, s] of [['opfs', o], ['memory', m]]) {
      const t0 = performance.now();
      const g = await s.grep('needle');
      greps[tag].push(ms(t0));
      if (!g.includes(`${n / 100} match`)) throw new Error(`grep found the wrong count: ${g.slice(-200)}`);
    }
  }
  out['opfs.grep'] = median(greps.opfs);
  out['memory.grep'] = median(greps.memory);
  await o.close();
  let t0 = performance.now();
  o = await createSession({ workspace: opfsWs });
  out['opfs.reopen'] = ms(t0);
  t0 = performance.now();
  await o.grep('needle');
  out['opfs.grepAfterReopen'] = ms(t0);
  await o.close();
  await m.close();

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

// The driver alone (workspace/opfs BenchmarkOPFS2000 in a worker) and the
// raw floor, in the same page.
async function driverBench(ctx, url) {
  const page = await ctx.newPage();
  await page.goto(`${url}/test/gotest.html?bin=/gotest/opfs.test.wasm&arg=-test.run=^$&arg=-test.bench=OPFS2000&arg=-test.benchtime=3x`);
  await page.waitForFunction(() => window.goTest.exit !== null, null, { timeout: 300_000 });
  const { out, exit } = await page.evaluate(() => window.goTest);
  if (exit !== 0) throw new Error(`driver benchmark failed:\n${out}`);
  const drv = {};
  for (const m of out.matchAll(/BenchmarkOPFS2000\/(\S+)\s+\d+\s+(\d+) ns\/op/g)) drv[m[1]] = Number(m[2]) / 1e6;
  // Renames are a few ms each: 100 of them per case.
  await page.goto(`${url}/test/gotest.html?bin=/gotest/opfs.test.wasm&arg=-test.run=^$&arg=-test.bench=OPFSRename&arg=-test.benchtime=100x`);
  await page.waitForFunction(() => window.goTest.exit !== null, null, { timeout: 300_000 });
  const ren = await page.evaluate(() => window.goTest);
  if (ren.exit !== 0) throw new Error(`rename benchmark failed:\n${ren.out}`);
  for (const m of ren.out.matchAll(/BenchmarkOPFSRename\/(\S+)\s+\d+\s+(\d+) ns\/op/g)) drv[`rename-${m[1]}`] = Number(m[2]) / 1e6;
  const raw = await page.evaluate((n) => new Promise((resolve, reject) => {
    const w = new Worker('/bench/opfs-raw.worker.js');
    w.onmessage = (e) => { resolve(e.data); w.terminate(); };
    w.onerror = (e) => reject(new Error(e.message));
    w.postMessage({ n, sizes: new Array(n).fill(550) });
  }), 2000);
  await page.close();
  return { drv, raw };
}

const profile = freshProfile();
const bin = mkdtempSync(join(tmpdir(), 'code-wasm-bench-'));
execFileSync('go', ['test', '-c', '-o', join(bin, 'opfs.test.wasm'), './workspace/opfs'], { cwd: repo, stdio: 'inherit', env: { ...process.env, GOOS: 'js', GOARCH: 'wasm' } });
const srv = await server([['/bench/', here], ['/gotest/', bin]]);
const ctx = await launch(profile);
try {
  const { drv, raw } = await driverBench(ctx, srv.url);
  const g = (x) => (x == null ? '–' : x >= 100 ? x.toFixed(0) : x >= 1 ? x.toFixed(1) : x.toFixed(2));
  console.log('the driver alone vs the raw OPFS floor, same page, 2,000 files of 550 B; ms for all 2,000');
  console.log('| operation | workspace/opfs driver | raw: one handle, flush per write | raw: one handle, one flush | raw: one OPFS file per file |');
  console.log('|---|---|---|---|---|');
  console.log(`| write 2,000 (each durable before it returns) | ${g(drv.write)} | ${g(raw.oneHandleWriteFlushEach)} | ${g(raw.oneHandleWrite)} | ${g(raw.filePerPayloadWrite)} |`);
  console.log(`| load 2,000 (PutFile: a session's initial files), one flush | ${g(drv['put-bulk'])} | – | ${g(raw.oneHandleWrite)} | – |`);
  console.log(`| read 2,000 (content cache) | ${g(drv['read-cached'])} | – | ${g(raw.oneHandleRead)} | ${g(raw.filePerPayloadRead)} |`);
  console.log(`| walk + read + search all 2,000 (grep's I/O), cached | ${g(drv['scan-all'])} | – | – | – |`);
  console.log(`| the same with the cache off (reads from the log) | ${g(drv['scan-all-uncached'])} | – | – | – |`);
  console.log(`| reopen: replay the 2,000-file log | ${g(drv.reopen)} | – | – | – |`);
  console.log(`| rename a directory of 2,000 files, the whole root (one rename, durable) | ${g(drv['rename-2000of2000'])} | – | – | – |`);
  console.log(`| rename a directory of 2,000 files in a root of 20,000 | ${g(drv['rename-2000of20000'])} | – | – | – |`);
  console.log(`| rename a directory of 100 files in a root of 20,000 | ${g(drv['rename-100of20000'])} | – | – | – |`);
  console.log('');
  const page = await ctx.newPage();
  await page.goto(`${srv.url}/test/blank.html`);
  const r = await page.evaluate(pageBench, N);
  const f = (x) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
  const per = (x) => `${((x / N) * 1000).toFixed(0)} µs/file`;
  console.log(`${N} files of 100–1,000 B in 20 dirs; ms (µs per file)`);
  const rows = [
    ['write 2,000 (one writeFile call each)', r['opfs.write'], r['memory.write']],
    ['read 2,000 (one readFile call each)', r['opfs.read'], r['memory.read']],
    ['grep all 2,000 (one call, median of 5, interleaved)', r['opfs.grep'], r['memory.grep']],
  ];
  console.log('through the package (page → worker → tool → driver), the same page as the raw floor below');
  console.log('| operation | OPFS workspace | memory workspace |');
  console.log('|---|---|---|');
  for (const [name, ...xs] of rows) console.log(`| ${name} | ${xs.map((x) => (x == null ? '–' : `${f(x)} (${per(x)})`)).join(' | ')} |`);
  console.log(`raw floor in this page: one handle + one flush ${f(r['raw.oneHandleWrite'])} ms, one handle + flush per write ${f(r['raw.oneHandleWriteFlushEach'])} ms, one OPFS file per file ${f(r['raw.filePerPayloadWrite'])} ms (write); reads ${f(r['raw.oneHandleRead'])} / ${f(r['raw.filePerPayloadRead'])} ms`);
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
  rmSync(bin, { recursive: true, force: true });
}
