// Abort, close() with calls in flight, and the event stream.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSession } from '@a3s-lab/code-wasm';

// A pre_tool_use hook on `write` that only settles when Go gives up on it
// holds write calls in flight for as long as a test needs.
function holdingWrites(started) {
  return {
    id: 'hold', event: 'pre_tool_use', matcher: { tool: 'write' }, config: { timeoutMs: 60000 },
    handler: (_ev, { signal }) => new Promise((resolve) => {
      started?.();
      signal.addEventListener('abort', () => resolve(null));
    }),
  };
}

test('an AbortSignal aborts a call in flight: ABORTED, and nothing was written', async () => {
  let started;
  const inFlight = new Promise((r) => { started = r; });
  const s = await createSession({ hooks: [holdingWrites(started)] });
  const ac = new AbortController();
  const p = s.writeFile('a.txt', 'x', { signal: ac.signal });
  await inFlight;
  ac.abort();
  await assert.rejects(p, (e) => e.code === 'ABORTED');
  await assert.rejects(s.readFile('a.txt'), (e) => e.code === 'TOOL_FAILED', 'the aborted write changed nothing');
  // An already aborted signal rejects without running anything.
  await assert.rejects(s.tool('read', { file_path: 'x' }, { signal: AbortSignal.abort() }), (e) => e.code === 'ABORTED');
  await assert.rejects(s.glob('**', { signal: AbortSignal.abort() }), (e) => e.code === 'ABORTED');
  // A signal that never fires changes nothing.
  assert.equal((await s.tool('ls', {}, { signal: new AbortController().signal })).exitCode, 0);
  await s.close();
});

test('close() with calls in flight: they reject SESSION_CLOSED, later calls too, events end', async () => {
  const n = 3;
  let count = 0;
  let allStarted;
  const ready = new Promise((r) => { allStarted = r; });
  const s = await createSession({ hooks: [holdingWrites(() => { if (++count === n) allStarted(); })] });
  const events = s.events();
  await s.ls(); // events queued before close
  const calls = Array.from({ length: n }, (_, i) => s.writeFile(`f${i}.txt`, 'x'));
  await ready;
  await s.close();
  assert.equal(s.isClosed(), true);
  const settled = await Promise.allSettled(calls);
  for (const r of settled) {
    assert.equal(r.status, 'rejected');
    assert.equal(r.reason.code, 'SESSION_CLOSED', r.reason.message);
  }
  await assert.rejects(s.readFile('f0.txt'), (e) => e.code === 'SESSION_CLOSED');
  await assert.rejects(s.tool('ls', {}), (e) => e.code === 'SESSION_CLOSED');
  assert.throws(() => s.toolNames(), (e) => e.code === 'SESSION_CLOSED');
  await s.close(); // idempotent
  // The stream delivers what was queued, then ends.
  const seen = [];
  for await (const ev of events) seen.push(ev.type);
  assert.deepEqual(seen.slice(0, 3), ['tool_request_bound', 'tool_execution_start', 'tool_end'], 'events queued before close are delivered');
  assert.deepEqual(await events.next(), { value: undefined, done: true });
});

