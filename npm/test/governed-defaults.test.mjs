// The table of npm/README.md "Permission and confirmation: the defaults":
// what governedTool('write') does under each option set, as a user sees it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSession } from '@a3s-lab/code-wasm';

const cases = [
  ['no options', {}, 1, /needs confirmation and no confirmation manager is configured/],
  ['an allow rule', { permissionPolicy: { allow: ['write'] } }, 0, /Created a\.txt/],
  ['the policy disabled', { permissionPolicy: { enabled: false } }, 0, /Created a\.txt/],
  ['a handler that approves', { confirmationHandler: () => true }, 0, /Created a\.txt/],
  ['a handler that refuses', { confirmationHandler: () => ({ approved: false, reason: 'not now' }) }, 1, /not now/],
];
for (const [name, options, exit, re] of cases) {
  test(`governedTool with ${name}`, async () => {
    const s = await createSession(options);
    const r = await s.governedTool('write', { file_path: 'a.txt', content: 'x' });
    assert.equal(r.exitCode, exit, r.output);
    assert.match(r.output, re);
    if (exit) assert.equal(JSON.parse(r.errorKindJson).type, 'hook_denied');
    assert.equal((await s.writeFile('b.txt', 'y')).exitCode, 0, 'a trusted helper runs under every option set');
    await s.close();
  });
}

test('governedTool with confirmationPolicy enabled waits in pendingConfirmations()', async () => {
  const s = await createSession({ confirmationPolicy: { enabled: true } });
  const p = s.governedTool('write', { file_path: 'a.txt', content: 'x' });
  let pend = [];
  for (let i = 0; i < 200 && pend.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 10));
    pend = s.pendingConfirmations();
  }
  assert.equal(pend.length, 1);
  assert.equal(pend[0].toolName, 'write');
  assert.equal(await s.confirmToolUse(pend[0].toolId, true), true);
  assert.equal((await p).exitCode, 0);
  assert.equal(await s.confirmToolUse(pend[0].toolId, true), false, 'answered once');
  await s.close();
});
