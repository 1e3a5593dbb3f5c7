// The workerd host of the program engine (src/ptc-workerd.mjs: QuickJS on
// the calling thread), driven in Node through its ptc.* host kinds as Go's
// HostEngine does. What only a frozen clock shows is tested here: on
// deployed Workers Date.now() stands still while a script computes, so the
// CPU budget in interrupt ticks is what stops a loop. The same engine on
// real workerd: npm/test/workerd/run.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { workerdPtcHostKinds, WORKERD_LIMITS } from './node_modules/@a3s-lab/code-wasm/src/ptc-workerd.mjs';

const wasm = await WebAssembly.compile(await readFile(new URL('./node_modules/@a3s-lab/code-wasm/dist/quickjs.wasm', import.meta.url)));

async function runToEnd(kinds, source, timeoutMs) {
  const { run, runtime, first } = kinds['ptc.start']({ name: 'p.js', source, inputs: {}, methods: [], tools: [], timeoutMs });
  assert.equal(runtime, 'quickjs-workerd');
  if (first) return first.done; // settled inside ptc.start: the run is already gone
  for (;;) {
    const r = await kinds['ptc.poll']({ run });
    if (r.done) {
      await kinds['ptc.stop']({ run });
      return r.done;
    }
  }
}

test('with Date.now() frozen, for(;;){} is stopped by the CPU budget and the next run succeeds', async () => {
  const kinds = workerdPtcHostKinds(wasm);
  const now = Date.now;
  const frozen = now();
  Date.now = () => frozen;
  try {
    const t0 = performance.now();
    const d = await runToEnd(kinds, 'async function run() { for (;;) {} }', 500);
    assert.equal(d.ok, false);
    assert.equal(d.error.message, `the program was stopped at its CPU budget (${500 * WORKERD_LIMITS.ticksPerMs} interrupt ticks for timeoutMs 500)`);
    assert.ok(performance.now() - t0 < 60000, 'stopped at all');
  } finally {
    Date.now = now;
  }
  const next = await runToEnd(kinds, 'async function run() { return [1, 2].map((x) => x * 2) }', 5000);
  assert.deepEqual(next, { ok: true, value: '[2,4]' });
});

test('memory is capped at 32 MiB whatever Go asks for', async () => {
  const kinds = workerdPtcHostKinds(wasm);
  const d = await runToEnd(kinds, 'async function run() { return new ArrayBuffer(40 << 20).byteLength }', 5000);
  assert.equal(d.ok, false);
  assert.match(d.error.message, /out of memory/);
  const ok = await runToEnd(kinds, 'async function run() { return new ArrayBuffer(16 << 20).byteLength }', 5000);
  assert.deepEqual(ok, { ok: true, value: String(16 << 20) });
});

// The direct door (PROTOCOL.md §4): with QuickJS on Go's thread, as in a
// Worker, a ctx call crosses into Go once, synchronously, instead of
// through ptc.poll and ptc.reply. Driven here with the real Go wasm and
// the workerd host kinds in one Node thread. The count of entries into Go
// (every JS -> Go call and Go timer resumes the scheduler: loader.mjs's
// stats) does not depend on the machine's load.
const { loadApi, stats } = await import('./node_modules/@a3s-lab/code-wasm/src/loader.mjs');
const { makeCreateSession } = await import('./node_modules/@a3s-lab/code-wasm/src/session.mjs');
const goWasm = await WebAssembly.compile(await readFile(new URL('./node_modules/@a3s-lab/code-wasm/dist/code.wasm', import.meta.url)));
const createWorkerdSession = makeCreateSession(() => loadApi(async () => goWasm), { hostKinds: workerdPtcHostKinds(wasm) });

