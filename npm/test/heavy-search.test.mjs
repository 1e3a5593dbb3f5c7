// Searches that would run for minutes (issue 11 finding 6), through the
// package in Node, where the wasm runs on this thread: a grep over one
// long line (a minified bundle) with a large regexp program, and globs
// whose braces multiply. Each is refused up front (invalid_argument naming
// the limit) or stopped by toolTimeoutMs or an AbortSignal, and while it
// runs the event loop keeps turning (the search gives way to the host).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSession, CodeWasmError } from '@a3s-lab/code-wasm';

// One 4 MiB line ending in 'z' after eight of [a-h] but never nine: every
// pattern below needs nine or more, so it matches nothing, and grep's
// literal prefilter hands the whole line to the regexp engine, which needs
// tens of seconds to a minute for it.
const bundle = 'abcdefgh'.repeat((4 << 20) / 8) + '-abcdefghz';
const files = { 'dist/bundle.min.js': bundle, 'src/a.ts': 'x\n' };
const heavyGreps = [
  ['big alternation', { pattern: '(a|b|c|d|e|f|g|h){300}z' }],
  ['(a|b)*c style', { pattern: '(a|b|c|d|e|f|g|h|ab|cd)*[a-h]{200}z' }],
  ['-i', { pattern: '([a-h]|x){9,200}Z', '-i': true }],
  ['count mode', { pattern: '(a|b|c|d|e|f|g|h){300}z', output_mode: 'count' }],
  ['files mode', { pattern: '[a-h]{9,1000}z', output_mode: 'files_with_matches' }],
];
const kindOf = (r) => (r.errorKindJson ? JSON.parse(r.errorKindJson).type : undefined);
const AFTER = 200; // ms: the timeout, or when the signal aborts
// Generous for a machine three times as busy as this one; the latency is
// printed (the goal is 500 ms), and without the fix each case ran to the end.
const BOUND = 4000;

// ticker measures the longest stretch without an event-loop turn while a
// call runs (a blocked loop: the whole call). The search gives the host a
// turn about every 100 ms (workspace.Pacer); the first call of a process
// also compiles schemas and runs unoptimised wasm.
function ticker() {
  let last = performance.now();
  let gap = 0;
  const h = setInterval(() => { const t = performance.now(); gap = Math.max(gap, t - last); last = t; }, 5);
  return { stop() { clearInterval(h); return Math.round(Math.max(gap, performance.now() - last)); } };
}

for (const [name, args] of heavyGreps) {
  test(`grep over a long line (${name}) stops at toolTimeoutMs`, { timeout: 60_000 }, async () => {
    const s = await createSession({ workspace: { kind: 'memory', files }, toolTimeoutMs: AFTER });
    try {
      const tk = ticker();
      const t0 = performance.now();
      const r = await s.tool('grep', args);
      const ms = performance.now() - t0;
      const gap = tk.stop();
      assert.equal(r.exitCode, 1, r.output);
      assert.equal(kindOf(r), 'timeout', r.errorKindJson);
      console.log(`  ${name}: timed out after ${Math.round(ms)} ms (timeout ${AFTER} ms); the event loop waited at most ${gap} ms for a turn`);
      assert.ok(ms < AFTER + BOUND, `settled after ${ms} ms`);
      assert.ok(gap < BOUND, `the event loop was blocked for ${gap} ms`);
      // The session is usable at once: the grep is not still running.
      const t1 = performance.now();
      assert.equal((await s.tool('read', { file_path: 'src/a.ts' })).exitCode, 0);
      assert.ok(performance.now() - t1 < BOUND, 'the next call waited for the grep');
    } finally {
      await s.close();
    }
  });

  test(`grep over a long line (${name}) stops at an AbortSignal`, { timeout: 60_000 }, async () => {
    const s = await createSession({ workspace: { kind: 'memory', files } });
    try {
      const ac = new AbortController();
      setTimeout(() => ac.abort(), AFTER);
      const tk = ticker();
      await assert.rejects(s.tool('grep', args, { signal: ac.signal }), (e) => e instanceof CodeWasmError && e.code === 'ABORTED');
      // The rejection is immediate in JS; that the Go side stopped shows in
      // how soon the next call on the same thread is served.
      const t1 = performance.now();
      assert.equal((await s.tool('read', { file_path: 'src/a.ts' })).exitCode, 0);
      const ms = performance.now() - t1;
      const gap = tk.stop();
      console.log(`  ${name}: aborted; the next call waited ${Math.round(ms)} ms; the event loop waited at most ${gap} ms for a turn`);
      assert.ok(ms < BOUND, `the next call waited ${ms} ms for the aborted grep`);
      assert.ok(gap < BOUND, `the event loop was blocked for ${gap} ms`);
    } finally {
      await s.close();
    }
  });
}

