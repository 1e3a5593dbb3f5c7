// Crash safety of OPFS workspaces: a page streams overwrites of a set of
// files through the package (worker + OPFS driver); the test SIGKILLs the
// browser mid-stream, reopens the same profile and checks that every file
// is whole (one generation, every line, its end marker) and no older than
// the last write whose call had resolved.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, server, freshProfile, removeProfile, chromiumPids, killTree } from './browser.mjs';

const FILES = 8;

// The page-side writer and checker, as strings evaluated in the page.
const content = (g, i) => {
  const n = 40 + ((g * 7 + i) % 60); // lines vary, so sizes differ between generations
  const lines = [];
  for (let k = 0; k < n; k++) lines.push(`g=${g} f=${i} line=${k} `.padEnd(120, String.fromCharCode(97 + (g % 26))));
  lines.push(`end g=${g} lines=${n}`);
  return lines.join('\n') + '\n';
};

test('a browser killed mid-stream of writes leaves each file whole-old or whole-new, and keeps resolved writes', { timeout: 120_000 }, async () => {
  const profile = freshProfile();
  const srv = await server();
  let ctx;
  try {
    ctx = await launch(profile);
    const acked = new Array(FILES).fill(-1);
    let total = 0;
    const page = await ctx.newPage();
    await page.exposeFunction('ack', (i, g) => { acked[i] = Math.max(acked[i], g); total++; });
    await page.goto(`${srv.url}/test/blank.html`);
    await page.evaluate(async ([files, src]) => {
      const content = eval(src);
      const { createSession } = await import('/npm/src/entry-browser.mjs');
      const s = await createSession({ workspace: { kind: 'opfs', root: 'crash' } });
      (async () => {
        for (let g = 0; ; g++) {
          for (let i = 0; i < files; i++) {
            const r = await s.writeFile(`dir/f${i}.txt`, content(g, i));
            if (r.exitCode !== 0) throw new Error(r.output);
            await window.ack(i, g);
          }
        }
      })();
    }, [FILES, content.toString()]);
    // Let a few hundred writes resolve, then kill the browser outright.
    const t0 = Date.now();
    while (total < 300 && Date.now() - t0 < 60_000) await new Promise((r) => setTimeout(r, 20));
    assert.ok(total >= 300, `only ${total} writes resolved in 60 s`);
    const pids = chromiumPids(profile);
    assert.ok(pids.length > 0, 'no chromium process found for the profile');
    for (const pid of pids) await killTree(pid);
    const ackedAtKill = [...acked];
    await ctx.close().catch(() => {});

    ctx = await launch(profile);
    const page2 = await ctx.newPage();
    await page2.goto(`${srv.url}/test/blank.html`);
    const files = await page2.evaluate(async (n) => {
      const { createSession } = await import('/npm/src/entry-browser.mjs');
      const s = await createSession({ workspace: { kind: 'opfs', root: 'crash' } });
      const out = [];
      for (let i = 0; i < n; i++) {
        const r = await s.tool('read', { file_path: `dir/f${i}.txt`, limit: 2000 });
        out.push(r.output);
      }
      return out;
    }, FILES);
    for (let i = 0; i < FILES; i++) {
      // Strip read's line numbers ("     1\t").
      const text = files[i].split('\n').filter((l) => /^\s*\d+\t/.test(l)).map((l) => l.replace(/^\s*\d+\t/, '')).join('\n') + '\n';
      const m = /^g=(\d+) /.exec(text);
      assert.ok(m, `dir/f${i}.txt does not start with a generation line:\n${JSON.stringify(files[i].slice(0, 400))}`);
      const g = Number(m[1]);
      assert.equal(text, content(g, i), `dir/f${i}.txt is not a whole generation ${g}`);
      assert.ok(g >= ackedAtKill[i], `dir/f${i}.txt is generation ${g}, older than the resolved write of generation ${ackedAtKill[i]}`);
      assert.ok(g <= ackedAtKill[i] + 1, `dir/f${i}.txt is generation ${g}, newer than any write started`);
    }
  } finally {
    await ctx?.close().catch(() => {});
    await srv.close();
    removeProfile(profile);
  }
});
