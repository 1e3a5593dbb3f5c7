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
  const { run, runtime } = kinds['ptc.start']({ name: 'p.js', source, inputs: {}, methods: [], tools: [], timeoutMs });
  assert.equal(runtime, 'quickjs-workerd');
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
