// The program tool in Node (npm/src/ptc-node.mjs: QuickJS in a worker
// thread per script), through the packed package: the spec's search-auth
// example inline and from a workspace path, a cold program under a 300 ms
// timeout, a for(;;){} stopped by the timeout, the red-team pack (ptc-redteam.fixture.mjs, shared with Go's
// ptc/enginetest), each attempt followed by a clean-realm canary, and the
// bounds of issue 11: a 1 GiB allocation, 1,000 concurrent ctx calls, a
// flood of refused calls and a 20 MB result, each leaving the process and
// the session healthy. The engine-level cases drive the packed package's
// own host kinds (src/ptc-node.mjs) as Go's HostEngine does, with the
// ptc.start limits set.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { spawnSync } from 'node:child_process';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createSession } from '@a3s-lab/code-wasm';
import { nodePtcHostKinds } from './node_modules/@a3s-lab/code-wasm/src/ptc-node.mjs';
import pack from './ptc-redteam.fixture.mjs';

// tools.en.md "Programmatic Tool Calling", byte for byte.
const searchAuth = `// search-auth.js
export default async function run(ctx, inputs) {
  const hits = await ctx.grep(inputs.query, { glob: '*.rs' });
  const files = await ctx.glob('crates/**/*.rs');
  const snippets = [];

  for (const file of files.slice(0, 20)) {
    const content = await ctx.readFile(file);
    if (content.includes(inputs.query)) {
      snippets.push({ file, preview: content.slice(0, 1200) });
    }
  }

  return {
    summary: \`Found \${snippets.length} candidate files for \${inputs.query}\`,
    evidence: snippets,
    rawSearch: hits,
  };
}
`;

const files = {
  'crates/auth/src/policy.rs': 'pub struct PermissionPolicy {\n    pub deny: Vec<String>,\n}\n',
  'crates/auth/src/lib.rs': 'mod policy;\npub use policy::PermissionPolicy;\n',
  'crates/core/src/main.rs': 'fn main() {}\n',
  'docs/auth.md': 'PermissionPolicy is documented here.\n',
  'scripts/ptc/search-auth.js': searchAuth,
};

for (const [name, where] of [['workspace path', { path: 'scripts/ptc/search-auth.js' }], ['inline source', { source: searchAuth }]]) {
  test(`search-auth example runs unchanged from a ${name}`, async () => {
    const s = await createSession({ workspace: { kind: 'memory', files } });
    try {
      const r = await s.program({
        ...where,
        inputs: { query: 'PermissionPolicy' },
        allowedTools: ['grep', 'glob', 'read'],
        limits: { timeoutMs: 30000, maxToolCalls: 30, maxOutputBytes: 65536 },
      });
      assert.equal(r.exitCode, 0, r.output);
      const meta = JSON.parse(r.metadataJson);
      assert.equal(meta.program.runtime, 'quickjs-node-worker');
      assert.equal(meta.program.success, true);
      const res = meta.script_result;
      assert.equal(res.summary, 'Found 2 candidate files for PermissionPolicy');
      assert.deepEqual(res.evidence.map((e) => e.file).sort(), ['crates/auth/src/lib.rs', 'crates/auth/src/policy.rs']);
      for (const e of res.evidence) assert.equal(e.preview, files[e.file]);
      assert.match(res.rawSearch, /policy\.rs/);
      assert.ok(r.output.startsWith('Program script completed.\nFound 2 candidate files for PermissionPolicy\n'), r.output);
      assert.ok(meta.program.tool_calls.every((c) => c.success));
    } finally {
      await s.close();
    }
  });
}

// Issue 18: timeoutMs counts the script's run, not the engine's start. A
// fresh process (nothing compiled or booted yet) runs a program with
// timeoutMs 300 that returns 42: the worker's boot and QuickJS's compile
// take longer than that on a loaded machine, and do not count; how long
// they took is metadata.program.engine_start_ms.
test('a program with timeoutMs 300 returning 42 succeeds on a cold session', () => {
  const src = `import { createSession } from '@a3s-lab/code-wasm';
const s = await createSession({ workspace: { kind: 'memory' } });
const r = await s.program({ source: 'async function run() { return 42 }', limits: { timeoutMs: 300 } });
await s.close();
console.log(JSON.stringify(r));`;
  const c = spawnSync(process.execPath, ['--input-type=module', '-e', src], { encoding: 'utf8', cwd: dirname(fileURLToPath(import.meta.url)) });
  assert.equal(c.status, 0, c.stderr);
  const r = JSON.parse(c.stdout.trim().split('\n').pop());
  assert.equal(r.exitCode, 0, r.output);
  const meta = JSON.parse(r.metadataJson);
  assert.equal(meta.script_result, 42);
  assert.ok(Number.isInteger(meta.program.engine_start_ms) && meta.program.engine_start_ms >= 0, r.metadataJson);
});

