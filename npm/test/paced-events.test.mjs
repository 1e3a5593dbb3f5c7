// The event reader the Workers Durable Object uses (session.mjs
// [pacedEvents]): after a batch it waits before asking Go for the next,
// so the events of calls made meanwhile cross in one nextEvents (one
// entry into Go). Counts, not times: they do not depend on the
// machine's load; the order and completeness of events must not change.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';

const pkg = './node_modules/@a3s-lab/code-wasm';
const { loadApi } = await import(`${pkg}/src/loader.mjs`);
const { makeCreateSession, pacedEvents } = await import(`${pkg}/src/session.mjs`);
const goWasm = await WebAssembly.compile(await readFile(new URL(`${pkg}/dist/code.wasm`, import.meta.url)));
// asks counts the api.nextEvents calls of each subscription.
const asks = new Map();
const createSession = makeCreateSession(async () => {
  const api = await loadApi(async () => goWasm);
  return { ...api, nextEvents: (id, sub) => { asks.set(sub, (asks.get(sub) ?? 0) + 1); return api.nextEvents(id, sub); } };
});

test('a paced reader gets every event in order, the events of many calls in fewer entries into Go', async () => {
  const s = await createSession({ workspace: { kind: 'memory', files: { 'a.txt': 'alpha\n' } } });
  const N = 8;
  // A reader like the Durable Object's pump, and a plain one beside it.
  const read = (it, out) => (async () => { for await (const e of it) { out.push(e); if (out.filter((x) => x.type === 'tool_end').length === N + 1) break; } })();
  const paced = [], plain = [];
  // Each call in its own macrotask, as requests to a Durable Object come.
  const calls = async () => {
    for (let i = 0; i < N; i++) {
      await s.tool('read', i % 2 ? { file_path: 'a.txt' } : {});
      await new Promise((r) => setTimeout(r, 2));
    }
  };
  try {
    const done = Promise.all([read(s[pacedEvents](3000), paced), read(s.events(), plain)]);
    await s.tool('read', { file_path: 'a.txt' });
    while (paced.length === 0 || paced[paced.length - 1].type !== 'tool_end') await new Promise((r) => setTimeout(r, 5));
    // The paced reader now waits out its 3 s; the plain one asks again
    // after each batch.
    const before = new Map(asks);
    await calls();
    await done;
    const [pacedSub, plainSub] = [...asks.keys()].sort((a, b) => a - b); // subscribed in that order
    const pacedAsks = asks.get(pacedSub) - before.get(pacedSub), plainAsks = asks.get(plainSub) - before.get(plainSub);
    assert.ok(pacedAsks <= 3, `the paced reader asked Go ${pacedAsks} times for the events of ${N} calls`);
    // The plain reader asks again after each batch: a batch per call at
    // least. Its ask for the first call's events was already waiting when
    // the calls began, and it stops after the last batch: N - 1 asks (a
    // read that runs inline gives its events in one batch; on a goroutine
    // of its own, often two).
    assert.ok(plainAsks >= N - 1, `the plain reader asked ${plainAsks} times for ${N} calls`);
    const key = (e) => `${e.type} ${e.toolCallId ?? ''}`;
    assert.deepEqual(paced.map(key), plain.map(key), 'the same events in the same order');
    assert.equal(paced.filter((e) => e.type === 'tool_end').length, N + 1);
  } finally {
    await s.close();
  }
});
