// Delegation through the package in Node (js/wasm) against the scripted
// provider server over real HTTP: session.tasks runs explore children
// concurrently, each offered only its policy's tools; a hung child is cut
// by timeout_ms; a background task's result is read later and closing the
// session cancels one still running. run-packed.mjs sets LLMTEST_URL.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSession } from '@a3s-lab/code-wasm';

const server = process.env.LLMTEST_URL;

async function load(replies) {
  assert.ok(server, 'LLMTEST_URL is not set: run through npm/test/run-packed.mjs (it starts the scripted server)');
  const r = await fetch(`${server}/scripts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ provider: 'openai', replies }) });
  assert.equal(r.status, 200);
  return r.json();
}
async function log(id, disconnects = 0) {
  const r = await fetch(`${server}/scripts/${id}/log?disconnects=${disconnects}&waitMs=5000`);
  return r.json();
}
const text = (s, delayMs = 0) => ({ delayMs, events: [{ text: s }, { finish: { stop: 'stop', usage: { promptTokens: 50, completionTokens: 5, totalTokens: 55 } } }] });
const stall = { end: 'stall' };

async function session(replies, options = {}) {
  const script = await load(replies);
  const s = await createSession({
    workspace: { kind: 'memory', files: { 'a.txt': 'alpha\n' } },
    llm: { provider: 'openai', baseURL: script.baseURL, apiKey: 'sk-test', model: 'model-test', maxRetries: 0 },
    permissionPolicy: { defaultDecision: 'allow' },
    ...options,
  });
  return { s, script };
}
const explore = (p) => ({ agent: 'explore', description: `look ${p}`, prompt: p });
// warm runs one child first, so the timings below are the session's steady
// state rather than the wasm's first pass over each code path.
async function warm(s) {
  assert.equal((await s.task(explore('warm up'))).exitCode, 0);
}

test('tasks: three explore children overlap, each offered only its tools; results in order', async () => {
  const { s, script } = await session([text('warm'), text('found', 600)]);
  try {
    await warm(s);
    const ev = s.events();
    const res = await s.tasks([explore('one'), explore('two'), explore('three')]);
    assert.equal(res.exitCode, 0, res.output);
    const meta = JSON.parse(res.metadataJson);
    assert.equal(meta.results.length, 3);
    assert.deepEqual(meta.results.map((r) => r.success), [true, true, true]);
    // Each child's subagent_start, its turn_completed progress, its end.
    const sub = [];
    for (;;) {
      const { value } = await ev.next();
      if (value.type.startsWith('subagent_')) sub.push(`${value.type} ${value.payload.task_id}${value.payload.status ? ' ' + value.payload.status : ''}`);
      if (value.type === 'tool_end' && value.payload.name === 'task') break;
    }
    await ev.return();
    for (const r of meta.results) {
      assert.deepEqual(sub.filter((l) => l.split(' ')[1] === r.task_id).map((l) => l.split(' ').filter((_, i) => i !== 1).join(' ')),
        ['subagent_start', 'subagent_progress turn_completed', 'subagent_end'], sub.join('\n'));
    }
    const l = await log(script.id);
    l.requests.shift();
    assert.equal(l.requests.length, 3);
    const at = l.requests.map((r) => r.atMs);
    assert.ok(Math.max(...at) - Math.min(...at) < 600, `child requests did not overlap: ${at}`);
    for (const r of l.requests) {
      const names = r.body.tools.map((t) => t.function.name).sort();
      assert.deepEqual(names, ['glob', 'grep', 'ls', 'read', 'web_fetch']);
    }
  } finally {
    await s.close();
  }
});

test('parallel_task: a hung child is failed after timeout_ms and its connection closed', async () => {
  const { s, script } = await session([text('warm'), text('a'), text('b'), stall]);
  try {
    await warm(s);
    const t0 = Date.now();
    const res = await s.tool('parallel_task', { tasks: [explore('1'), explore('2'), explore('3')], timeout_ms: 3000, allow_partial_failure: true });
    // The two answering children get 3 s on a loaded machine; the hung
    // child alone would hold the call for ever, so the bound only tells
    // "timed out" from "hung".
    assert.ok(Date.now() - t0 < 15_000, `took ${Date.now() - t0} ms`);
    const meta = JSON.parse(res.metadataJson);
    assert.equal(meta.success_count, 2);
    assert.equal(meta.timed_out, true);
    assert.equal((await log(script.id, 1)).disconnects, 1);
  } finally {
    await s.close();
  }
});

test('background: the result is read after the call returned; close cancels one still running', async () => {
  const { s } = await session([text('later', 100)]);
  const res = await s.task({ ...explore('bg'), background: true });
  const [id] = JSON.parse(res.metadataJson).task_ids;
  const done = await s.taskResult(id, { wait: true });
  assert.equal(done.done, true);
  assert.equal(done.result.output, 'later');
  await s.close();

  const { s: s2, script } = await session([stall]);
  const started = await s2.task({ ...explore('hang'), background: true });
  const [id2] = JSON.parse(started.metadataJson).task_ids;
  for (let i = 0; i < 200 && ((await log(script.id)).requests ?? []).length < 1; i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal((await s2.taskResult(id2)).done, false);
  const t0 = Date.now();
  await s2.close();
  assert.ok(Date.now() - t0 < 10_000, `close took ${Date.now() - t0} ms`); // the child stalls for ever
  assert.equal((await log(script.id, 1)).disconnects, 1);
});

test('skills: listed only while loaded; a read(*) skill is denied write', async () => {
  const call = (id, name, args) => ({ events: [{ tool: { index: 0, id, name } }, { args: { index: 0, fragment: JSON.stringify(args) } },
    { finish: { stop: 'tool_use', usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 } } }] });
  const { s } = await session([call('call_w', 'write', { file_path: 'out.txt', content: 'x' }), text('done')],
    {});
  try {
    assert.ok(!s.toolNames().includes('Skill'));
    s.addSkill({ name: 'reader', description: 'Reads', allowedTools: ['read(*)'], content: 'Read a.txt.' });
    assert.deepEqual(s.skillNames(), ['reader']);
    assert.ok(s.toolNames().includes('Skill') && s.toolNames().includes('search_skills'));
    const ev = s.events();
    const res = await s.tool('Skill', { skill_name: 'reader' });
    assert.equal(res.exitCode, 0, res.output);
    const denied = [];
    for (;;) {
      const { value } = await ev.next();
      if (value.type === 'permission_denied') denied.push(value.payload.tool_name);
      if (value.type === 'tool_end' && value.payload.name === 'Skill') break;
    }
    await ev.return();
    assert.deepEqual(denied, ['write']);
    await assert.rejects(s.readText('out.txt'));
    assert.throws(() => s.addSkill({ name: 'bad name' }), (e) => e.code === 'INVALID_CALL');
    assert.equal(s.removeSkill('reader'), true);
    assert.ok(!s.toolNames().includes('Skill'));
  } finally {
    await s.close();
  }
});