// The bound is generous (a loaded machine; unstopped, the script spins for
// ever): what it checks is that the script is stopped at its deadline,
// counted from its start (the engine's start, engine_start_ms, does not
// count).
test('for(;;){} is stopped at timeoutMs and the session stays usable', async () => {
  const s = await createSession({ workspace: { kind: 'memory', files } });
  try {
    const t0 = performance.now();
    const r = await s.program({ source: 'async function run() { for (;;) {} }', limits: { timeoutMs: 300 } });
    const took = performance.now() - t0;
    assert.equal(r.exitCode, 1);
    assert.equal(r.output, 'program script timed out after 300 ms');
    assert.equal(JSON.parse(r.errorKindJson).type, 'timeout');
    const started = JSON.parse(r.metadataJson).program.engine_start_ms;
    assert.ok(Number.isInteger(started), r.metadataJson);
    assert.ok(took - started < 300 + 8000, `took ${took} ms, ${started} ms of it the engine's start`);
    const again = await s.program({ source: 'async function run(ctx) { return (await ctx.glob("**/*.rs")).length }' });
    assert.equal(again.exitCode, 0, again.output);
    assert.equal(JSON.parse(again.metadataJson).script_result, 3);
  } finally {
    await s.close();
  }
});

test('program rejects unknown option keys', async () => {
  const s = await createSession({ workspace: { kind: 'memory', files } });
  await assert.rejects(s.program({ sourc: 'x' }), /unknown option "sourc"/);
  await s.close();
});

const canary = `async function run(ctx) {
  const bad = [];
  if (Object.prototype.polluted !== undefined || Object.prototype.injected !== undefined) bad.push('Object.prototype');
  if (JSON.parse('{"a":1}').a !== 1 || JSON.stringify({ b: 2 }) !== '{"b":2}') bad.push('JSON');
  if ([1, 2].map((x) => x * 2).join() !== '2,4') bad.push('Array.prototype.map');
  if (Promise.prototype.constructor !== Promise) bad.push('Promise');
  if (globalThis.__marker !== undefined) bad.push('marker');
  const t = await ctx.readFile('a.txt');
  if (t !== 'alpha\\n') bad.push('readFile ' + t);
  return bad.length ? bad.join(',') : 'clean';
}
`;

test('red-team pack: nothing escapes, the host stays healthy, the next program is clean', async (t) => {
  assert.ok(pack.length >= 30, `${pack.length} attempts`);
  const s = await createSession({ workspace: { kind: 'memory', files: { 'a.txt': 'alpha\n' } } });
  try {
    // The first program compiles QuickJS, and the spare worker started
    // after it boots for a moment; the pack's 1 s timeouts are for the
    // attempts, not for that.
    assert.equal((await s.program({ source: 'async function run() { return 1 }' })).exitCode, 0);
    await new Promise((res) => setTimeout(res, 1000));
    for (const a of pack) {
      if (a.engines && !a.engines.includes('node')) continue;
      await t.test(a.name, async () => {
        const r = await s.program({ source: a.source.join('\n') + '\n', inputs: { list: [1, 2] }, limits: { timeoutMs: a.expect === 'contained' ? 30000 : 2000, ...(a.limits || {}) }, ...(a.allowedTools ? { allowedTools: a.allowedTools } : {}) });
        const meta = r.metadataJson ? JSON.parse(r.metadataJson) : {};
        assert.ok(!/escaped/.test(r.output) && !/escaped/.test(JSON.stringify(meta.script_result ?? null)), `ESCAPE: ${r.output}`);
        if (a.expect === 'contained') {
          assert.equal(r.exitCode, 0, r.output);
          assert.equal(meta.script_result, 'contained');
        } else if (a.expect === 'fails') {
          assert.notEqual(r.exitCode, 0, r.output);
        }
        if (a.category === 'lifetime' || a.allowWrite) await new Promise((res) => setTimeout(res, 200));
        const pw = await s.tool('read', { file_path: 'pwned.txt' });
        assert.notEqual(pw.exitCode, 0, 'pwned.txt was written');
        const c = await s.program({ source: canary });
        assert.equal(c.exitCode, 0, c.output);
        assert.equal(JSON.parse(c.metadataJson).script_result, 'clean');
      });
    }
  } finally {
    await s.close();
  }
});

