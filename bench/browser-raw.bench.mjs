// Chromium's ready time with no DevTools client attached: browser.bench.mjs
// drives Chromium through Playwright, whose DevTools session slows every
// response body (a 10 MB code.wasm read 200-340 ms through it, 84-160 ms
// without, 2026-12-03), so its ratio carries the wasm's size twice. Here a
// plain `chromium --headless` loads pages that time themselves and report
// by fetch: the bare Go-wasm floor (bench/bare-floor.mjs) and
// createSession + first tool('read'), alternated, each page on another
// site than the one before (127.0.0.1 / localhost), so each gets a fresh
// renderer process (back-forward cache off).
//   node bench/browser-raw.bench.mjs            (needs make build; Debian's chromium)
//   RUNS=15 node bench/browser-raw.bench.mjs
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { serve } from '../web/serve.mjs';
import { buildBareFloor } from './bare-floor.mjs';

const RUNS = Number(process.env.RUNS || 9);
const tmp = buildBareFloor();
// Page i: even pages run the floor, odd ones the session; then the next.
writeFileSync(join(tmp, 'raw.html'), `<!doctype html><script type=module>
const i = Number(new URLSearchParams(location.search).get('i'));
let ms;
if (i % 2 === 0) {
  ms = await new Promise((resolve) => {
    const t0 = performance.now();
    const w = new Worker('/bare/worker.js');
    w.onmessage = () => { resolve(performance.now() - t0); w.terminate(); };
  });
} else {
  const t0 = performance.now();
  const { createSession } = await import('/npm/src/entry-browser.mjs');
  const s = await createSession({ workspace: { kind: 'memory', files: { 'a.txt': 'a\\n' } } });
  await s.tool('read', { file_path: 'a.txt' });
  ms = performance.now() - t0;
  await s.close();
}
await fetch('/report?' + new URLSearchParams({ i, ms }));
location.href = 'http://' + (i % 2 ? '127.0.0.1' : 'localhost') + ':' + location.port + '/bare/raw.html?i=' + (i + 1);
</script>`);
const srv = await serve({ port: 0, extra: [['/bare/', tmp]] });
const files = srv.listeners('request')[0];
srv.removeAllListeners('request');
const ready = { bare: [], session: [] };
let finish;
const done = new Promise((r) => { finish = r; });
srv.on('request', (req, res) => {
  if (!req.url.startsWith('/report?')) return files(req, res);
  const q = new URLSearchParams(req.url.slice('/report?'.length));
  const i = Number(q.get('i'));
  if (i >= 2) (i % 2 ? ready.session : ready.bare).push(Number(q.get('ms'))); // the first pair warms up
  res.end();
  if (i >= 2 * RUNS + 1) finish();
});
const profile = mkdtempSync(join(tmpdir(), 'code-wasm-chromium-'));
const chrome = spawn(process.env.CHROMIUM ?? '/usr/bin/chromium', [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--disable-features=BackForwardCache', `--user-data-dir=${profile}`,
  `http://127.0.0.1:${srv.address().port}/bare/raw.html?i=0`,
], { stdio: 'ignore', detached: true });
const timer = setTimeout(() => finish(new Error('no report for 120 s')), 120_000 + RUNS * 10_000);
let err;
try {
  err = await done;
} finally {
  clearTimeout(timer);
  try { process.kill(-chrome.pid, 'SIGKILL'); } catch { /* gone */ }
  await new Promise((r) => srv.close(r));
  await new Promise((r) => setTimeout(r, 300));
  rmSync(profile, { recursive: true, force: true, maxRetries: 5 });
  rmSync(tmp, { recursive: true, force: true });
}
if (err) throw err;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const s = median(ready.session), b = median(ready.bare);
console.log(`Chromium with no DevTools client, ${RUNS} pages each (median), load ${loadavg()[0].toFixed(1)}\n`);
console.log('| measure | session API | bare Go wasm in a Worker | ratio |');
console.log('|---|---:|---:|---:|');
console.log(`| ready (ms): createSession + first tool('read') vs the bare Worker's ready | ${s.toFixed(0)} | ${b.toFixed(0)} | ${(s / b).toFixed(2)}x |`);
console.log(`\nready (ms): session ${ready.session.map((x) => x.toFixed(0)).join(' ')}; bare ${ready.bare.map((x) => x.toFixed(0)).join(' ')}`);
