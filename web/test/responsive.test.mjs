// The page's main thread keeps running while a long tool call runs: the
// package's browser entry puts the wasm in a dedicated Worker, so page
// timers fire during a grep over thousands of files, and the Go runtime is
// not on the page at all. (How long the page would stall otherwise is a
// benchmark: bench/opfs.bench.mjs.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { onBlankPage } from './browser.mjs';

test('page timers keep firing during a grep over 3,000 files', { timeout: 90_000 }, async () => {
  await onBlankPage(async ({ page, errors }) => {
    const r = await page.evaluate(async () => {
      const { createSession } = await import('/npm/src/entry-browser.mjs');
      const files = {};
      for (let i = 0; i < 3000; i++) files[`d${i % 30}/f${i}.txt`] = `${i} `.padEnd(8191, 'lorem ipsum dolor ') + '\n';
      const s = await createSession({ workspace: { kind: 'memory', files } });
      let ticks = 0, running = true;
      const tick = () => { ticks++; if (running) setTimeout(tick, 0); };
      setTimeout(tick, 0);
      const out = await s.grep('[q]uux\\d{3}|lorem ipsum dolor lorem ipsum dolor');
      running = false;
      return { ticks, goOnPage: typeof globalThis.Go, names: s.toolNames(), matched: /3000 file/.test(out) || out.length > 0 };
    });
    assert.equal(r.goOnPage, 'undefined', 'the Go runtime was started on the page, not in the worker');
    assert.ok(r.ticks >= 1, `no page timer fired during the grep (ticks=${r.ticks})`);
    assert.ok(r.names.includes('grep'));
    assert.ok(r.matched);
    assert.deepEqual(errors, []);
  });
});
