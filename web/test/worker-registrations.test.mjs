// The registrations only Go can answer (registerTool, unregisterTool,
// addSkill, removeSkill) and the reads the worker keeps fresh (mcpStatus,
// skillNames) through the browser build's Worker proxy in Chromium: each
// registration is a Promise that settles with Go's answer (an error naming
// what was wrong), and a host tool's handler runs on the page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { onBlankPage } from './browser.mjs';

test('the worker-backed api: host tools, skills and mcpStatus', { timeout: 120_000 }, async () => {
  await onBlankPage(async ({ page, errors }) => {
    const out = await page.evaluate(async () => {
      const { createSession } = await import('/npm/src/entry-browser.mjs');
      // An LLM is configured (never reached here): search_skills and Skill
      // are listed only on a session that has one.
      const s = await createSession({ workspace: { kind: 'memory' },
        llm: { provider: 'openai', baseURL: 'http://127.0.0.1:9/v1', apiKey: 'sk-none', model: 'm' } });
      const out = {};
      const err = async (p) => { try { await p; return 'settled'; } catch (e) { return { code: e.code, message: e.message }; } };
      out.mcpStatus = s.mcpStatus();
      const reg = s.registerTool({ name: 'lookup_user', description: 'Looks a user up.',
        parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
        handler: async (args) => `user ${args.id} is Ada` });
      out.registerIsPromise = typeof reg?.then === 'function';
      await reg;
      out.listed = s.toolNames().includes('lookup_user');
      const r = await s.tool('lookup_user', { id: '7' });
      out.call = { exitCode: r.exitCode, output: r.output };
      out.shadow = await err(s.registerTool({ name: 'read', description: 'x', parameters: { type: 'object' }, handler: () => 'no' }));
      out.readStill = (await s.tool('read', { file_path: 'nothing.txt' })).output;
      out.unregister = [await s.unregisterTool('lookup_user'), await s.unregisterTool('lookup_user')];
      out.listedAfter = s.toolNames().includes('lookup_user');

      out.skillsBefore = s.skillNames();
      await s.addSkill({ name: 'release-notes', description: 'Writes release notes.', allowedTools: ['read(*)'], content: 'Read CHANGELOG.md.' });
      out.skills = s.skillNames();
      out.skillTools = ['search_skills', 'Skill'].map((n) => s.toolNames().includes(n));
      out.badSkill = await err(s.addSkill({ name: '', description: 'x', content: 'y' }));
      out.removed = [await s.removeSkill('release-notes'), await s.removeSkill('release-notes')];
      out.skillsAfter = s.skillNames();
      await s.close();
      out.closed = await err(Promise.resolve().then(() => s.addSkill({ name: 'x', description: 'x', content: 'x' })));
      return out;
    });
    assert.deepEqual(out.mcpStatus, []);
    assert.equal(out.registerIsPromise, true);
    assert.equal(out.listed, true);
    assert.deepEqual(out.call, { exitCode: 0, output: 'user 7 is Ada' });
    assert.equal(out.shadow.code, 'INVALID_CALL', JSON.stringify(out.shadow));
    assert.match(out.shadow.message, /read/);
    assert.match(out.readStill, /nothing\.txt/);
    assert.deepEqual(out.unregister, [true, false]);
    assert.equal(out.listedAfter, false);
    assert.deepEqual(out.skillsBefore, []);
    assert.deepEqual(out.skills, ['release-notes']);
    assert.deepEqual(out.skillTools, [true, true]);
    assert.equal(out.badSkill.code, 'INVALID_CALL', JSON.stringify(out.badSkill));
    assert.deepEqual(out.removed, [true, false]);
    assert.deepEqual(out.skillsAfter, []);
    assert.equal(out.closed.code, 'SESSION_CLOSED', JSON.stringify(out.closed));
    assert.deepEqual(errors, []);
  });
});