const nested = '{a,'.repeat(12) + 'b' + '}'.repeat(12);
const heavyGlobs = [
  ['nested braces', nested, /nests braces 12 deep; the limit is 8/],
  ['braces in sequence', '{a,a}'.repeat(30) + 'x', /more than 1024 alternatives/],
  ['** plus braces', '**/' + '{*a,*b}'.repeat(16) + '/**/x', /more than 1024 alternatives/],
  ['nested and in sequence', '{{a,b}{c,d},{e,{f,g}}}'.repeat(6), /more than 1024 alternatives/],
  ['too long', '**/' + '*a'.repeat(600), /the limit is 1024 bytes/],
];
for (const [name, pattern, re] of heavyGlobs) {
  test(`a glob pattern past its limits is refused up front (${name})`, async () => {
    const s = await createSession({ workspace: { kind: 'memory', files } });
    try {
      const t0 = performance.now();
      const g = await s.tool('glob', { pattern });
      assert.equal(kindOf(g), 'invalid_argument', g.output);
      assert.match(g.output, re);
      const r = await s.tool('grep', { pattern: 'x', glob: pattern });
      assert.equal(kindOf(r), 'invalid_argument', r.output);
      assert.match(r.output, re);
      await assert.rejects(s.glob(pattern), (e) => e instanceof CodeWasmError && e.code === 'TOOL_FAILED' && re.test(e.message));
      assert.ok(performance.now() - t0 < BOUND);
    } finally {
      await s.close();
    }
  });
}

test('a glob within the limits but costly over many files stops at toolTimeoutMs and at an AbortSignal', { timeout: 120_000 }, async () => {
  const many = {};
  for (let i = 0; i < 20000; i++) many[`src/d${i % 50}/aaaaaaaaaaaa${i}.txt`] = 'x\n';
  const alts = Array.from({ length: 90 }, (_, i) => `a*a*a*b${String(i).padStart(2, '0')}`);
  const pattern = `src/**/{a,aa,aaa,aaaa,aaaaa,aaaaaa,aaaaaaa,aaaaaaaa}*{${alts.join(',')}}`; // 720 alternatives
  const s = await createSession({ workspace: { kind: 'memory', files: many }, toolTimeoutMs: AFTER });
  try {
    for (const args of [{ pattern }, { pattern: 'x', glob: pattern }]) {
      const tool = args.glob ? 'grep' : 'glob';
      const t0 = performance.now();
      const r = await s.tool(tool, args);
      const ms = performance.now() - t0;
      assert.equal(kindOf(r), 'timeout', `${tool}: ${r.output}`);
      console.log(`  ${tool} with 720 alternatives over 20,000 files: timed out after ${Math.round(ms)} ms`);
      assert.ok(ms < AFTER + BOUND);
    }
  } finally {
    await s.close();
  }
  const s2 = await createSession({ workspace: { kind: 'memory', files: many } });
  try {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), AFTER);
    await assert.rejects(s2.tool('glob', { pattern }, { signal: ac.signal }), (e) => e.code === 'ABORTED');
    const t1 = performance.now();
    assert.equal((await s2.tool('ls', { path: 'src/d1' })).exitCode, 0);
    assert.ok(performance.now() - t1 < BOUND, 'the next call waited for the aborted glob');
  } finally {
    await s2.close();
  }
});

