// Two tabs on one OPFS root (README "two tabs on one root"): the second
// tab's createSession is refused while the first holds the root and
// nothing is written; once the first closes its session, the second opens
// it and sees the first tab's writes. Different roots never conflict.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, server, freshProfile, removeProfile, watch } from './browser.mjs';

const open = (page, root) => page.evaluate(async (root) => {
  const { createSession } = await import('/npm/src/entry-browser.mjs');
  try {
    window.s = await createSession({ workspace: { kind: 'opfs', root } });
    return 'opened';
  } catch (e) {
    return `${e.name}/${e.code}: ${e.message}`;
  }
}, root);

test('two tabs on one OPFS root: the second is refused until the first closes', { timeout: 90_000 }, async () => {
  const profile = freshProfile();
  const srv = await server();
  const ctx = await launch(profile);
  try {
    const [a, b] = [await ctx.newPage(), await ctx.newPage()];
    const errors = [...watch(a), ...watch(b)];
    await a.goto(`${srv.url}/test/blank.html`);
    await b.goto(`${srv.url}/test/blank.html`);

    assert.equal(await open(a, 'shared'), 'opened');
    assert.equal(await a.evaluate(async () => (await window.s.writeFile('from-a.txt', 'tab a\n')).exitCode), 0);

    const refused = await open(b, 'shared');
    assert.match(refused, /^CodeWasmError\/WORKSPACE_BUSY: createSession: the OPFS root "shared" is open in another tab or worker/);
    assert.equal(await open(b, 'other-root'), 'opened', 'a different root must open while "shared" is held');
    await b.evaluate(() => window.s.close());

    await a.evaluate(() => window.s.close());
    assert.equal(await open(b, 'shared'), 'opened');
    const seen = await b.evaluate(() => window.s.readFile('from-a.txt'));
    assert.match(seen, /tab a/);
    // Now tab a is the one refused.
    assert.match(await open(a, 'shared'), /WORKSPACE_BUSY: .*open in another tab or worker/);
    assert.deepEqual(errors, []);
  } finally {
    await ctx.close();
    await srv.close();
    removeProfile(profile);
  }
});