test('events(): async iterator and next(), with the convenience fields', async () => {
  const s = await createSession({ workspace: { kind: 'memory', files: { 'a.txt': 'hello\n' } } });
  const it = s.events();
  await s.readFile('a.txt');
  await s.tool('read', { file_path: 'missing' });
  const evs = [];
  while (evs.filter((e) => e.type === 'tool_end').length < 2) {
    const { value, done } = await it.next();
    assert.equal(done, false);
    evs.push(value);
  }
  const types = evs.map((e) => e.type);
  assert.deepEqual(types.slice(0, 3), ['tool_request_bound', 'tool_execution_start', 'tool_end']);
  for (const e of evs) {
    assert.equal(e.version, 1);
    assert.equal(typeof e.payload, 'object');
    assert.equal(e.toolName, 'read');
    assert.match(e.toolId, /\S/);
    assert.equal(e.toolId, e.invocationId);
    assert.equal(e.origin, 'host_direct_trusted');
  }
  const [ok, failed] = evs.filter((e) => e.type === 'tool_end');
  assert.equal(ok.exitCode, 0);
  assert.equal(ok.text, '     1\thello\n');
  assert.equal(ok.toolOutput, ok.text);
  assert.equal(ok.payload.exit_code, 0, 'payload keeps upstream snake_case');
  assert.equal(failed.exitCode, 1);
  assert.equal(JSON.parse(failed.errorKindJson).type, 'not_found');
  assert.notEqual(ok.toolId, failed.toolId);

  // A second iterator starts from its own subscription; return() ends it.
  const it2 = s.events();
  await s.ls();
  const first = await it2.next();
  assert.equal(first.value.toolName, 'ls');
  assert.deepEqual(await it2.return(), { value: undefined, done: true });
  assert.deepEqual(await it2.next(), { value: undefined, done: true });

  // for await over a live stream; breaking out unsubscribes.
  const p = (async () => {
    for await (const ev of s.events()) if (ev.type === 'tool_end') return ev;
  })();
  await new Promise((r) => setTimeout(r, 10));
  await s.writeFile('b.txt', 'b');
  assert.equal((await p).toolName, 'write');
  await s.close();
  // After close, the first iterator drains what was queued, then ends.
  let rest = 0;
  for await (const ev of it) { rest++; assert.equal(ev.version, 1); }
  assert.ok(rest >= 6, `queued events of ls and write delivered after close: ${rest}`);
  assert.deepEqual(await it.next(), { value: undefined, done: true });
});

// `await using s = await createSession()` calls s[Symbol.asyncDispose]() at
// the end of the block (Node 20 has the symbol but not the syntax, so the
// test calls it as the syntax would).
test('Symbol.asyncDispose closes the session: in-flight calls reject SESSION_CLOSED, disposing again is a no-op', async () => {
  assert.equal(typeof Symbol.asyncDispose, 'symbol', 'this runtime has Symbol.asyncDispose');
  let started;
  const inFlight = new Promise((r) => { started = r; });
  const s = await createSession({ hooks: [holdingWrites(started)] });
  assert.equal(typeof s[Symbol.asyncDispose], 'function');
  const p = s.writeFile('a.txt', 'x');
  await inFlight;
  const r = s[Symbol.asyncDispose]();
  assert.ok(r instanceof Promise, 'asyncDispose returns a promise');
  assert.equal(await r, undefined);
  await assert.rejects(p, { code: 'SESSION_CLOSED' });
  assert.equal(s.isClosed(), true);
  await assert.rejects(s.readFile('a.txt'), { code: 'SESSION_CLOSED' });
  await s[Symbol.asyncDispose]();
});

// Go cleans stopped timers lazily: a hook's 120 s timeout, stopped when the
// hook answered at once, stayed the runtime's next wake-up and its
// setTimeout held a Node script open 120 s after its last session closed.
// With no session open, the runtime's timeouts no longer hold the process.
test('a Node script exits promptly once its last session is closed', { timeout: 120_000 }, async () => {
  const { spawn } = await import('node:child_process');
  const script = `
    import { createSession } from '@a3s-lab/code-wasm';
    const s = await createSession({ workspace: { kind: 'memory', files: { 'a.txt': 'x\\n' } },
      hooks: [{ id: 'h', event: 'pre_tool_use', config: { timeoutMs: 120000 }, handler: () => ({ action: 'continue' }) }] });
    const r = await s.tool('read', { file_path: 'a.txt' });
    await s.close();
    console.log('closed', r.exitCode);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  let closedAt;
  const t = setInterval(() => { if (!closedAt && out.includes('closed')) closedAt = Date.now(); }, 20);
  const code = await new Promise((resolve) => child.on('exit', resolve));
  clearInterval(t);
  closedAt ??= Date.now();
  assert.equal(code, 0);
  assert.match(out, /closed 0/);
  const lingered = Date.now() - closedAt;
  assert.ok(lingered < 30_000, `the process lived ${lingered} ms after its last session closed (the hook's 120 s timer held it)`);
});
