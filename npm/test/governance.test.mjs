// JS functions as governance: hooks, budget guards, confirmation handlers
// and security providers, sync or async; a throw or silence is a deny.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSession } from '@a3s-lab/code-wasm';

const kindOf = (r) => (r.errorKindJson ? JSON.parse(r.errorKindJson).type : undefined);
const never = () => new Promise(() => {});

// The handlers that answer do so at once; the 2 s timeouts below leave a
// loaded machine room to carry the answer back (only 'never settles' waits
// them out).
const hookCases = [
  ['sync block', () => ({ action: 'block', reason: 'sync says no' }), 1, /sync says no/],
  ['async block', async () => ({ action: 'block', reason: 'async says no' }), 1, /async says no/],
  ['sync continue (undefined)', () => undefined, 0, null],
  ['async continue', async () => ({ action: 'continue' }), 0, null],
  ['throws', () => { throw new Error('hook exploded'); }, 1, /hook exploded/],
  ['rejects', async () => { throw new Error('async explosion'); }, 1, /async explosion/],
  ['never settles', never, 1, /did not answer/],
  ['answers nonsense', () => ({ action: 'perhaps' }), 1, /perhaps/],
];
for (const [name, handler, exit, re] of hookCases) {
  test(`pre_tool_use hook: ${name}`, async () => {
    const s = await createSession({ hooks: [{ id: 'h', event: 'pre_tool_use', matcher: { tool: 'write' }, config: { timeoutMs: 2000 }, handler }] });
    const r = await s.writeFile('a.txt', 'x');
    assert.equal(r.exitCode, exit, r.output);
    if (re) {
      assert.equal(kindOf(r), 'hook_denied');
      assert.match(r.output, re);
      await assert.rejects(s.readFile('a.txt'), (e) => e.code === 'TOOL_FAILED', 'a denied write changes nothing');
    } else {
      assert.match(await s.readFile('a.txt'), /1\tx/);
    }
    await s.close();
  });
}

test('hooks see the call, can rewrite arguments, and post hooks see the result', async () => {
  const seen = [];
  const s = await createSession({
    hooks: [
      { id: 'rewrite', event: 'pre_tool_use', matcher: { tool: 'write', pathPattern: 'drafts/**' },
        handler: (ev) => { seen.push(['pre', ev.toolName, ev.args.file_path, ev.origin]); return { action: 'continue', modified: { ...ev.args, content: 'rewritten\n' } }; } },
      { id: 'after', event: 'post_tool_use', handler: async (ev) => { seen.push(['post', ev.toolName, ev.exitCode]); } },
    ],
  });
  await s.writeFile('drafts/a.md', 'original\n');
  await s.writeFile('final/b.md', 'kept\n');
  assert.match(await s.readFile('drafts/a.md'), /1\trewritten/);
  assert.match(await s.readFile('final/b.md'), /1\tkept/);
  // A rewrite runs the chain again until a pass changes nothing: the
  // rewriting hook is asked a second time, sees its own rewrite, and
  // returns it unchanged (compared as JSON data).
  const pre = ['pre', 'write', 'drafts/a.md', 'host_direct_trusted'];
  assert.deepEqual(seen.filter((x) => x[0] === 'pre'), [pre, pre]);
  assert.deepEqual(seen.filter((x) => x[0] === 'post' && x[1] === 'write'), [['post', 'write', 0], ['post', 'write', 0]]);
  await s.close();
});

test('registerHook / unregisterHook at run time', async () => {
  const s = await createSession({});
  s.registerHook('deny-md', 'pre_tool_use', { pathPattern: '**/*.md' }, { timeoutMs: 1000 }, () => ({ action: 'block', reason: 'no markdown' }));
  assert.match((await s.writeFile('x.md', 'x')).output, /no markdown/);
  assert.equal((await s.writeFile('x.txt', 'x')).exitCode, 0);
  // A handler passed in the matcher position works too; the same id replaces.
  s.registerHook('deny-md', 'pre_tool_use', async () => ({ action: 'block', reason: 'replaced' }));
  assert.match((await s.writeFile('y.txt', 'x')).output, /replaced/);
  assert.equal(s.unregisterHook('deny-md'), true);
  assert.equal(s.unregisterHook('deny-md'), false);
  assert.equal((await s.writeFile('x.md', 'x')).exitCode, 0);
  await s.close();
});

const budgetCases = [
  ['sync true', () => true, 0],
  ['async allow', async () => ({ allow: true }), 0],
  ['sync false', () => false, 1],
  ['deny with reason', () => ({ allow: false, reason: 'over budget' }), 1],
  ['hard threshold', () => ({ action: 'hard', resource: 'tool_calls', consumed: 10, limit: 10 }), 1],
  ['soft threshold continues', () => ({ action: 'soft', resource: 'tool_calls', consumed: 8, limit: 10 }), 0],
  ['undefined fails closed', () => undefined, 1],
  ['throws', () => { throw new Error('guard broke'); }, 1],
  ['never settles', never, 1],
];
for (const [name, checkBeforeTool, exit] of budgetCases) {
  test(`budget guard: ${name}`, async () => {
    const calls = [];
    const s = await createSession({ budgetGuard: { checkBeforeTool: (req, ctx) => { calls.push(req); return checkBeforeTool(req, ctx); }, timeoutMs: 2000 } });
    const r = await s.writeFile('a.txt', 'x');
    assert.equal(r.exitCode, exit, r.output);
    assert.equal(calls[0].toolName, 'write');
    assert.equal(calls[0].check, 'checkBeforeTool');
    if (exit) await assert.rejects(s.readFile('a.txt'), (e) => e.code === 'TOOL_FAILED' || e.code === undefined);
    await s.close();
  });
}