// An abort or close() while a script spins terminates its worker: the
// process uses (almost) no CPU afterwards.
for (const how of ['abort', 'close']) {
  test(`${how} during for(;;){} terminates the program worker`, async () => {
    const s = await createSession({ workspace: { kind: 'memory', files } });
    const ac = new AbortController();
    const p = s.program({ source: 'async function run() { for (;;) {} }', limits: { timeoutMs: 30000 } }, { signal: ac.signal });
    await new Promise((r) => setTimeout(r, 300));
    if (how === 'abort') ac.abort(); else await s.close();
    const t0 = performance.now();
    await assert.rejects(p, { code: how === 'abort' ? 'ABORTED' : 'SESSION_CLOSED' });
    // The grace is 500 ms of Go time; the script would spin for 30 s.
    assert.ok(performance.now() - t0 < 5000, 'settles within the grace');
    await new Promise((r) => setTimeout(r, 300));
    const c0 = process.cpuUsage();
    await new Promise((r) => setTimeout(r, 500));
    const c = process.cpuUsage(c0);
    assert.ok((c.user + c.system) / 1000 < 250, `the worker still spins: ${(c.user + c.system) / 1000} ms CPU in 500 ms`);
    if (how === 'abort') await s.close();
  });
}

// drive runs one script on the host kinds as Go's HostEngine does: polls,
// answers every ctx call after a tick (answer(call) → {ok, value|error}),
// stops. Returns what crossed: the calls, the most outstanding at once,
// the violation and the done message.
async function drive(kinds, start, answer = () => ({ ok: true, value: '"alpha\\n"' })) {
  const { run, runtime } = await kinds['ptc.start']({ name: 'inline.js', inputs: {}, methods: ['readFile', 'tool'], tools: ['read'], timeoutMs: 60000, ...start });
  let calls = 0, outstanding = 0, maxOutstanding = 0, violation;
  try {
    for (;;) {
      const p = await kinds['ptc.poll']({ run });
      if (p.violation) violation = p.violation;
      calls += p.calls.length;
      outstanding += p.calls.length;
      maxOutstanding = Math.max(maxOutstanding, outstanding);
      for (const c of p.calls) {
        setImmediate(() => { outstanding--; kinds['ptc.reply']({ run, id: c.id, ...answer(c) }); });
      }
      if (p.done) return { runtime, calls, maxOutstanding, violation, done: p.done };
    }
  } finally {
    await kinds['ptc.stop']({ run });
  }
}

const kinds = nodePtcHostKinds();

test('engine: 1,000 concurrent ctx calls cross at most maxInFlight at a time and all complete', async () => {
  const source = `async function run(ctx) {
  const out = await Promise.all(Array.from({ length: 1000 }, (_, i) => ctx.readFile('a.txt')));
  return out.filter((t) => t === 'alpha\\n').length;
}`;
  const r = await drive(kinds, { source, maxToolCalls: 1000 });
  assert.equal(r.runtime, 'quickjs-node-worker');
  assert.deepEqual(r.done, { ok: true, value: '1000' });
  assert.equal(r.calls, 1000);
  assert.ok(r.maxOutstanding <= 16 && r.maxOutstanding > 1, `at most 16 outstanding: ${r.maxOutstanding}`);
  const four = await drive(kinds, { source, maxToolCalls: 1000, maxInFlight: 4 });
  assert.deepEqual(four.done, { ok: true, value: '1000' });
  assert.ok(four.maxOutstanding <= 4, `at most 4 outstanding: ${four.maxOutstanding}`);
});

test('engine: calls past maxToolCalls are refused inside QuickJS: a million cost the host nothing', async () => {
  const source = `async function run(ctx) {
  for (let i = 0; i < 20; i++) await ctx.readFile('a.txt');
  let last;
  for (let i = 0; i < 1000000; i++) last = ctx.readFile('a.txt');
  try { await last; } catch (e) { return e.message; }
}`;
  const lag = monitorEventLoopDelay({ resolution: 10 });
  lag.enable();
  const t0 = performance.now();
  const r = await drive(kinds, { source, maxToolCalls: 20 });
  const took = performance.now() - t0;
  lag.disable();
  assert.deepEqual(r.done, { ok: true, value: '"PTC script exceeded maxToolCalls=20"' });
  assert.equal(r.calls, 20, 'only maxToolCalls calls crossed');
  assert.equal(r.violation, 'PTC script exceeded maxToolCalls=20');
  assert.ok(lag.max / 1e6 < 3000, `the host event loop stalled ${lag.max / 1e6} ms`);
  assert.ok(took < 30000, `took ${took} ms`);
});

