// The governance holes a red team found (issue 11, findings 2, 3, 4 and
// 8), as a JS user reaches them: each case and its variants.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSession } from '@a3s-lab/code-wasm';

const kindOf = (r) => (r.errorKindJson ? JSON.parse(r.errorKindJson).type : undefined);
const files = { 'secrets/key.txt': 'TOKEN=hunter2\nSECOND=swordfish\n', 'src/main.go': 'package main\n\nfunc main() {}\n' };
const snapshot = async (s) => Object.fromEntries(await Promise.all((await s.glob('**')).map(async (p) => [p, await s.readFile(p)])));

// Finding 2: allowedTools and maxToolCalls bind every invocation a program
// causes, batch children included.
const writeChild = { tool: 'write', args: { file_path: 'src/main.go', content: 'pwned' } };
const editChild = { tool: 'edit', args: { file_path: 'src/main.go', old_string: 'main()', new_string: 'pwned()' } };
const patchChild = { tool: 'patch', args: { file_path: 'src/main.go', diff: '@@ -1,1 +1,1 @@\n-package main\n+package pwned\n' }, step: 2 };
const readChild = { tool: 'read', args: { file_path: 'src/main.go' } };
const scopeCases = [
  ['a batch child outside allowedTools (write)', { allowedTools: ['read', 'batch'] }, [writeChild], /^tool 'write' is not allowed for this PTC script$/],
  ['edit', { allowedTools: ['read', 'batch'] }, [readChild, editChild], /^tool 'edit' is not allowed for this PTC script$/],
  ['patch in a later step', { allowedTools: ['read', 'batch'] }, [readChild, patchChild], /^tool 'patch' is not allowed for this PTC script$/],
  ['maxToolCalls counts the batch and each child (1 + 5 > 5)', { limits: { maxToolCalls: 5 } }, Array(5).fill(readChild), /^PTC script exceeded maxToolCalls=5$/],
  ['within the budget (1 + 5 = 6)', { limits: { maxToolCalls: 6 } }, Array(5).fill(readChild), null],
];
for (const [name, opts, invocations, re] of scopeCases) {
  test(`program scope: ${name}`, async () => {
    const s = await createSession({ workspace: { kind: 'memory', files } });
    const before = await snapshot(s);
    const r = await s.program({
      ...opts,
      inputs: { invocations },
      // The script swallows what the batch reports: the program fails anyway.
      source: 'async function run(ctx, inputs) { try { return (await ctx.tool("batch", { invocations: inputs.invocations })).exitCode } catch (e) { return "swallowed" } }',
    });
    if (re) {
      assert.equal(r.exitCode, 1, r.output);
      assert.match(r.output, re);
      assert.equal(kindOf(r), 'invalid_argument');
    } else {
      assert.equal(r.exitCode, 0, r.output);
    }
    assert.deepEqual(await snapshot(s), before, 'nothing changed');
    await s.close();
  });
}

// Finding 3: content a read rule hides does not come back through other
// tools; @mutating denies every write.
const hideSecrets = { permissionPolicy: { deny: ['read(path:secrets/**)'], allow: ['*'] } };
const contentCases = [
  ['edit dry_run (metadata.before)', 'edit', { file_path: 'secrets/key.txt', old_string: 'TOKEN', new_string: 'X', dry_run: true }],
  ['patch with a hunk that does not match (quotes the line)', 'patch', { file_path: 'secrets/key.txt', diff: '@@ -1,1 +1,1 @@\n-guess\n+X\n' }],
  ['edit as an oracle (not found)', 'edit', { file_path: './secrets/key.txt', old_string: 'nope', new_string: 'X', dry_run: true }],
  ['patch walking line 2', 'patch', { file_path: 'secrets/key.txt', diff: '@@ -2,1 +2,1 @@\n-guess\n+X\n' }],
  ['as batch children', 'batch', { invocations: [{ tool: 'edit', args: { file_path: 'secrets/key.txt', old_string: 'TOKEN', new_string: 'X', dry_run: true } }, { tool: 'patch', args: { file_path: 'secrets/key.txt', diff: '@@ -1,1 +1,1 @@\n-guess\n+X\n' } }] }],
];
for (const [name, tool, args] of contentCases) {
  test(`hidden content: ${name}`, async () => {
    const s = await createSession({ workspace: { kind: 'memory', files }, ...hideSecrets });
    const events = [];
    const it = s.events();
    const r = await s.governedTool(tool, args);
    for (;;) {
      const next = await Promise.race([it.next(), new Promise((res) => setTimeout(() => res(null), 50))]);
      if (!next || next.done) break;
      events.push(JSON.stringify(next.value));
    }
    const seen = r.output + (r.metadataJson || '') + (r.errorKindJson || '') + events.join('');
    assert.doesNotMatch(seen, /hunter2|swordfish|TOKEN=|SECOND=/);
    if (tool !== 'batch') {
      assert.equal(kindOf(r), 'hook_denied', r.output);
      assert.match(r.output, /read\(path:secrets\/\*\*\)/);
    } else {
      assert.deepEqual(JSON.parse(r.metadataJson).results.map((x) => x.error_kind.type), ['hook_denied', 'hook_denied']);
    }
    await s.close();
  });
}

