// Host tools registered from JS, through the npm package's Node entry.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSession } from '../../npm/src/entry-node.mjs';

test('registerTool: names, throws, nested calls under the policy', async () => {
  const s = await createSession({ permissionPolicy: { deny: ['write'], allow: ['*'] } });
  try {
    const handler = async (args) => ({ output: `user ${args.id}`, metadata: { id: args.id } });
    const parameters = { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] };
    assert.throws(() => s.registerTool({ name: 'read', parameters, handler }), { code: 'INVALID_CALL' });
    assert.throws(() => s.registerTool({ name: 'mcp__x__y', parameters, handler }), { code: 'INVALID_CALL' });
    assert.throws(() => s.registerTool({ name: 'bad', parameters: { type: 'objekt' }, handler }), /do not compile/);

    s.registerTool({ name: 'lookup_user', description: 'Looks a user up.', parameters, handler });
    assert.ok(s.toolNames().includes('lookup_user'));
    const r = await s.tool('lookup_user', { id: 7 });
    assert.equal(r.output, 'user 7');
    assert.deepEqual(JSON.parse(r.metadataJson), { id: 7 });
    const bad = await s.tool('lookup_user', { id: 'x' });
    assert.equal(bad.exitCode, 1);

    s.registerTool({ name: 'throws', handler: async () => { throw new Error('backend is down'); } });
    const t = await s.tool('throws', {});
    assert.equal(t.exitCode, 1);
    assert.match(t.output, /backend is down/);

    // A trusted call of the tool; its nested write is a plain nested call, denied.
    s.registerTool({ name: 'writer', handler: async (_, { invoke }) => {
      const w = await invoke('write', { file_path: 'a.txt', content: 'x' });
      const l = await invoke('ls', {});
      return `write ${w.exitCode} ls ${l.exitCode}`;
    } });
    assert.equal((await s.tool('writer', {})).output, 'write 1 ls 0');
    await assert.rejects(s.readFile('a.txt'), { code: 'TOOL_FAILED' });

    assert.equal(s.unregisterTool('lookup_user'), true);
    assert.equal(s.unregisterTool('read'), false);
    assert.ok(!s.toolNames().includes('lookup_user'));
  } finally {
    await s.close();
  }
});