test('engine: results and arguments over maxResultBytes are refused inside the engine', async () => {
  let r = await drive(kinds, { source: "async function run() { return 'x'.repeat(20 * 1000 * 1000) }" });
  assert.deepEqual(r.done, { ok: false, error: { message: 'the program result is 20000002 bytes of JSON; the limit is 1048576', line: 0 } });
  r = await drive(kinds, { source: "async function run() { return 'é'.repeat(1000) }", maxResultBytes: 1000 });
  assert.equal(r.done.error.message, 'the program result is 2002 bytes of JSON; the limit is 1000');
  r = await drive(kinds, { source: "async function run(ctx) { try { await ctx.readFile('y'.repeat(600)) } catch (e) { return e.message } }", maxResultBytes: 500 });
  assert.deepEqual(r.done, { ok: true, value: '"the arguments of ctx.readFile are 604 bytes of JSON; the limit is 500"' });
  assert.equal(r.calls, 0, 'the refused call did not cross');
});

test('engine: memoryBytes bounds every allocation; the stack bound gives a catchable RangeError', async () => {
  const alloc = (n) => `async function run() {
  const keep = [];
  try { for (let i = 0; i < ${n}; i++) keep.push(new Uint8Array(1 << 20).fill(1)); } catch (e) { return String(e) + ' after ' + keep.length; }
  return 'kept ' + keep.length;
}`;
  let r = await drive(kinds, { source: alloc(24), memoryBytes: 32 << 20 });
  assert.deepEqual(r.done, { ok: true, value: '"kept 24"' });
  r = await drive(kinds, { source: alloc(64), memoryBytes: 16 << 20 });
  assert.match(r.done.value, /^"InternalError: out of memory after (1[0-9]|2[0-9])"$/);
  r = await drive(kinds, { source: 'async function run() { let d = 0; function f() { d++; f(); } try { f(); } catch (e) { return [e instanceof RangeError, e.message, d > 1000] } }' });
  assert.deepEqual(JSON.parse(r.done.value), [true, 'Maximum call stack size exceeded', true]);
});

test('engine: bad ptc.start fields are refused by name; absent ones take the defaults', async () => {
  const base = { name: 'inline.js', source: 'async function run() { return 1 }', inputs: {}, methods: [], tools: [] };
  for (const [k, v] of [['maxToolCalls', -1], ['maxInFlight', 1.5], ['maxResultBytes', '9'], ['memoryBytes', 1024], ['memoryBytes', 4 * 2 ** 30], ['timeoutMs', -5]]) {
    assert.throws(() => kinds['ptc.start']({ ...base, [k]: v }), new RegExp(`^Error: ptc\\.start: ${k} must be`), `${k}=${v}`);
  }
  const r = await drive(kinds, { ...base, maxToolCalls: 0, maxInFlight: null });
  assert.deepEqual(r.done, { ok: true, value: '1' });
});

// A program that exhausts its memory fails (or catches the error); the
// process's own memory does not grow by what the script asked for, and
// the session goes on.
test('a 1 GiB allocation in a program leaves the process and the session healthy', async () => {
  const s = await createSession({ workspace: { kind: 'memory', files: { 'a.txt': 'alpha\n' } } });
  try {
    const rss0 = process.memoryUsage().rss;
    const forms = {
      arraybuffer: 'new ArrayBuffer(2 ** 30)',
      uint8array: 'new Uint8Array(2 ** 30)',
      repeat: "'x'.repeat(2 ** 30)",
      doubling: "(() => { let s = 'x'.repeat(1 << 20); for (let i = 0; i < 10; i++) { s = s + s; s.indexOf('y'); } return s; })()",
      pushBuffers: '(() => { const k = []; for (let i = 0; i < 1024; i++) k.push(new Uint8Array(1 << 20).fill(1)); return k; })()',
      pushStrings: "(() => { const k = []; for (let i = 0; i < 16384; i++) k.push(String(i).padEnd(1 << 16, 'y')); return k; })()",
    };
    for (const [name, expr] of Object.entries(forms)) {
      const r = await s.program({ source: `async function run(ctx) { const x = ${expr}; return 'allocated'; }`, limits: { timeoutMs: 60000 } });
      assert.equal(r.exitCode, 1, `${name}: ${r.output}`);
      assert.match(r.output, /^program script error: .*(out of memory|invalid string length|string too long|invalid array buffer length)/, name);
      const grew = (process.memoryUsage().rss - rss0) / 2 ** 20;
      assert.ok(grew < 512, `${name}: the process grew by ${grew.toFixed(0)} MiB`);
      assert.equal(await s.readFile('a.txt').then((t) => t.includes('alpha')), true);
      const next = await s.program({ source: "async function run(ctx) { return (await ctx.readFile('a.txt')).trim() }" });
      assert.equal(JSON.parse(next.metadataJson).script_result, 'alpha', `${name}: ${next.output}`);
    }
  } finally {
    await s.close();
  }
});

