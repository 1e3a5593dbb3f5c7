// The agent loop through the package in Node against the scripted provider
// server (llm/llmtest) over real HTTP, in both wire formats: the wasm's
// own clients (fetch), the server validating every request as the real
// APIs do. run-packed.mjs starts the server's helper binary and sets
// LLMTEST_URL.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSession } from '@a3s-lab/code-wasm';

const server = process.env.LLMTEST_URL;
const providers = ['openai', 'anthropic'];
const files = { 'a.txt': 'alpha\n', 'b.txt': 'beta\n', 'c.txt': 'gamma\n' };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function load(provider, replies) {
  assert.ok(server, 'LLMTEST_URL is not set: run through npm/test/run-packed.mjs (it starts the scripted server)');
  const r = await fetch(`${server}/scripts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ provider, replies }) });
  assert.equal(r.status, 200);
  return r.json();
}
async function log(id, disconnects = 0) {
  const r = await fetch(`${server}/scripts/${id}/log?disconnects=${disconnects}&waitMs=5000`);
  return r.json();
}

const cid = (p, s) => (p === 'anthropic' ? `toolu_${s}` : `call_${s}`);
// calls streams the calls with their argument fragments interleaved.
function calls(...cs) {
  const events = cs.map(([id, name], index) => ({ tool: { index, id, name } }));
  for (const half of [0, 1]) {
    cs.forEach(([, , args], index) => {
      const a = JSON.stringify(args);
      events.push({ args: { index, fragment: half ? a.slice(a.length >> 1) : a.slice(0, a.length >> 1) } });
    });
  }
  events.push({ finish: { stop: 'tool_use', usage: { promptTokens: 100, completionTokens: 20, totalTokens: 120 } } });
  return { events };
}
const text = (s) => ({ events: [{ text: s }, { finish: { stop: 'stop', usage: { promptTokens: 50, completionTokens: 5, totalTokens: 55 } } }] });

async function session(provider, replies, options = {}) {
  const script = await load(provider, replies);
  const s = await createSession({
    workspace: { kind: 'memory', files },
    llm: { provider, baseURL: script.baseURL, apiKey: 'sk-test', model: 'model-test', maxRetries: 0 },
    permissionPolicy: { defaultDecision: 'allow' },
    ...options,
  });
  return { s, script };
}

// lastResults reads the tool results of a recorded request, in order.
function lastResults(provider, body) {
  const msgs = body.messages;
  if (provider === 'openai') {
    const out = [];
    for (let i = msgs.length - 1; i >= 0 && msgs[i].role === 'tool'; i--) out.unshift({ id: msgs[i].tool_call_id, content: msgs[i].content });
    return out;
  }
  return msgs.at(-1).content.filter((b) => b.type === 'tool_result').map((b) => ({ id: b.tool_use_id, content: JSON.stringify(b.content), isError: !!b.is_error }));
}

// intervals: per invocation, the index of tool_execution_start and tool_end.
function overlap(events, turn) {
  let t = 0;
  const open = new Set();
  let overlapped = false;
  for (const e of events) {
    if (e.type === 'turn_start') t++;
    if (t !== turn || e.origin !== 'agent' || !e.parentId?.startsWith('stream-')) continue;
    if (e.type === 'tool_execution_start') { if (open.size) overlapped = true; open.add(e.invocationId); }
    if (e.type === 'tool_end') open.delete(e.invocationId);
  }
  return overlapped;
}

for (const p of providers) {
  test(`${p}: read-only calls run concurrently, a write turn serially, results in call order`, async () => {
    const { s, script } = await session(p, [
      calls([cid(p, 'r1'), 'read', { file_path: 'a.txt' }], [cid(p, 'r2'), 'read', { file_path: 'b.txt' }], [cid(p, 'r3'), 'read', { file_path: 'c.txt' }]),
      calls([cid(p, 'w1'), 'write', { file_path: 'x.txt', content: '1' }], [cid(p, 'w2'), 'read', { file_path: 'a.txt' }]),
      text('done'),
    ], {
      // A post_tool_use hook holds each call between tool_execution_start and
      // tool_end, so calls that run together overlap there.
      hooks: [{ id: 'hold', event: 'post_tool_use', handler: async () => { await sleep(100); } }],
    });
    const events = [];
    for await (const e of s.stream('read them')) events.push(e);
    assert.equal(events.at(-1).type, 'agent_end', JSON.stringify(events.at(-1)));
    assert.ok(overlap(events, 1), 'three reads overlap');
    assert.ok(!overlap(events, 2), 'a turn with a write runs serially');
    const l = await log(script.id);
    assert.deepEqual(l.rejected ?? [], []);
    assert.equal(l.requests.length, 3);
    const r1 = lastResults(p, l.requests[1].body);
    assert.deepEqual(r1.map((r) => r.id), [cid(p, 'r1'), cid(p, 'r2'), cid(p, 'r3')]);
    assert.match(r1[1].content, /beta/);
    assert.deepEqual(lastResults(p, l.requests[2].body).map((r) => r.id), [cid(p, 'w1'), cid(p, 'w2')]);
    await s.close();
  });

  test(`${p}: a policy deny: ['write'] denies the model's write`, async () => {
    const { s, script } = await session(p, [calls([cid(p, 'w'), 'write', { file_path: 'evil.txt', content: 'x' }]), text('ok')],
      { permissionPolicy: { deny: ['write'], defaultDecision: 'allow' } });
    const events = [];
    for await (const e of s.stream('write')) events.push(e);
    assert.ok(events.some((e) => e.type === 'permission_denied' && e.toolName === 'write'));
    const [r] = lastResults(p, (await log(script.id)).requests[1].body);
    assert.match(r.content, /denied/);
    if (p === 'anthropic') assert.equal(r.isError, true);
    assert.deepEqual(await s.glob('evil.txt'), []);
    await s.close();
  });

  test(`${p}: the duplicate guard stops a model that repeats itself`, async () => {
    const { s, script } = await session(p, [calls([cid(p, 'x'), 'ls', {}])]);
    await assert.rejects(s.send('loop'), (e) => e.code === 'AGENT_FAILED' && /duplicate/.test(e.message));
    assert.equal((await log(script.id)).requests.length, 5);
    await s.close();
  });

  test(`${p}: cancelling mid-stream settles; the server sees the disconnect`, async () => {
    for (const how of ['signal', 'close']) {
      const { s, script } = await session(p, [{ events: [{ text: 'thinking' }], end: 'stall' }]);
      const ac = new AbortController();
      const events = [];
      let t0 = 0;
      for await (const e of s.stream('wait', undefined, { signal: ac.signal })) {
        events.push(e);
        if (e.type === 'text_delta') {
          t0 = performance.now();
          if (how === 'signal') ac.abort(); else s.close();
        }
      }
      const ms = performance.now() - t0;
      // The stream stalls for ever: the bound only tells settled from hung.
      assert.ok(ms < 10_000, `${how}: settled after ${ms} ms`);
      assert.equal(events.at(-1).type, 'error');
      assert.equal(JSON.parse(events.at(-1).errorKindJson).type, 'cancelled');
      assert.equal((await log(script.id, 1)).disconnects, 1, `${how}: disconnect recorded`);
      await s.close();
    }
  });

  test(`${p}: runToolCall takes the server's recorded tool calls`, async () => {
    const { s, script } = await session(p, [
      calls([cid(p, 'r'), 'read', { file_path: 'a.txt' }], [cid(p, 'w'), 'write', { file_path: 'x.txt', content: 'x' }]),
      text('done'),
    ], { permissionPolicy: { allow: ['read'], deny: ['write'] } });
    await s.send('go');
    const asst = (await log(script.id)).requests[1].body.messages.find((m) => m.role === 'assistant');
    const sent = p === 'openai' ? asst.tool_calls : asst.content.filter((b) => b.type === 'tool_use');
    assert.equal(sent.length, 2);
    const [read, write] = [await s.runToolCall(sent[0]), await s.runToolCall(sent[1])];
    if (p === 'openai') {
      assert.deepEqual([read.role, read.tool_call_id], ['tool', cid(p, 'r')]);
      assert.match(read.content, /alpha/);
      assert.match(write.content, /denied/);
    } else {
      assert.deepEqual([read.role, read.content[0].tool_use_id, read.content[0].is_error], ['user', cid(p, 'r'), undefined]);
      assert.equal(write.content[0].is_error, true);
    }
    assert.deepEqual(await s.glob('x.txt'), []);
    await s.close();
  });
}