test('a ctx call on the workerd host enters Go once, and every governance step still runs', async () => {
  const seen = [];
  const s = await createWorkerdSession({
    workspace: { kind: 'memory', files: { 'a.txt': 'alpha\n', 'b.txt': 'beta\n' } },
    // A synchronous hook runs in JS, so it needs no event-loop turn... but
    // Go reaches it through the dispatcher, which answers in a later turn:
    // that read goes the async way and still succeeds.
    hooks: [{ id: 'h', event: 'pre_tool_use', matcher: { tool: 'glob' }, handler: (ev) => { seen.push(ev.toolName); return { action: 'continue' }; } }],
  });
  try {
    const N = 50;
    const program = (source, limits = {}) => s.program({ source, allowedTools: ['read', 'glob'], limits: { timeoutMs: 60000, maxToolCalls: N + 5, ...limits } });
    // Warm: the first program compiles QuickJS's paths and Go's.
    assert.equal((await program('async function run(ctx) { return ctx.readFile("a.txt") }')).exitCode, 0);
    const one = async (k) => {
      const e0 = stats.goEntries;
      const r = await program(`async function run(ctx) { let t = ''; for (let i = 0; i < ${k}; i++) t = await ctx.readFile(i % 2 ? 'a.txt' : 'b.txt'); return t }`);
      assert.equal(r.exitCode, 0, r.output);
      assert.equal(JSON.parse(r.metadataJson).script_result, k % 2 ? 'beta\n' : 'alpha\n');
      return stats.goEntries - e0;
    };
    const perCall = ((await one(N + 1)) - (await one(1))) / N;
    console.log(`entries into Go per ctx call: ${perCall}`);
    assert.ok(perCall <= 1.2, `entries into Go per ctx call: ${perCall} (the door: 1; poll and reply: 3 or more)`);

    // In parallel, past maxInFlight (16); a refusal of the bridge; a call that
    // waits on the event loop (the hook); in order of the script.
    const r = await program(`async function run(ctx) {
      const many = await Promise.all(Array.from({ length: 24 }, (_, i) => ctx.readFile(i % 2 ? 'a.txt' : 'b.txt')));
      let refused = '', stack = null;
      try { await ctx.tool('') } catch (e) { refused = e.message; stack = e.stack }
      const paths = await ctx.glob('*.txt');
      return { many: many.join(''), refused, stack, paths };
    }`, { maxToolCalls: 30 });
    assert.equal(r.exitCode, 0, r.output);
    const v = JSON.parse(r.metadataJson).script_result;
    assert.equal(v.many, 'beta\nalpha\n'.repeat(12));
    assert.equal(v.refused, 'ctx.tool(name, args): name must be a non-empty string');
    // Answered inside direct(), the error is still made with no frame of
    // the script, as the other hosts' deliver makes it.
    assert.equal(v.stack, '');
    assert.deepEqual(v.paths, ['a.txt', 'b.txt']);
    assert.deepEqual(seen, ['glob']);

    // An answer direct() gave at once reaches the script when a reply
    // would: after the jobs queued before it (here the end of run), one at
    // a time. A call chained on it after run returned is never made.
    for (const source of [
      `async function run(ctx) { ctx.readFile('a.txt').then(() => ctx.tool('write', { file_path: 'pwned.txt', content: 'x' })); return 1 }`,
      `async function run(ctx) { const a = ctx.readFile('a.txt'); ctx.readFile('b.txt').then(() => ctx.tool('write', { file_path: 'pwned.txt', content: 'x' })); await a; return 1 }`,
    ]) {
      const late = await s.program({ source, allowedTools: ['read', 'write'], limits: { timeoutMs: 60000 } });
      assert.equal(late.exitCode, 0, late.output);
      assert.notEqual((await s.tool('read', { file_path: 'pwned.txt' })).exitCode, 0, source);
    }

    // maxToolCalls is still the engine's: the 4th call never leaves it.
    const over = await program('async function run(ctx) { for (let i = 0; i < 4; i++) await ctx.readFile("a.txt"); return 1 }', { maxToolCalls: 3 });
    assert.notEqual(over.exitCode, 0);
    assert.match(over.output, /exceeded maxToolCalls=3/);
  } finally {
    await s.close();
  }
});

// A call the door yields to may still be running when the door returns
// (the scheduler ran something else first, or the call's tool runs on a
// goroutine of its own): it is detached, and Go must be entered again to
// finish it, though nothing in JS waits on a Go event. Found as programs
// that hung until their timeout (about 1 in 60 refused ctx calls). Many
// calls of both kinds, each program bounded well below its timeout.
test('a ctx call the door detached is settled without any other entry into Go', async () => {
  const s = await createWorkerdSession({ workspace: { kind: 'memory', files: { 'a.txt': 'TODO a\n', 'd/b.txt': 'TODO b\n' } } });
  try {
    for (let round = 0; round < 6; round++) {
      const t0 = performance.now();
      const r = await s.program({
        source: `async function run(ctx) {
          let refused = 0, hits = 0;
          for (let i = 0; i < 150; i++) { try { await ctx.tool('') } catch { refused++ } }
          for (let i = 0; i < 20; i++) hits += (await ctx.grep('TODO', { output_mode: 'count' })).length > 0 ? 1 : 0;
          const all = await Promise.all(Array.from({ length: 20 }, () => ctx.glob('**/*.txt')));
          return [refused, hits, all.every((p) => p.length === 2)];
        }`,
        allowedTools: ['grep', 'glob'],
        limits: { timeoutMs: 30000, maxToolCalls: 200 },
      });
      assert.equal(r.exitCode, 0, r.output);
      assert.deepEqual(JSON.parse(r.metadataJson).script_result, [150, 20, true]);
      // A lost call waits out the 30 s timeout; a healthy program takes
      // well under a second even on a loaded machine.
      assert.ok(performance.now() - t0 < 20000, `round ${round} took ${(performance.now() - t0).toFixed(0)} ms`);
    }
  } finally {
    await s.close();
  }
});