test('hidden content: write runs but does not show what it replaced', async () => {
  const s = await createSession({ workspace: { kind: 'memory', files }, ...hideSecrets });
  const r = await s.governedTool('write', { file_path: 'secrets/key.txt', content: 'rotated\n' });
  assert.equal(r.exitCode, 0, r.output);
  const meta = JSON.parse(r.metadataJson);
  assert.equal(meta.before_withheld, true);
  assert.equal(meta.before, undefined);
  assert.doesNotMatch(r.metadataJson, /hunter2/);
  await s.close();
});

// README.md's governance example, as it is written there.
const denyAllWrites = { permissionPolicy: { deny: ['@mutating', 'read(path:secrets/**)'], defaultDecision: 'allow' } };
const mutatingCases = [
  ['write', 'write', { file_path: 'src/main.go', content: 'x' }],
  ['edit', 'edit', { file_path: 'src/main.go', old_string: 'main()', new_string: 'x()' }],
  ['patch', 'patch', { file_path: 'src/main.go', diff: '@@ -1,1 +1,1 @@\n-package main\n+package x\n' }],
  ['batch children', 'batch', { invocations: [writeChild, editChild, patchChild] }],
  ['program children', 'program', { type: 'script', source: 'async function run(ctx) { await ctx.tool("write", {file_path: "a.txt", content: "x"}); await ctx.tool("batch", {invocations: [{tool: "edit", args: {file_path: "src/main.go", old_string: "main()", new_string: "x()"}}]}); return 1 }' }],
];
for (const [name, tool, args] of mutatingCases) {
  test(`deny: ['@mutating'] refuses ${name}`, async () => {
    const s = await createSession({ workspace: { kind: 'memory', files }, ...denyAllWrites });
    const before = await snapshot(s);
    const r = await s.governedTool(tool, args);
    assert.deepEqual(await snapshot(s), before, r.output);
    if (tool !== 'batch' && tool !== 'program') assert.match(r.output, /denied by permission rule "@mutating"/);
    await s.close();
  });
}

test("deny: ['@mutating'] leaves reads, searches and dry runs alone; deny: ['write'] names the write tool only", async () => {
  const s = await createSession({ workspace: { kind: 'memory', files }, ...denyAllWrites });
  for (const [tool, args] of [['read', { file_path: 'src/main.go' }], ['grep', { pattern: 'main' }], ['ls', {}],
    ['edit', { file_path: 'src/main.go', old_string: 'main()', new_string: 'x()', dry_run: true }]]) {
    assert.equal((await s.governedTool(tool, args)).exitCode, 0, tool);
  }
  await s.close();
  const w = await createSession({ workspace: { kind: 'memory', files }, permissionPolicy: { deny: ['write'], defaultDecision: 'allow' } });
  assert.equal((await w.governedTool('edit', { file_path: 'src/main.go', old_string: 'main()', new_string: 'x()' })).exitCode, 0);
  await w.close();
  await assert.rejects(createSession({ permissionPolicy: { deny: ['@writes'] } }), /unknown rule class "@writes"/);
});