// 1,000 concurrent ctx calls through the package: each ends with a result
// or the clear refusal (maxToolCalls counts them), none crashes anything,
// and the session goes on.
test('1,000 concurrent ctx calls end with results or clear errors and a healthy session', async () => {
  const s = await createSession({ workspace: { kind: 'memory', files: { 'a.txt': 'alpha\n' } } });
  try {
    for (const limits of [{ maxToolCalls: 1000 }, {}]) {
      const r = await s.program({
        source: `async function run(ctx) {
  const out = await Promise.allSettled(Array.from({ length: 1000 }, () => ctx.readFile('a.txt')));
  const ok = out.filter((x) => x.status === 'fulfilled' && x.value === 'alpha\\n').length;
  const refused = out.filter((x) => x.status === 'rejected' && /^PTC script exceeded maxToolCalls=\\d+$/.test(x.reason.message)).length;
  return { ok, refused };
}`,
        limits: { timeoutMs: 120000, ...limits },
      });
      // 1,000 call records pass the 64 KiB metadata bound: the whole
      // metadata is then an artifact of its own.
      let meta = JSON.parse(r.metadataJson);
      if (meta.metadata_artifact) meta = JSON.parse((await s.getArtifact(meta.metadata_artifact.artifact_uri)).content);
      const calls = meta.program.tool_calls.length;
      if (r.exitCode === 0) {
        const { ok, refused } = meta.script_result;
        assert.equal(ok + refused, 1000, r.output);
        assert.equal(ok, calls, 'every call that crossed is recorded');
        assert.ok(ok === (limits.maxToolCalls ?? 20) || ok === 20, `ok ${ok}`);
      } else {
        // Go counts the refusals as a limit violation of the program.
        assert.match(r.output, /^PTC script exceeded maxToolCalls=\d+$/);
      }
      assert.ok(calls <= (limits.maxToolCalls ?? 20), `${calls} calls crossed`);
      assert.match(await s.readFile('a.txt'), /alpha/);
    }
  } finally {
    await s.close();
  }
});

test('a million refused ctx calls and a 20 MB result do not stall the host', async () => {
  const s = await createSession({ workspace: { kind: 'memory', files: { 'a.txt': 'alpha\n' } } });
  try {
    const lag = monitorEventLoopDelay({ resolution: 10 });
    lag.enable();
    const flood = await s.program({ source: "async function run(ctx) { for (let i = 0; i < 1000000; i++) ctx.readFile('a.txt'); return 'flooded' }", limits: { timeoutMs: 60000 } });
    assert.ok(flood.exitCode === 0 || flood.output === 'PTC script exceeded maxToolCalls=20', flood.output);
    assert.ok(JSON.parse(flood.metadataJson).program.tool_calls.length <= 20);
    const big = await s.program({ source: "async function run() { return 'x'.repeat(20 * 1000 * 1000) }", limits: { timeoutMs: 60000 } });
    assert.equal(big.output, 'program script error: the program result is 20000002 bytes of JSON; the limit is 1048576');
    lag.disable();
    assert.ok(lag.max / 1e6 < 3000, `the host event loop stalled ${lag.max / 1e6} ms`);
    const next = await s.program({ source: "async function run(ctx) { return (await ctx.readFile('a.txt')).trim() }" });
    assert.equal(JSON.parse(next.metadataJson).script_result, 'alpha');
  } finally {
    await s.close();
  }
});
