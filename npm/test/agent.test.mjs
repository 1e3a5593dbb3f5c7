// The agent loop through the package in Node, with a host-supplied model
// client ({stream(request, {signal})}): send/run/stream, the session's
// history, refusals fed back, policy, cancel, NO_LLM, INVALID_OPTIONS for
// llm, toolsFor and runToolCall. The provider wire formats against the
// scripted server are in agent-wire.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSession } from '@a3s-lab/code-wasm';

const usage = { promptTokens: 10, completionTokens: 5, totalTokens: 15 };
const text = (s) => [{ type: 'text_delta', text: s }, { type: 'finish', stopReason: 'stop', usage }];
function calls(...cs) {
  const out = cs.map(([id, name], index) => ({ type: 'tool_call_start', index, id, name }));
  cs.forEach(([, , args], index) => out.push({ type: 'tool_call_delta', index, fragment: JSON.stringify(args) }));
  cs.forEach((_, index) => out.push({ type: 'tool_call_end', index }));
  return [...out, { type: 'finish', stopReason: 'tool_use', usage }];
}

// script answers the n-th request with the n-th turn (the last again when
// it runs out); null stalls until aborted. It records requests and aborts.
function script(...turns) {
  const s = {
    requests: [],
    aborted: 0,
    async *stream(request, { signal }) {
      const turn = turns[Math.min(s.requests.length, turns.length - 1)];
      s.requests.push(request);
      if (turn === null) {
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        s.aborted++;
        throw new Error('aborted');
      }
      for (const c of turn) yield c;
    },
  };
  return s;
}

const allow = { permissionPolicy: { defaultDecision: 'allow' } };
const files = { 'a.txt': 'alpha\n', 'b.txt': 'beta\n' };

test('send runs tools and keeps the history; run is send', async () => {
  const llm = script(calls(['c1', 'read', { file_path: 'a.txt' }], ['c2', 'read', { file_path: 'b.txt' }]), text('read both'));
  const s = await createSession({ workspace: { kind: 'memory', files }, llm: { client: llm, model: 'm1' }, systemPrompt: 'sys', ...allow });
  assert.equal(s.run, s.send);
  const r = await s.send('read the files');
  assert.deepEqual(r, { text: 'read both', toolCallsCount: 2, usage: { promptTokens: 20, completionTokens: 10, totalTokens: 30 } });
  assert.equal(llm.requests[0].model, 'm1');
  assert.equal(llm.requests[0].system, 'sys');
  assert.ok(llm.requests[0].tools.some((t) => t.name === 'read'));
  const results = llm.requests[1].messages[2].toolResults;
  assert.deepEqual(results.map((x) => x.callId), ['c1', 'c2']);
  assert.match(results[0].content, /alpha/);
  assert.match(results[1].content, /beta/);
  await s.send('again');
  assert.equal(llm.requests[2].messages.length, 5, 'the second send continues the history');
  await s.send('fresh', []);
  assert.equal(llm.requests[3].messages.length, 1, 'an explicit history replaces it');
  await s.close();
});

test('stream yields the run events in order and ends after agent_end', async () => {
  const llm = script(calls(['c1', 'ls', {}]), text('done'));
  const s = await createSession({ llm: { client: llm }, ...allow });
  const seen = [];
  for await (const e of s.stream('list')) seen.push(e);
  const types = seen.map((e) => e.type);
  assert.deepEqual(types.slice(0, 4), ['agent_start', 'turn_start', 'tool_start', 'tool_input_delta']);
  assert.ok(types.indexOf('tool_execution_start') < types.indexOf('tool_end'));
  assert.equal(types.at(-1), 'agent_end');
  assert.equal(seen.at(-1).payload.text, 'done');
  const run = seen[0].invocationId;
  const tool = seen.find((e) => e.type === 'tool_execution_start');
  assert.equal(tool.parentId, run, 'the model\'s call hangs under the run');
  assert.equal(tool.origin, 'agent');
  await s.close();
});