test('setBudgetGuard at run time, and removing it', async () => {
  const s = await createSession({});
  s.setBudgetGuard({ checkBeforeTool: async () => false, timeoutMs: 1000 });
  assert.equal((await s.writeFile('a.txt', 'x')).exitCode, 1);
  s.setBudgetGuard(null);
  assert.equal((await s.writeFile('a.txt', 'x')).exitCode, 0);
  await s.close();
});

test('permission policy binds governedTool, not tool', async () => {
  const s = await createSession({ permissionPolicy: { deny: ['write(path:secrets/**)'], defaultDecision: 'allow' } });
  const denied = await s.governedTool('write', { file_path: 'secrets/key', content: 'x' });
  assert.equal(denied.exitCode, 1);
  assert.equal(kindOf(denied), 'hook_denied');
  assert.equal((await s.governedTool('write', { file_path: 'open/key', content: 'x' })).exitCode, 0);
  assert.equal((await s.tool('write', { file_path: 'secrets/key', content: 'x' })).exitCode, 0, 'trusted host calls skip permission');
  await s.close();
});

const confirmCases = [
  ['sync approve', () => true, 0],
  ['async approve object', async () => ({ approved: true }), 0],
  ['reject with reason', () => ({ approved: false, reason: 'not now' }), 1],
  ['throws', () => { throw new Error('ui crashed'); }, 1],
  ['answers nonsense', () => 'sure', 1],
];
for (const [name, handler, exit] of confirmCases) {
  test(`confirmation handler: ${name}`, async () => {
    const asked = [];
    const s = await createSession({
      permissionPolicy: { ask: ['write'] },
      confirmationHandler: (req, ctx) => { asked.push(req); return handler(req, ctx); },
    });
    const r = await s.governedTool('write', { file_path: 'a.txt', content: 'x' });
    assert.equal(r.exitCode, exit, r.output);
    assert.equal(asked.length, 1);
    assert.equal(asked[0].toolName, 'write');
    assert.equal(asked[0].args.file_path, 'a.txt');
    assert.ok(asked[0].timeoutMs > 0);
    await s.close();
  });
}

test('confirmation handler that never settles is denied at the policy timeout', async () => {
  const s = await createSession({ permissionPolicy: { ask: ['write'] }, confirmationPolicy: { defaultTimeoutMs: 150 }, confirmationHandler: never });
  const r = await s.governedTool('write', { file_path: 'a.txt', content: 'x' });
  assert.equal(r.exitCode, 1, r.output);
  await assert.rejects(s.readFile('a.txt'), (e) => e.code === 'TOOL_FAILED');
  await s.close();
});

test('pendingConfirmations and confirmToolUse (no handler: the kernel keeps the list)', async () => {
  const s = await createSession({ permissionPolicy: { ask: ['write'] }, confirmationPolicy: { enabled: true, defaultTimeoutMs: 60000 } });
  assert.deepEqual(s.pendingConfirmations(), []);
  const events = s.events();
  const approved = s.governedTool('write', { file_path: 'yes.txt', content: 'y' });
  const rejected = s.governedTool('write', { file_path: 'no.txt', content: 'n' });
  let pending = [];
  while (pending.length < 2) {
    await new Promise((r) => setTimeout(r, 5));
    pending = s.pendingConfirmations();
  }
  for (const p of pending) {
    assert.equal(p.toolName, 'write');
    assert.ok(p.remainingMs > 0 && p.remainingMs <= 60000, String(p.remainingMs));
    assert.equal(typeof p.toolId, 'string');
  }
  const byPath = Object.fromEntries(pending.map((p) => [p.args.file_path, p.toolId]));
  assert.equal(await s.confirmToolUse('no-such-id', true), false);
  assert.equal(await s.confirmToolUse(byPath['yes.txt'], true), true);
  assert.equal(await s.confirmToolUse(byPath['no.txt'], false, 'not that one'), true);
  assert.equal((await approved).exitCode, 0);
  const r = await rejected;
  assert.equal(r.exitCode, 1);
  assert.match(r.output, /not that one/);
  assert.deepEqual(s.pendingConfirmations(), []);
  const types = [];
  for (let i = 0; i < 40 && !types.includes('confirmation_received'); i++) types.push((await events.next()).value.type);
  assert.ok(types.includes('confirmation_required'), types.join());
  await s.close();
});

const securityCases = [
  ['sync redaction', (t) => t.replaceAll('hunter2', '[redacted]'), /\[redacted\]/],
  ['async {text}', async (t) => ({ text: t.replaceAll('hunter2', '***') }), /\*\*\*/],
  ['throws: withheld', () => { throw new Error('scanner down'); }, /withheld/],
  ['never settles: withheld', never, /withheld/],
];
for (const [name, sanitizeOutput, re] of securityCases) {
  // A provider that never settles costs one hook timeout (5 s) per call, not one per part.
  test(`security provider: ${name}`, { timeout: 10000 }, async () => {
    const s = await createSession({ workspace: { kind: 'memory', files: { '.env': 'PASSWORD=hunter2\n' } }, securityProvider: { sanitizeOutput } });
    const r = await s.tool('read', { file_path: '.env' });
    assert.doesNotMatch(r.output, /hunter2/);
    assert.match(r.output, re);
    await s.close();
  });
}
