// generate_object through the package in Node against the scripted provider
// server (llm/llmtest) over real HTTP, in both wire formats: the repair
// loop, partial objects as tool_output_delta events, cancellation.
// run-packed.mjs starts the server's helper binary and sets LLMTEST_URL.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSession } from '@a3s-lab/code-wasm';

const server = process.env.LLMTEST_URL;
const providers = ['openai', 'anthropic'];

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
async function session(provider, replies, options = {}) {
  const script = await load(provider, replies);
  const s = await createSession({ llm: { provider, baseURL: script.baseURL, apiKey: 'sk-test', model: 'model-test', maxRetries: 0 }, ...options });
  return { s, script };
}

// emit streams a call of emit_<name> whose arguments arrive in fragments,
// each after gapMs.
function emit(name, fragments, gapMs = 0) {
  const events = [{ tool: { index: 0, id: `call_${name}`, name: `emit_${name}` } }];
  for (const fragment of fragments) events.push({ args: { index: 0, fragment }, ...(gapMs ? { delayMs: gapMs } : {}) });
  events.push({ finish: { stop: 'tool_use', usage: { promptTokens: 20, completionTokens: 10, totalTokens: 30 } } });
  return { events };
}

const person = {
  type: 'object', required: ['name', 'age'], additionalProperties: false,
  properties: { name: { type: 'string' }, age: { type: 'integer', minimum: 0 } },
};

for (const p of providers) {
  test(`${p}: invalid JSON, then schema-invalid, then valid: repair_rounds 2, the errors reach the model`, async () => {
    const { s, script } = await session(p, [
      emit('person', ['{"name": "Ada", ', '"age": ']),
      emit('person', ['{"name": "Ada", "age": -1}']),
      emit('person', ['{"name": "Ada", "age": 36}']),
    ]);
    const res = await s.tool('generate_object', { schema: person, prompt: 'Ada is 36.', schema_name: 'person' });
    assert.equal(res.exitCode, 0, res.output);
    const out = JSON.parse(res.output);
    assert.deepEqual(out.object, { name: 'Ada', age: 36 });
    assert.equal(out.repair_rounds, 2);
    assert.equal(out.mode_used, 'tool');
    assert.equal(out.usage.total_tokens, 90);
    const lg = await log(script.id);
    assert.equal(lg.requests.length, 3);
    assert.deepEqual(lg.rejected ?? [], []);
    const bodies = lg.requests.map((r) => JSON.stringify(r.body));
    assert.match(bodies[1], /could not be parsed/);
    assert.match(bodies[2], /\/age: minimum: got -1, want 0/);
    await s.close();
  });

  test(`${p}: bad arguments make no request`, async () => {
    const { s, script } = await session(p, [emit('result', ['{}'])]);
    for (const args of [{ schema: person, prompt: ' ' }, { schema: person, prompt: 'p', timeout_ms: 10 }, { schema: { type: 7 }, prompt: 'p' }]) {
      const res = await s.tool('generate_object', args);
      assert.notEqual(res.exitCode, 0);
      assert.equal(JSON.parse(res.errorKindJson).type, 'invalid_argument', res.output);
    }
    assert.equal((await log(script.id)).requests?.length ?? 0, 0);
    await s.close();
  });
}

