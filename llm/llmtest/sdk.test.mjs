// The official SDKs read the scripted server's streams: `openai` and
// `@anthropic-ai/sdk` (exact versions in package.json) pointed at the helper
// binary parse text, interleaved tool calls, reasoning, pings, byte-split
// CRLF streams and usage as the Go clients do, and retry its 429. If an SDK
// chokes on a script, the script is not what the provider sends.
// Run: node --test llm/llmtest/sdk.test.mjs (make test-llm-sdk).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startLLMServer } from '../../web/test/llmserver.mjs';

let dir, srv;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'code-wasm-sdk-'));
  srv = await startLLMServer(dir);
});
after(() => {
  srv?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function load(provider, replies) {
  const r = await fetch(`${srv.url}/scripts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ provider, replies }) });
  assert.equal(r.status, 200, await r.clone().text());
  return r.json();
}
async function log(id) {
  return (await fetch(`${srv.url}/scripts/${id}/log`)).json();
}

const usage = (p, c) => ({ promptTokens: p, completionTokens: c, totalTokens: p + c });
const twoTools = [
  { text: 'Reading both.' },
  { tool: { index: 0, id: 'call_a', name: 'read' } }, { tool: { index: 1, id: 'call_b', name: 'read' } },
  { args: { index: 0, fragment: '{"file_path":' } }, { args: { index: 1, fragment: '{"file_pa' } },
  { ping: true },
  { args: { index: 0, fragment: ' "a.txt"}' } }, { args: { index: 1, fragment: 'th": "b.txt"}' } },
  { finish: { stop: 'tool_use', usage: usage(50, 30) } },
];
const readTool = { name: 'read', description: 'Read a file', parameters: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] } };

test('openai SDK: interleaved tool calls, text and usage', async () => {
  for (const reply of [{ events: twoTools }, { events: twoTools, split: 5, crlf: true }]) {
    const { baseURL, id } = await load('openai', [reply]);
    const client = new OpenAI({ baseURL, apiKey: 'sk-test', maxRetries: 0 });
    const stream = client.chat.completions.stream({
      model: 'model-test', messages: [{ role: 'user', content: 'hi' }],
      tools: [{ type: 'function', function: readTool }], stream_options: { include_usage: true },
    });
    const done = await stream.finalChatCompletion();
    const msg = done.choices[0].message;
    assert.equal(msg.content, 'Reading both.');
    assert.deepEqual(msg.tool_calls.map((c) => [c.id, c.function.name, JSON.parse(c.function.arguments)]),
      [['call_a', 'read', { file_path: 'a.txt' }], ['call_b', 'read', { file_path: 'b.txt' }]]);
    assert.equal(done.choices[0].finish_reason, 'tool_calls');
    assert.deepEqual([done.usage.prompt_tokens, done.usage.completion_tokens, done.usage.total_tokens], [50, 30, 80]);
    assert.equal((await log(id)).requests.length, 1);
  }
});

test('openai SDK: reasoning_content chunks and a 429 with retry-after retried', async () => {
  const { baseURL, id } = await load('openai', [
    { status: 429, header: { 'retry-after': '0.2' } },
    { events: [{ reasoning: 'think' }, { text: 'Hi' }, { finish: { stop: 'stop', usage: usage(3, 2) } }] },
  ]);
  const client = new OpenAI({ baseURL, apiKey: 'sk-test', maxRetries: 1 });
  const stream = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } });
  let text = '', reasoning = '', last;
  for await (const ch of stream) {
    const d = ch.choices[0]?.delta;
    text += d?.content ?? '';
    reasoning += d?.reasoning_content ?? '';
    last = ch;
  }
  assert.equal(text, 'Hi');
  assert.equal(reasoning, 'think');
  assert.equal(last.usage.total_tokens, 5);
  const l = await log(id);
  assert.equal(l.requests.length, 2);
  assert.ok(l.requests[1].atMs - l.requests[0].atMs >= 200, `retried after ${l.requests[1].atMs - l.requests[0].atMs} ms`);
});

test('openai SDK: the 400 body of an unanswered tool call is the provider\'s', async () => {
  const { baseURL } = await load('openai', [{ events: [{ text: 'x' }, { finish: { stop: 'stop', usage: usage(1, 1) } }] }]);
  const client = new OpenAI({ baseURL, apiKey: 'sk-test', maxRetries: 0 });
  await assert.rejects(client.chat.completions.create({
    model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'read', arguments: '{}' } }] }],
  }), (e) => e.status === 400 && e.error?.type === 'invalid_request_error' && /call_9/.test(e.message));
});

test('anthropic SDK: interleaved tool_use blocks, thinking, pings, cumulative usage', async () => {
  for (const reply of [{ events: [{ reasoning: 'The user ' }, { reasoning: 'asks.' }, ...twoTools] }, { events: twoTools, split: 7, crlf: true }]) {
    const { baseURL, id } = await load('anthropic', [reply]);
    const client = new Anthropic({ baseURL, apiKey: 'sk-test', maxRetries: 0 });
    const stream = client.messages.stream({
      model: 'model-test', max_tokens: 1024, messages: [{ role: 'user', content: 'hi' }],
      tools: [{ name: readTool.name, description: readTool.description, input_schema: readTool.parameters }],
    });
    const msg = await stream.finalMessage();
    const kinds = msg.content.map((b) => b.type);
    assert.deepEqual(kinds.filter((k) => k !== 'thinking'), ['text', 'tool_use', 'tool_use']);
    if (reply.events[0].reasoning) assert.equal(msg.content[0].thinking, 'The user asks.');
    assert.deepEqual(msg.content.filter((b) => b.type === 'tool_use').map((b) => [b.id, b.name, b.input]),
      [['call_a', 'read', { file_path: 'a.txt' }], ['call_b', 'read', { file_path: 'b.txt' }]]);
    assert.equal(msg.stop_reason, 'tool_use');
    assert.deepEqual([msg.usage.input_tokens, msg.usage.output_tokens], [50, 30]);
    const l = await log(id);
    assert.equal(l.requests.length, 1);
    assert.ok(l.requests[0].header['anthropic-version']);
  }
});

test('anthropic SDK: an error event after the 200 rejects the stream; 529 is retried', async () => {
  const { baseURL } = await load('anthropic', [{ events: [{ text: 'par' }, { error: { type: 'overloaded_error', message: 'Overloaded' } }] }]);
  const client = new Anthropic({ baseURL, apiKey: 'sk-test', maxRetries: 0 });
  await assert.rejects(client.messages.stream({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).finalMessage(), /Overloaded/);

  const second = await load('anthropic', [{ status: 529, header: { 'retry-after': '0.05' } }, { events: [{ text: 'ok' }, { finish: { stop: 'stop', usage: usage(1, 1) } }] }]);
  const retrying = new Anthropic({ baseURL: second.baseURL, apiKey: 'sk-test', maxRetries: 1 });
  const msg = await retrying.messages.stream({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
  assert.equal(msg.content[0].text, 'ok');
  assert.equal((await log(second.id)).requests.length, 2);
});