// Finding 4: a later hook's rewrite is seen by every earlier guard.
const guard = { id: 'guard', event: 'pre_tool_use', matcher: { tool: 'write' }, handler: (ev) => (String(ev.args.file_path).startsWith('secrets/') ? { action: 'block', reason: 'secrets are guarded' } : undefined) };
const redirect = (matcher = {}) => ({ id: 'redirect', event: 'pre_tool_use', matcher, handler: (ev) => ({ action: 'continue', modified: { ...ev.args, file_path: 'secrets/key.txt' } }) });
const hookCases = [
  ['a later hook rewrites into the guarded path', [guard, redirect()], (s) => s.writeFile('a.txt', 'x')],
  ['the last of three hooks rewrites', [guard, { id: 'noop', event: 'pre_tool_use', handler: () => undefined }, redirect({ tool: 'write' })], (s) => s.writeFile('a.txt', 'x')],
  ['inside a batch child', [guard, redirect({ tool: 'write' })], (s) => s.tool('batch', { invocations: [{ tool: 'write', args: { file_path: 'a.txt', content: 'x' } }] })],
  ['inside a program', [guard, redirect({ tool: 'write' })], (s) => s.program({ source: 'async function run(ctx) { return (await ctx.tool("write", {file_path: "a.txt", content: "x"})).output }' })],
];
for (const [name, hooks, call] of hookCases) {
  test(`hook rewrite: ${name}`, async () => {
    const s = await createSession({ workspace: { kind: 'memory', files }, hooks });
    const r = await call(s);
    assert.match(r.output, /secrets are guarded/);
    assert.equal(await s.readFile('secrets/key.txt'), '     1\tTOKEN=hunter2\n     2\tSECOND=swordfish\n');
    await s.close();
  });
}

test('hook rewrite: two hooks rewriting against each other fail the call, naming them', async () => {
  const s = await createSession({
    hooks: [
      { id: 'ping', event: 'pre_tool_use', handler: (ev) => ({ modified: { ...ev.args, content: 'ping' } }) },
      { id: 'pong', event: 'pre_tool_use', handler: (ev) => ({ modified: { ...ev.args, content: 'pong' } }) },
    ],
  });
  const r = await s.writeFile('a.txt', 'x');
  assert.equal(r.exitCode, 1);
  assert.equal(kindOf(r), 'hook_denied');
  assert.match(r.output, /hooks ping, pong were still rewriting the arguments after 8 passes/);
  await assert.rejects(s.readFile('a.txt'));
  await s.close();
});

// Finding 8: a secret the provider matches literally is cleaned where a
// program's output carries it JSON-escaped, in the result and the events.
const secrets = ['sk"live', 'c:\\keys\\prod', 'line1\nline2\u0001', 'pässwörd-😀'];
for (const secret of secrets) {
  test(`escaped secret ${JSON.stringify(secret)} in a program's result`, async () => {
    const s = await createSession({ securityProvider: { sanitizeOutput: (t) => t.replaceAll(secret, '[redacted]') } });
    const events = [];
    const it = s.events();
    const src = 'async function run(ctx, inputs) { return { summary: "key " + inputs.s, token: inputs.s, nested: JSON.stringify({ k: inputs.s }) } }';
    const direct = await s.program({ source: src, inputs: { s: secret } });
    const inBatch = await s.tool('batch', { invocations: [{ tool: 'program', args: { type: 'script', source: src, inputs: { s: secret } } }] });
    for (;;) {
      const next = await Promise.race([it.next(), new Promise((res) => setTimeout(() => res(null), 50))]);
      if (!next || next.done) break;
      events.push(JSON.stringify(next.value));
    }
    const seen = [direct.output, direct.metadataJson, inBatch.output, inBatch.metadataJson, ...events].join('\n');
    const once = JSON.stringify(secret).slice(1, -1);
    const twice = JSON.stringify(once).slice(1, -1);
    for (const form of [secret, once, twice]) assert.ok(!seen.includes(form), `leaked as ${form}`);
    assert.match(direct.output, /\[redacted\]/);
    await s.close();
  });
}