test('a denied write is fed back and writes nothing', async () => {
  const llm = script(calls(['w1', 'write', { file_path: 'x.txt', content: 'x' }]), text('ok'));
  const s = await createSession({ llm: { client: llm }, permissionPolicy: { deny: ['write'], defaultDecision: 'allow' } });
  const seen = [];
  for await (const e of s.stream('write')) seen.push(e);
  assert.ok(seen.some((e) => e.type === 'permission_denied'));
  const tr = llm.requests[1].messages[2].toolResults[0];
  assert.equal(tr.isError, true);
  assert.match(tr.content, /denied/);
  assert.deepEqual(await s.glob('**'), []);
  await s.close();
});

test('unknown tools and bad arguments are answered, not fatal', async () => {
  const llm = script([
    { type: 'tool_call_start', index: 0, id: 'u', name: 'nope' },
    { type: 'tool_call_end', index: 0 },
    { type: 'tool_call_start', index: 1, id: 'm', name: 'read' },
    { type: 'tool_call_delta', index: 1, fragment: '{"file_path": ' },
    { type: 'tool_call_end', index: 1 },
    { type: 'finish', stopReason: 'tool_use', usage },
  ], text('sorry'));
  const s = await createSession({ llm: { client: llm }, ...allow });
  const r = await s.send('go');
  assert.equal(r.text, 'sorry');
  const [u, m] = llm.requests[1].messages[2].toolResults;
  assert.match(u.content, /no tool named "nope"\. Available tools: .*read/);
  assert.match(m.content, /not a JSON object/);
  await s.close();
});

test('the duplicate guard and max tool rounds stop the run with AGENT_FAILED', async () => {
  const same = await createSession({ llm: { client: script(calls(['x', 'ls', {}])) }, ...allow });
  await assert.rejects(same.send('loop'), (e) => e.code === 'AGENT_FAILED' && /duplicate/.test(e.message) && e.result.errorKind.type === 'partial_failure');
  await same.close();
  let n = 0;
  const varied = { async *stream() { yield* calls([`c${n}`, 'ls', { path: `d${n++}` }]); } };
  const rounds = await createSession({ llm: { client: varied }, maxToolRounds: 2, ...allow });
  await assert.rejects(rounds.send('loop'), (e) => e.code === 'AGENT_FAILED' && /Max tool rounds \(2\) exceeded/.test(e.message) && e.result.toolCallsCount === 3);
  await rounds.close();
});

