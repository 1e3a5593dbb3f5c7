// Test plumbing for ptc's native tests of the browser engine: the same
// stdio protocol as nodehost.mjs, but every host kind runs in a headless
// Chromium page on the real npm/src/ptc-browser.mjs (QuickJS in a Web
// Worker per script). In: {id, kind, payload} or {abort: id}. Out: {id, ok,
// result} or {id, ok: false, error}; first line out: {ready: true}.
import { createInterface } from 'node:readline';
import { launch, server, freshProfile, removeProfile } from '../../web/test/browser.mjs';

const out = (m) => process.stdout.write(JSON.stringify(m) + '\n');
const profile = freshProfile();
const srv = await server();
const ctx = await launch(profile);
const page = await ctx.newPage();
await page.goto(`${srv.url}/test/blank.html`);
await page.evaluate(async () => {
  const { browserPtcHostKinds } = await import('/npm/src/ptc-browser.mjs');
  const kinds = browserPtcHostKinds();
  const aborts = new Map();
  window.__ptcHost = async (id, kind, payload) => {
    const ac = new AbortController();
    aborts.set(id, ac);
    try {
      const fn = kinds[kind];
      if (!fn) throw new Error(`no handler for host kind "${kind}"`);
      const v = await fn(JSON.parse(payload), { signal: ac.signal });
      return { ok: true, result: JSON.stringify(v === undefined ? null : v) };
    } catch (e) {
      return { ok: false, error: String(e && e.message ? e.message : e) };
    } finally {
      aborts.delete(id);
    }
  };
  window.__ptcAbort = (id) => aborts.get(id)?.abort();
});
out({ ready: true });
let closing = false;
const shutdown = async () => {
  if (closing) return;
  closing = true;
  await ctx.close().catch(() => {});
  await srv.close();
  removeProfile(profile);
  process.exit(0);
};
createInterface({ input: process.stdin }).on('line', async (line) => {
  const m = JSON.parse(line);
  if (m.abort !== undefined) { page.evaluate((id) => window.__ptcAbort(id), m.abort).catch(() => {}); return; }
  try {
    const r = await page.evaluate(([id, kind, payload]) => window.__ptcHost(id, kind, payload), [m.id, m.kind, m.payload]);
    out({ id: m.id, ...r });
  } catch (e) {
    out({ id: m.id, ok: false, error: String(e && e.message ? e.message : e) });
  }
}).on('close', shutdown);