// Issue 18: the first call of a session in a fresh process (nothing of
// the wasm has run yet) is aborted promptly. A grep over 100 MB (100 files
// of 1 MB, no match; no literal for the prefilter: seconds of regexp
// work) is aborted 100 ms after it starts; the time from then (the
// timer's due time, so a blocked event loop counts) to the rejection is
// printed, the goal being 200 ms (bench/session.bench.mjs measures it).
// The assertion is BOUND, for a loaded machine: before the wasm was
// compiled eagerly, and before the start stopped running inside Node's
// platform drain (the next test), the loop stood still 0.6-4 s at load 20.
test('the first call of a session, a grep over 100 MB, settles promptly when aborted', { timeout: 120_000 }, async () => {
  const { spawnSync } = await import('node:child_process');
  const { dirname } = await import('node:path');
  const { fileURLToPath } = await import('node:url');
  const src = `import { createSession } from '@a3s-lab/code-wasm';
const body = ('abcdefghij'.repeat(9) + 'klmnopqrs\\n').repeat(10000);
const files = {};
for (let i = 0; i < 100; i++) files['d' + (i % 10) + '/f' + i + '.txt'] = body;
const s = await createSession({ workspace: { kind: 'memory', files } });
const ac = new AbortController();
const due = performance.now() + 100;
setTimeout(() => ac.abort(), 100);
let out;
try {
  const r = await s.tool('grep', { pattern: '[a-c][x-z]{2}', output_mode: 'count' }, { signal: ac.signal });
  out = { completed: true, output: r.output };
} catch (e) {
  out = { code: e.code, ms: Math.round(performance.now() - due) };
}
await s.close();
console.log(JSON.stringify(out));`;
  const c = spawnSync(process.execPath, ['--input-type=module', '-e', src], { encoding: 'utf8', cwd: dirname(fileURLToPath(import.meta.url)) });
  assert.equal(c.status, 0, c.stderr);
  const out = JSON.parse(c.stdout.trim().split('\n').pop());
  if (out.completed) {
    // The grep finished within 100 ms: nothing to abort (a fast machine).
    assert.match(out.output, /No matches/);
    return;
  }
  console.log(`  first call aborted: settled ${out.ms} ms after the abort was due (goal 200 ms)`);
  assert.equal(out.code, 'ABORTED');
  assert.ok(out.ms < BOUND, `settled ${out.ms} ms after the abort was due`);
});

// The cause of the slow first abort: Node waited for V8's background
// compiles. While the wasm compiled and Go started, nothing held the
// libuv loop, so uv_run returned and Node drained V8's platform tasks:
// the compile, then the rest of the start, createSession and the caller's
// next steps ran inside that drain, and its next round blocked until the
// wasm tier-up compiles ended (2-6 s at load 20). An unref'd timer shows
// it: it fires only while uv_run turns. With the drain its longest wait
// was 85-90 % of the start (the compile and after: 2.9 of 3.4 s, 3.4 of
// 4.0 s at load 23); with the loop held, 12-20 % (the longest synchronous
// stretch). Both scale with the load, so the bound is a share.
test('the loop keeps turning while the first session of a process starts', { timeout: 120_000 }, async () => {
  const { spawnSync } = await import('node:child_process');
  const { dirname } = await import('node:path');
  const { fileURLToPath } = await import('node:url');
  const src = `import { createSession } from '@a3s-lab/code-wasm';
let last = performance.now(), gap = 0;
const tick = setInterval(() => { const t = performance.now(); gap = Math.max(gap, t - last); last = t; }, 5);
tick.unref();
const t0 = performance.now();
const s = await createSession({ workspace: { kind: 'memory', files: { 'a.txt': 'a\\n' } } });
const t1 = performance.now();
const start = { gap: Math.round(Math.max(gap, t1 - last)), ms: Math.round(t1 - t0) };
await s.close();
clearInterval(tick);
console.log(JSON.stringify(start));`;
  const c = spawnSync(process.execPath, ['--input-type=module', '-e', src], { encoding: 'utf8', cwd: dirname(fileURLToPath(import.meta.url)) });
  assert.equal(c.status, 0, c.stderr);
  const out = JSON.parse(c.stdout.trim().split('\n').pop());
  console.log(`  first createSession: ${out.ms} ms; the event loop waited at most ${out.gap} ms for a turn`);
  assert.ok(out.gap < out.ms / 2, `the event loop stood still ${out.gap} ms of a ${out.ms} ms start`);
});