test('cancel mid-stream settles as cancelled, nothing after the terminal event', async () => {
  for (const how of ['signal', 'close']) {
    const llm = script(null);
    const s = await createSession({ llm: { client: llm }, ...allow });
    const ac = new AbortController();
    const all = s.events();
    const seen = [];
    const done = (async () => { for await (const e of s.stream('wait', undefined, { signal: ac.signal })) seen.push(e); })();
    while (llm.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    const t0 = performance.now();
    if (how === 'signal') ac.abort(); else s.close();
    await done;
    const ms = performance.now() - t0;
    // The stream stalls for ever: settling at all is the cancel's doing; the
    // bound only tells settled from hung (speed is make bench's).
    assert.ok(ms < 10_000, `${how}: settled after ${ms} ms`);
    assert.equal(seen.at(-1).type, 'error', how);
    assert.equal(JSON.parse(seen.at(-1).errorKindJson).type, 'cancelled');
    for (let i = 0; i < 1000 && llm.aborted === 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(llm.aborted, 1, `${how}: the client's signal was aborted`);
    // Nothing of the run follows its terminal event in the session stream.
    await new Promise((r) => setTimeout(r, 100));
    if (how === 'signal') await s.close();
    const rest = [];
    for await (const e of all) rest.push(e);
    const term = rest.findIndex((e) => e.type === 'error');
    assert.ok(term >= 0 && term === rest.length - 1, `${how}: ${rest.map((e) => e.type)}`);
  }
});

test('send aborted by its signal rejects ABORTED with the run so far', async () => {
  const s = await createSession({ llm: { client: script(null) }, ...allow });
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 50);
  await assert.rejects(s.send('wait', undefined, { signal: ac.signal }), (e) => e.code === 'ABORTED');
  await s.close();
});

test('NO_LLM without llm; the stream rejects too', async () => {
  const s = await createSession();
  assert.ok(!s.toolNames().includes('generate_object'), 'the LLM tools are absent without llm');
  const withLlm = await createSession({ llm: { client: script(text('x')) } });
  assert.ok(withLlm.toolNames().includes('generate_object'));
  await withLlm.close();
  await assert.rejects(s.send('hi'), (e) => e.code === 'NO_LLM');
  await assert.rejects(s.stream('hi').next(), (e) => e.code === 'NO_LLM');
  await s.close();
});

test('llm options are checked, naming the key', async () => {
  for (const [llm, re] of [
    [{ provider: 'gemini', model: 'x' }, /options\.llm\.provider/],
    [{ provider: 'openai' }, /options\.llm\.model/],
    [{ provider: 'openai', model: 'm', bogus: 1 }, /options\.llm\.bogus/],
    [{ client: {} }, /options\.llm\.client must be an object with a stream/],
    [{ client: { stream() {} }, provider: 'openai' }, /options\.llm\.provider is not used with a host-supplied client/],
  ]) {
    await assert.rejects(createSession({ llm }), (e) => e.code === 'INVALID_OPTIONS' && re.test(e.message), JSON.stringify(llm));
  }
  await assert.rejects(createSession({ maxToolRounds: 0 }), (e) => e.code === 'INVALID_OPTIONS' && /maxToolRounds/.test(e.message));
});

test('toolsFor gives each provider\'s tool array', async () => {
  const s = await createSession();
  const names = s.toolNames();
  const oa = s.toolsFor('openai');
  assert.deepEqual(oa.map((t) => t.function.name), names);
  assert.equal(oa[0].type, 'function');
  const an = s.toolsFor('anthropic');
  assert.deepEqual(an.map((t) => t.name), names);
  assert.equal(an.find((t) => t.name === 'read').input_schema.type, 'object');
  const strict = s.toolsFor('openai', { strict: true }).find((t) => t.function.name === 'read').function;
  assert.equal(strict.strict, true);
  const p = strict.parameters;
  assert.equal(p.additionalProperties, false);
  assert.deepEqual([...p.required].sort(), Object.keys(p.properties).sort());
  assert.deepEqual(p.properties.offset.type.includes('null'), true, 'an optional argument is nullable');
  assert.throws(() => s.toolsFor('gemini'), (e) => e.code === 'INVALID_CALL');
  assert.throws(() => s.toolsFor('anthropic', { strict: true }), (e) => e.code === 'INVALID_CALL');
  await s.close();
});

test('runToolCall runs a provider\'s call governed and answers in its format', async () => {
  const s = await createSession({ workspace: { kind: 'memory', files }, permissionPolicy: { allow: ['read'], deny: ['write'] } });
  const oa = await s.runToolCall({ id: 'call_1', type: 'function', function: { name: 'read', arguments: '{"file_path":"a.txt","offset":null}' } });
  assert.equal(oa.role, 'tool');
  assert.equal(oa.tool_call_id, 'call_1');
  assert.match(oa.content, /alpha/);
  const an = await s.runToolCall({ type: 'tool_use', id: 'toolu_1', name: 'write', input: { file_path: 'x.txt', content: 'x' } });
  assert.equal(an.role, 'user');
  assert.deepEqual(Object.keys(an.content[0]).sort(), ['content', 'is_error', 'tool_use_id', 'type']);
  assert.equal(an.content[0].is_error, true);
  assert.match(an.content[0].content, /denied/);
  assert.deepEqual(await s.glob('x.txt'), []);
  const unknown = await s.runToolCall({ type: 'tool_use', id: 't2', name: 'nope', input: {} });
  assert.match(unknown.content[0].content, /Available tools/);
  await assert.rejects(s.runToolCall({ name: 'read' }), (e) => e.code === 'INVALID_CALL' && /OpenAI tool call/.test(e.message));
  await s.close();
});
