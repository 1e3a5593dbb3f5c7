import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSession } from '@a3s-lab/code-wasm';

test('a memory session lists its tools and reads what it wrote', async () => {
  const s = await createSession({ workspace: { kind: 'memory', files: { 'src/main.rs': 'fn main() {}\n' } } });
  const names = s.toolNames();
  assert.ok(names.includes('read') && names.includes('write'), names.join(','));
  assert.ok(!names.includes('bash') && !names.includes('git'));
  assert.match(await s.readFile('src/main.rs'), /^\s+1\tfn main\(\) \{\}$/m);
  const w = await s.writeFile('a/b.txt', 'hello\n');
  assert.equal(w.exitCode, 0);
  assert.match(await s.readFile('a/b.txt'), /1\thello/);
  await s.close();
});

test('a hidden tool is not registered', async () => {
  const s = await createSession({});
  await assert.rejects(s.tool('bash', { command: 'ls' }), (e) => e.code === 'TOOL_NOT_REGISTERED');
  await s.close();
});

test('unknown options are refused by name', async () => {
  await assert.rejects(createSession({ wrkspace: {} }), (e) => e.code === 'INVALID_OPTIONS' && /wrkspace/.test(e.message));
});
