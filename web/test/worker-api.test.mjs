// The page-side proxy of the browser build (npm/src/browser-proxy.mjs) in
// Chromium: what PROTOCOL.md promises must hold when the wasm is in a
// Worker. Hook handlers run on the page (forwarded host calls), an aborted
// call aborts the host call's signal, synchronous methods answer from the
// cache the worker keeps fresh (activeTools shows a running tool), events
// stream, and hook registration is in effect for the very next call.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { onBlankPage } from './browser.mjs';

test('the worker-backed api: hooks, abort, activeTools, events, unregister', { timeout: 90_000 }, async () => {
  await onBlankPage(async ({ page, errors }) => {
    const out = await page.evaluate(async () => {
      const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
      const { createSession } = await import('/npm/src/entry-browser.mjs');
      const out = {};
      // A directory workspace needs Node: refused here, saying so.
      try {
        await createSession({ workspace: { kind: 'directory', root: '/tmp' } });
        out.directory = 'created';
      } catch (e) {
        out.directory = { code: e.code, message: e.message };
      }
      const s = await createSession({ workspace: { kind: 'memory', files: { 'a.txt': 'alpha\n' } } });
      const events = s.events();

      // A hook registered synchronously blocks the very next call, from the page.
      s.registerHook('no-secrets', 'pre_tool_use', (p) =>
        p.toolName === 'write' && JSON.stringify(p.args).includes('secret') ? { action: 'block', reason: 'no secrets here' } : { action: 'continue' });
      const blocked = await s.tool('write', { file_path: 'secret.txt', content: 'x' });
      out.blocked = { exitCode: blocked.exitCode, kind: blocked.errorKindJson, output: blocked.output };
      out.written = (await s.writeFile('b.txt', 'beta\n')).exitCode;

      // activeTools, read on the page while the tool (active from execution
      // to its end) waits in its post-hook.
      s.registerHook('watch', 'post_tool_use', async (p) => {
        if (p.toolName !== 'ls') return { action: 'continue' };
        for (let i = 0; i < 3000 && !out.activeSeen; i++) {
          const a = s.activeTools();
          if (a.some((t) => t.name === 'ls')) out.activeSeen = a.map((t) => t.name);
          else await sleep(10);
        }
        return { action: 'continue' };
      });
      await s.ls();
      out.activeAfter = s.activeTools();
      out.unregister = [s.unregisterHook('watch'), s.unregisterHook('watch')];

      // Aborting a call aborts the signal of the host call it is waiting on
      // (aborted once the call waits in the hook, however long the busy
      // machine takes to get it there).
      let hookEntered = false;
      let hookAborted = false;
      s.registerHook('hang', 'pre_tool_use', (p, c) => {
        if (p.toolName !== 'glob') return { action: 'continue' };
        hookEntered = true;
        return new Promise((resolve) => c.signal.addEventListener('abort', () => { hookAborted = true; resolve({ action: 'continue' }); }));
      });
      const ac = new AbortController();
      const pending = s.glob('**/*', { signal: ac.signal });
      for (let i = 0; i < 3000 && !hookEntered; i++) await sleep(10);
      out.hookEntered = hookEntered;
      ac.abort();
      try { await pending; out.abort = 'resolved'; } catch (e) { out.abort = e.code; }
      for (let i = 0; i < 3000 && !hookAborted; i++) await sleep(10);
      out.hookAborted = hookAborted;

      // The event stream saw the write of b.txt end.
      const seen = [];
      for (let i = 0; i < 200; i++) {
        const r = await Promise.race([events.next(), sleep(10_000).then(() => ({ done: true }))]);
        if (r.done) break;
        seen.push(`${r.value.type}:${r.value.toolName ?? ''}`);
        if (seen.includes('tool_end:glob') || seen.length > 60) break;
      }
      out.events = seen;
      await events.return();
      await s.close();
      out.closedNames = (() => { try { s.toolNames(); return 'no error'; } catch (e) { return e.code; } })();
      return out;
    });
    assert.equal(out.directory.code, 'INVALID_OPTIONS', JSON.stringify(out.directory));
    assert.match(out.directory.message, /options\.workspace\.kind 'directory' needs Node\.js .*in browsers use 'opfs' or 'memory'/);
    assert.notEqual(out.blocked.exitCode, 0, 'the hook did not block the write');
    assert.match(out.blocked.kind ?? '', /hook_denied/);
    assert.equal(out.written, 0);
    assert.deepEqual(out.activeSeen, ['ls'], 'activeTools() on the page never showed the running ls');
    assert.deepEqual(out.activeAfter, []);
    assert.deepEqual(out.unregister, [true, false]);
    assert.equal(out.hookEntered, true, 'the glob never reached its pre_tool_use hook');
    assert.equal(out.abort, 'ABORTED');
    assert.equal(out.hookAborted, true, 'the host call did not see the abort');
    assert.ok(out.events.includes('tool_end:write'), `events: ${out.events}`);
    assert.equal(out.closedNames, 'SESSION_CLOSED');
    assert.deepEqual(errors, []);
  });
});