// The door moves a call as UTF-8 bytes through Go's memory (door.mjs):
// text of every width arrives exactly, a lone surrogate is refused as on
// every other path (never aliased to U+FFFD and another file), and a call
// over maxResultBytes never leaves the engine.
test('through the door: exact text, lone surrogates refused, oversized arguments stopped in the engine', async () => {
  const s = await createWorkerdSession({ workspace: { kind: 'memory', files: { 'a.txt': 'alpha\n' } } });
  try {
    const text = 'é'.repeat(70000) + '\u{1F600}\u4E2D' + 'x'.repeat(30000) + '\n';
    const r = await s.program({
      source: `async function run(ctx, inputs) {
        await ctx.tool('write', { file_path: 'w.txt', content: inputs.text });
        let lone = '';
        try { await ctx.readFile('a\\ud800.txt') } catch (e) { lone = e.message }
        let bad = '';
        try { await ctx.tool('write', { file_path: 'x\\udc00.txt', content: 'no' }) } catch (e) { bad = e.message }
        let big = '';
        try { await ctx.tool('write', { file_path: 'big.txt', content: 'y'.repeat(2 << 20) }) } catch (e) { big = e.message }
        return { lone, bad, big };
      }`,
      inputs: { text },
      allowedTools: ['read', 'write'],
      limits: { timeoutMs: 60000 },
    });
    assert.equal(r.exitCode, 0, r.output);
    const v = JSON.parse(r.metadataJson).script_result;
    assert.equal(await s.readText('w.txt'), text, 'every byte of the written text');
    assert.match(v.lone, /surrogate/i);
    assert.match(v.bad, /surrogate/i, 'a lone surrogate in a written path is refused');
    assert.match(v.big, /bytes of JSON; the limit is 1048576/);
    assert.deepEqual(Object.keys(await s.exportFiles()).sort(), ['a.txt', 'w.txt'], 'nothing else was written');
  } finally {
    await s.close();
  }
});

// With an idle QuickJS instance, a script that needs no event-loop turn
// settles inside ptc.start, which answers its one poll as `first` and has
// already stopped the run: Go makes no ptc.poll and no ptc.stop. A script
// that awaits a timer-free promise chain still settles there; one that
// awaits a ctx call answered later does not.
test('a script that settles inside ptc.start is answered with it, and the run is gone', async () => {
  const kinds = workerdPtcHostKinds(wasm);
  const start = (source) => kinds['ptc.start']({ name: 'p.js', source, inputs: {}, methods: ['tool'], tools: [], timeoutMs: 5000 });
  assert.deepEqual(await runToEnd(kinds, 'async function run() { return 0 }', 5000), { ok: true, value: '0' }); // loads the instance
  await new Promise((r) => setTimeout(r, 20)); // taken back, its next realm made
  const a = start('async function run() { await null; return [1, await Promise.resolve(2)] }');
  assert.deepEqual(a.first, { calls: [], running: true, done: { ok: true, value: '[1,2]' } });
  assert.throws(() => kinds['ptc.poll']({ run: a.run }), /no program run/);
  assert.equal(await kinds['ptc.stop']({ run: a.run }), null, 'a stop of a gone run is harmless');
  await new Promise((r) => setTimeout(r, 20));
  const b = start('async function run() { throw new RangeError("nope") }');
  assert.equal(b.first.done.ok, false);
  assert.match(b.first.done.error.message, /RangeError: nope/);
  // A ctx call with no door waits for Go's poll: no first.
  await runToEnd(kinds, 'async function run() { return 0 }', 5000);
  await new Promise((r) => setTimeout(r, 20));
  const c = start('async function run(ctx) { return await ctx.tool("read", {}) }');
  assert.equal(c.first, undefined);
  const p = await kinds['ptc.poll']({ run: c.run });
  assert.equal(p.running, true);
  const q = p.calls.length ? p : await kinds['ptc.poll']({ run: c.run });
  assert.equal(q.calls.length, 1);
  await kinds['ptc.stop']({ run: c.run });
});