test('partial objects as tool_output_delta: >= 100 ms apart, then one final delta with the whole object', async () => {
  // A 1 s stream of 5 ms fragments.
  const frags = ['{"items": ['];
  for (let i = 0; i < 198; i++) frags.push(`"item ${'x'.repeat(i % 7)}",`);
  frags.push('"last"]}');
  const { s } = await session('openai', [emit('result', frags, 5)]);
  const it = s.events();
  const t0 = performance.now();
  const res = await s.tool('generate_object', { schema: { type: 'object', required: ['items'] }, prompt: 'p' });
  const ms = performance.now() - t0;
  assert.equal(res.exitCode, 0, res.output);
  const deltas = [];
  for (;;) {
    const { value: e } = await it.next();
    if (e.type === 'tool_output_delta' && e.toolName === 'generate_object') deltas.push(e);
    if (e.type === 'tool_end') break;
  }
  await it.return();
  const partials = deltas.slice(0, -1);
  const final = JSON.parse(deltas.at(-1).text);
  assert.ok(partials.length >= 2 && partials.length <= Math.floor(ms / 100) + 1, `${partials.length} partials in ${ms} ms`);
  if (ms < 1100) assert.ok(partials.length <= 11, `${partials.length} partials in ${ms} ms`);
  for (let i = 1; i < partials.length; i++) assert.ok(partials[i].timeMs - partials[i - 1].timeMs >= 100, `partials ${i - 1} and ${i}`);
  for (const d of partials) assert.equal(JSON.parse(d.text).final, false);
  assert.equal(final.final, true);
  assert.equal(final.repair_rounds, 0);
  assert.deepEqual(final.object_partial, JSON.parse(frags.join('')));
  await s.close();
});

for (const how of ['signal', 'close']) {
  test(`cancelling mid-stream (${how}) settles promptly; the server sees the disconnect`, async () => {
    const frags = ['{"name": "A'];
    for (let i = 0; i < 100; i++) frags.push(' ');
    const { s, script } = await session('anthropic', [emit('result', frags, 50)]);
    const ac = new AbortController();
    const call = s.tool('generate_object', { schema: person, prompt: 'p' }, { signal: ac.signal });
    while (!(await log(script.id)).requests?.length) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 100));
    const t0 = performance.now();
    if (how === 'signal') ac.abort(); else await s.close();
    await assert.rejects(call, (e) => e.code === (how === 'signal' ? 'ABORTED' : 'SESSION_CLOSED'));
    const ms = performance.now() - t0;
    // The stream lasts 5 s; the bound leaves a busy machine room.
    assert.ok(ms < 4000, `settled after ${ms} ms (goal 500)`);
    assert.equal((await log(script.id, 1)).disconnects, 1);
    await s.close();
  });
}

test('called by the model inside stream(): its partial objects are events of the run', async () => {
  const frags = ['{"items": ['];
  for (let i = 0; i < 40; i++) frags.push(`"item ${i}",`);
  frags.push('"last"]}');
  const args = { schema: { type: 'object', required: ['items'] }, prompt: 'list the items', schema_name: 'list' };
  const { s, script } = await session('openai', [
    // the agent's turn: the model calls generate_object
    { events: [{ tool: { index: 0, id: 'call_g', name: 'generate_object' } }, { args: { index: 0, fragment: JSON.stringify(args) } },
      { finish: { stop: 'tool_use', usage: { promptTokens: 5, completionTokens: 5, totalTokens: 10 } } }] },
    // generate_object's own request
    emit('list', frags, 10),
    // the agent's next turn
    { events: [{ text: 'done' }, { finish: { stop: 'stop', usage: { promptTokens: 5, completionTokens: 1, totalTokens: 6 } } }] },
  ], { permissionPolicy: { allow: ['generate_object'] } });
  const deltas = [];
  let end;
  for await (const e of s.stream('Extract the items')) {
    if (e.type === 'tool_output_delta' && e.toolName === 'generate_object') deltas.push(JSON.parse(e.text));
    if (e.type === 'agent_end') end = e;
  }
  assert.equal(end?.text, 'done');
  assert.ok(deltas.length >= 2, `${deltas.length} deltas`);
  assert.equal(deltas.at(-1).final, true);
  assert.equal(deltas.at(-1).object_partial.items.length, 41);
  const lg = await log(script.id);
  assert.equal(lg.requests.length, 3);
  assert.match(JSON.stringify(lg.requests[2].body), /repair_rounds/, 'the tool result reaches the model');
  await s.close();
});
