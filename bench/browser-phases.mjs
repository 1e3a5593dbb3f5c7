// Where a Chromium start goes: createSession + first tool('read') on a cold
// page, phases from performance marks in the page and the package's Worker
// (timeOrigin-absolute, printed relative to the page's t0).
//   RUNS=5 node bench/browser-phases.mjs
import { chromium } from 'playwright-core';
import { launch, server, freshProfile, removeProfile } from '../web/test/browser.mjs';

const RUNS = Number(process.env.RUNS || 5);
const srv = await server();
const profile = freshProfile();
// JS_FLAGS (diagnosis only): V8 flags for the browser, e.g. --no-wasm-lazy-compilation.
const ctx = process.env.JS_FLAGS
  ? await chromium.launchPersistentContext(profile, { executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu', `--js-flags=${process.env.JS_FLAGS}`] })
  : await launch(profile);
try {
  const one = async () => {
    const page = await ctx.newPage();
    try {
      await page.goto(`${srv.url}/test/blank.html`);
      const p = await page.evaluate(async () => {
        const abs = () => performance.timeOrigin + performance.now();
        const t0 = abs();
        const m = await import('/npm/src/entry-browser.mjs');
        const imported = abs();
        const s = await m.createSession({ workspace: { kind: 'memory', files: { 'a.txt': 'a\n' } } });
        const created = abs();
        await s.tool('read', { file_path: 'a.txt' });
        const read = abs();
        /** @type {any} */ (self).s = s;
        const marks = performance.getEntriesByType('mark').map((e) => [e.name.replace('code-wasm:', 'page:'), performance.timeOrigin + e.startTime]);
        return { t0, imported, created, read, marks };
      });
      const w = page.workers().find((x) => x.url().endsWith('/browser-worker.mjs'));
      const marks = await w.evaluate(() => performance.getEntriesByType('mark').map((e) => [e.name.replace('code-wasm:', ''), performance.timeOrigin + e.startTime]).concat([['worker-origin', performance.timeOrigin]]));
      await page.evaluate(() => /** @type {any} */ (self).s.close());
      const rows = [...p.marks, ['page:imported', p.imported], ...marks.map(([n, t]) => [`w:${n}`, t]), ['page:created', p.created], ['page:read', p.read]];
      rows.sort((a, b) => a[1] - b[1]);
      return rows.map(([n, t]) => `${n} ${(t - p.t0).toFixed(0)}`).join(' | ');
    } finally {
      await page.close();
    }
  };
  await one();
  for (let i = 0; i < RUNS; i++) console.log(await one());
} finally {
  await ctx.close();
  await srv.close();
  removeProfile(profile);
}
