// createSession refuses unknown keys and bad values, naming the key
// (shape checked in JS, values in Go), with code INVALID_OPTIONS.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSession } from '@a3s-lab/code-wasm';

const cases = [
  ['unknown key', { wrkspace: {} }, /"wrkspace"/],
  ['not an object', 'memory', /options must be a plain object/],
  ['array', [], /options must be a plain object/],
  ['unknown workspace key', { workspace: { kind: 'memory', fles: {} } }, /unknown key options\.workspace\.fles \(known: kind, files, root, sandbox, network\)/],
  ['unsupported workspace kind', { workspace: { kind: 'nfs', root: '/tmp' } }, /workspace\.kind "nfs"/],
  ['file content not a string', { workspace: { kind: 'memory', files: { a: 1 } } }, /files|string/],
  ['escaping path', { workspace: { kind: 'memory', files: { '../etc/passwd': 'x' } } }, /workspace\.files\["\.\.\/etc\/passwd"\]/],
  ['toolTimeoutMs type', { toolTimeoutMs: '5s' }, /toolTimeoutMs/],
  ['toolTimeoutMs negative', { toolTimeoutMs: -1 }, /toolTimeoutMs must be >= 0/],
  ['toolTimeoutMs infinite', { toolTimeoutMs: Infinity }, /toolTimeoutMs is Infinity, not JSON data/],
  ['toolTimeoutMs fractional', { toolTimeoutMs: 1.5 }, /options\.toolTimeoutMs must be a non-negative integer, got 1\.5/],
  ['permission default', { permissionPolicy: { defaultDecision: 'perhaps' } }, /permissionPolicy\.defaultDecision/],
  ['permission rule', { permissionPolicy: { deny: [''] } }, /permissionPolicy\.deny\[0\]/],
  ['confirmation action', { confirmationPolicy: { timeoutAction: 'ignore' } }, /confirmationPolicy\.timeoutAction/],
  ['confirmation handler not a function', { confirmationHandler: true }, /confirmationHandler must be a function/],
  ['hooks not an array', { hooks: {} }, /hooks must be an array/],
  ['hook handler not a function', { hooks: [{ id: 'a', event: 'pre_tool_use', handler: 'x' }] }, /hooks\[0\]\.handler must be a function/],
  ['hook event', { hooks: [{ id: 'a', event: 'pre_prompt', handler() {} }] }, /hooks\[0\]\.event/],
  ['hook unknown key', { hooks: [{ id: 'a', event: 'pre_tool_use', when: 1, handler() {} }] }, /unknown key options\.hooks\[0\]\.when/],
  ['budget not a function', { budgetGuard: { checkBeforeTool: 1 } }, /budgetGuard\.checkBeforeTool must be a function/],
  ['budget llm check', { budgetGuard: { checkBeforeTool() {}, checkBeforeLlm() {} } }, /checkBeforeLlm/],
  ['security unknown key', { securityProvider: { redact() {} } }, /securityProvider: unknown key "redact"/],
  ['function in data', { permissionPolicy: { allow: [() => 1] } }, /permissionPolicy\.allow\[0\] is a function, not JSON data/],
  ['class instance in data', { workspace: new Map() }, /workspace must be a plain object/],
];

for (const [name, options, re] of cases) {
  test(`createSession refuses ${name}`, async () => {
    await assert.rejects(createSession(options), (e) => {
      assert.equal(e.code, 'INVALID_OPTIONS', e.message);
      assert.match(e.message, re);
      return true;
    });
  });
}

test('createSession accepts every documented option', async () => {
  const s = await createSession({
    workspace: { kind: 'memory', files: { 'a.txt': 'a\n' } },
    toolTimeoutMs: 30000,
    permissionPolicy: { enabled: true, deny: ['write(path:secrets/**)'], allow: ['read'], ask: [], defaultDecision: 'allow' },
    confirmationPolicy: { enabled: true, defaultTimeoutMs: 30000, timeoutAction: 'reject' },
    confirmationHandler: () => true,
    hooks: [{ id: 'log', event: 'post_tool_use', matcher: { tool: '*' }, config: { timeoutMs: 1000 }, handler: () => undefined }],
    budgetGuard: { checkBeforeTool: () => true, timeoutMs: 1000 },
    securityProvider: { sanitizeOutput: (t) => t },
  });
  assert.match(await s.readFile('a.txt'), /1\ta/);
  await s.close();
});
