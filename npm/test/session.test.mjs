// The session surface as users call it, against the package installed from
// its packed tarball (run-packed.mjs). Every method of API.md is exercised.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSession, CodeWasmError } from '@a3s-lab/code-wasm';

const files = {
  'src/main.rs': 'fn main() {\n    println!("PermissionPolicy");\n}\n',
  'src/lib.rs': 'pub struct PermissionPolicy;\n',
  'README.md': '# demo\n',
};

test('tool surface: toolNames, toolDefinitions, activeTools are synchronous and sorted', async () => {
  const s = await createSession({ workspace: { kind: 'memory', files } });
  const names = s.toolNames();
  assert.ok(Array.isArray(names));
  assert.deepEqual(names, [...names].sort());
  for (const t of ['read', 'write', 'edit', 'patch', 'ls', 'glob', 'grep']) assert.ok(names.includes(t), `${t} in ${names}`);
  for (const t of ['bash', 'git']) assert.ok(!names.includes(t), `${t} hidden on a memory workspace`);
  const defs = s.toolDefinitions();
  assert.deepEqual(defs.map((d) => d.name), names);
  for (const d of defs) {
    assert.equal(typeof d.description, 'string');
    assert.ok(d.description.length > 0, d.name);
    assert.equal(d.parameters.type, 'object', d.name);
  }
  assert.deepEqual(s.activeTools(), []);
  await s.close();
});

test('direct calls: tool, readFile, writeFile, editFile, patchFile, ls, glob, grep', async () => {
  const s = await createSession({ workspace: { kind: 'memory', files } });

  const raw = await s.tool('read', { file_path: 'README.md' });
  assert.equal(raw.name, 'read');
  assert.equal(raw.exitCode, 0);
  assert.match(raw.output, /1\t# demo/);
  assert.equal(typeof raw.metadataJson, 'string');
  assert.deepEqual(JSON.parse(raw.metadataJson).source_anchors, ['README.md']);

  const line2 = await s.readFile('src/main.rs', { offset: 1, limit: 1 });
  assert.ok(line2.startsWith('     2\t    println!("PermissionPolicy");\n'), line2);
  assert.doesNotMatch(line2, /fn main|^\s+3\t/m);

  const w = await s.writeFile('notes/todo.md', 'one\ntwo\n');
  assert.equal(w.exitCode, 0, w.output);
  assert.match(await s.readFile('notes/todo.md'), /2\ttwo/);

  const e = await s.editFile('notes/todo.md', 'two', 'three');
  assert.equal(e.exitCode, 0, e.output);
  assert.match(await s.readFile('notes/todo.md'), /2\tthree/);
  const eAll = await s.editFile('notes/todo.md', 'e', 'E', true);
  assert.equal(eAll.exitCode, 0, eAll.output);
  assert.match(await s.readFile('notes/todo.md'), /1\tonE\n\s+2\tthrEE/);

  const p = await s.patchFile('README.md', '--- a/README.md\n+++ b/README.md\n@@ -1,1 +1,2 @@\n # demo\n+patched\n');
  assert.equal(p.exitCode, 0, p.output);
  assert.match(await s.readFile('README.md'), /2\tpatched/);

  const ls = await s.ls();
  assert.equal(ls.exitCode, 0);
  assert.match(ls.output, /README\.md/);
  assert.match(ls.output, /src/);
  const lsSrc = await s.ls('src');
  assert.match(lsSrc.output, /main\.rs/);
  assert.doesNotMatch(lsSrc.output, /README/);

  const g = await s.glob('src/**/*.rs');
  assert.deepEqual([...g].sort(), ['src/lib.rs', 'src/main.rs']);
  assert.deepEqual(await s.glob('**/*.none'), []);

  const hits = await s.grep('PermissionPolicy');
  assert.equal(typeof hits, 'string');
  assert.match(hits, /src\/lib\.rs/);
  assert.match(hits, /src\/main\.rs/);
  await s.close();
});

test('a tool that ran and failed resolves with exitCode and errorKindJson; typed helpers reject TOOL_FAILED', async () => {
  const s = await createSession({ workspace: { kind: 'memory', files } });
  const r = await s.tool('read', { file_path: 'missing.txt' });
  assert.notEqual(r.exitCode, 0);
  assert.equal(JSON.parse(r.errorKindJson).type, 'not_found');

  const bad = await s.tool('read', { file_path: 'README.md', limit: 0 });
  assert.notEqual(bad.exitCode, 0, 'schema validation is a tool result');
  assert.equal(JSON.parse(bad.errorKindJson).type, 'invalid_argument');

  const ed = await s.editFile('README.md', 'not there', 'x');
  assert.notEqual(ed.exitCode, 0);
  assert.equal(await s.readFile('README.md'), '     1\t# demo\n', 'a failed edit changes nothing');

  await assert.rejects(s.readFile('missing.txt'), (e) => {
    assert.ok(e instanceof CodeWasmError);
    assert.ok(e instanceof Error);
    assert.equal(e.code, 'TOOL_FAILED');
    assert.equal(e.result.exitCode, 1);
    assert.equal(JSON.parse(e.result.errorKindJson).type, 'not_found');
    return true;
  });
  await s.close();
});

test('a direct call of a hidden tool (bash, git) rejects as not registered', async () => {
  const s = await createSession({});
  for (const name of ['bash', 'git']) {
    await assert.rejects(s.tool(name, { command: 'ls' }), (e) => e.code === 'TOOL_NOT_REGISTERED' && e.message.includes(name));
    await assert.rejects(s.governedTool(name, { command: 'ls' }), (e) => e.code === 'TOOL_NOT_REGISTERED');
  }
  await s.close();
});

test('bad call shapes reject with INVALID_CALL', async () => {
  const s = await createSession({});
  await assert.rejects(s.tool('', {}), (e) => e.code === 'INVALID_CALL');
  await assert.rejects(s.tool('read', [1, 2]), (e) => e.code === 'INVALID_CALL' && /object/.test(e.message));
  await assert.rejects(s.readFile('a', { signal: 'nope' }), (e) => e.code === 'INVALID_CALL' && /AbortSignal/.test(e.message));
  assert.throws(() => s.registerHook('', 'pre_tool_use'), (e) => e.code === 'INVALID_CALL' && /id/.test(e.message));
  assert.throws(() => s.registerHook('x', 'on_error'), (e) => e.code === 'INVALID_CALL' && /event/.test(e.message));
  assert.throws(() => s.setBudgetGuard({ checkBeforeTool: 'yes' }), (e) => e.code === 'INVALID_CALL' && /checkBeforeTool/.test(e.message));
  await s.close();
});

test('two sessions side by side keep separate workspaces', async () => {
  const [a, b] = await Promise.all([
    createSession({ workspace: { kind: 'memory', files: { 'x.txt': 'A\n' } } }),
    createSession({ workspace: { kind: 'memory', files: { 'x.txt': 'B\n' } } }),
  ]);
  await Promise.all([a.writeFile('only-a.txt', 'a'), b.writeFile('only-b.txt', 'b')]);
  assert.match(await a.readFile('x.txt'), /1\tA/);
  assert.match(await b.readFile('x.txt'), /1\tB/);
  assert.deepEqual(await a.glob('*.txt').then((g) => g.sort()), ['only-a.txt', 'x.txt']);
  assert.deepEqual(await b.glob('*.txt').then((g) => g.sort()), ['only-b.txt', 'x.txt']);
  await a.close();
  assert.ok(a.isClosed());
  assert.ok(!b.isClosed());
  assert.match(await b.readFile('only-b.txt'), /1\tb/, 'closing one leaves the other working');
  await b.close();
});
