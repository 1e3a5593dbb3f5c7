// The workerd program engine's instance pool (ptc-quickjs.mjs
// makeQuickJSPool): a run gets a fresh QuickJS runtime and realm in a
// reused instance of the module, and an instance is taken back only
// after a run that succeeded. Counted, not timed: instantiations of the QuickJS
// module and the pool's idle instances.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';

const pkg = './node_modules/@a3s-lab/code-wasm';
const { runProgram, makeQuickJSPool, workerMain } = await import(`${pkg}/src/ptc-quickjs.mjs`);
const { WORKERD_LIMITS } = await import(`${pkg}/src/ptc-workerd.mjs`);
const wasm = await WebAssembly.compile(await readFile(new URL(`${pkg}/dist/quickjs.wasm`, import.meta.url)));

// instantiations counts WebAssembly.instantiate calls of the QuickJS module.
let instantiations = 0;
const orig = WebAssembly.instantiate;
WebAssembly.instantiate = function (m, ...rest) {
  if (m === wasm) instantiations++;
  return orig.call(this, m, ...rest);
};

const run = (pool, source, limits = {}) => new Promise((resolve) => {
  const init = { name: 'p.js', source, inputs: '{}', methods: [], tools: [], timeoutMs: 20000, ...limits };
  runProgram(init, (m) => { if (m.t === 'done') setTimeout(() => resolve(m), 0); }, { ...WORKERD_LIMITS, wasmModule: wasm, pool });
});

// Without images (a run in a realm of its own, e.g. after its arguments
// changed) the realm is disposed, and a failed run drops its instance.
test('a run that succeeds hands its instance back; the next run reuses it with a fresh realm', async () => {
  const pool = makeQuickJSPool(wasm, WORKERD_LIMITS.memoryCap, { images: false });
  const i0 = instantiations;
  const a = await run(pool, 'globalThis.leak = "from run 1"; async function run() { return 1 }');
  assert.deepEqual([a.ok, a.value], [true, '1']);
  assert.equal(pool.idle(), 1, 'taken back after a clean end');
  const b = await run(pool, 'async function run() { return typeof globalThis.leak }');
  assert.deepEqual([b.ok, b.value], [true, '"undefined"'], 'nothing of run 1 in run 2\'s realm');
  assert.equal(pool.idle(), 1);
  assert.equal(instantiations - i0, 1, 'two runs, one instance');
  const c = await run(pool, 'async function run() { throw new Error("boom") }');
  assert.equal(c.ok, false);
  assert.match(c.error.message, /boom/);
  assert.equal(pool.idle(), 0, 'a failed run drops its instance');
});

test('a stack overflow, a stopped loop, an exhausted memory and a big allocation drop the instance; the next run succeeds', async () => {
  const pool = makeQuickJSPool(wasm, WORKERD_LIMITS.memoryCap, { images: false });
  const cases = [
    ['stack overflow', 'async function run() { const f = () => f() + 1; return f() }', {}, /stack|RangeError/i],
    ['stopped loop', 'async function run() { for (;;) {} }', { timeoutMs: 200 }, /stopped/],
    ['memory exhausted, error caught', 'async function run() { const a = []; try { for (;;) a.push(new Uint8Array(1 << 20)) } catch (e) { a.length = 0; throw e } }', {}, /memory/],
    ['20 MiB held', 'async function run() { const a = []; for (let i = 0; i < 20; i++) a.push(new Uint8Array(1 << 20).fill(1)); return a.length }', {}, null],
  ];
  for (const [what, source, limits, err] of cases) {
    assert.equal((await run(pool, 'async function run() { return 0 }')).ok, true);
    assert.equal(pool.idle(), 1, `${what}: warm instance`);
    const d = await run(pool, source, limits);
    if (err) {
      assert.equal(d.ok, false, what);
      assert.match(d.error.message, err, what);
    } else {
      assert.deepEqual([d.ok, d.value], [true, '20'], what);
    }
    assert.equal(pool.idle(), 0, `${what}: the instance is dropped`);
    const next = await run(pool, 'async function run() { return [1, 2].map((x) => x * 2) }');
    assert.deepEqual([next.ok, next.value], [true, '[2,4]'], `${what}: the next run`);
  }
});

test('a run with a memoryBytes other than the pool\'s gets an instance of its own', async () => {
  const pool = makeQuickJSPool(wasm, WORKERD_LIMITS.memoryCap);
  const i0 = instantiations;
  const d = await run(pool, 'async function run() { return new ArrayBuffer(6 << 20).byteLength }', { memoryBytes: 4 << 20 });
  assert.equal(d.ok, false, 'its own 4 MiB cap holds');
  assert.match(d.error.message, /out of memory/);
  assert.equal(pool.idle(), 0);
  assert.equal(instantiations - i0, 1);
});

// With stackBytes the pool makes the next run's runtime and realm while
// nothing else runs (a task after the instance is taken back); a run takes
// that realm once, and every bound of a realm made on the spot holds in it.
const turn = () => new Promise((r) => setTimeout(r, 20));

test('a realm made ahead is taken by one run only, and holds nothing of the run before', async () => {
  const pool = makeQuickJSPool(wasm, WORKERD_LIMITS.memoryCap, { stackBytes: WORKERD_LIMITS.stackBytes });
  const a = await run(pool, 'globalThis.leak = 1; Object.prototype.polluted = 1; async function run() { return 1 }');
  assert.equal(a.ok, true);
  await turn();
  assert.deepEqual([pool.idle(), pool.spares(), pool.made()], [1, 1, 1], 'one idle instance holding one realm made ahead');
  const b = await run(pool, 'async function run() { return [typeof globalThis.leak, typeof ({}).polluted, typeof print, typeof std] }');
  assert.deepEqual([b.ok, b.value], [true, '["undefined","undefined","undefined","undefined"]'], 'nothing of run 1, no engine globals');
  // b's realm was called for the arguments of two runs in a row: its
  // instance's image was taken before b's script ran and is put back after.
  assert.deepEqual([pool.spares(), pool.restored()], [1, 1], 'the image of b\'s realm, put back');
  const c = await run(pool, 'globalThis.leak = 3; async function run() { try { eval("1"); return "eval ran" } catch (e) { return e.name } }');
  assert.deepEqual([c.ok, c.value], [true, '"EvalError"'], 'code generation from strings is disabled');
  const d = await run(pool, 'async function run() { return [typeof globalThis.leak, typeof ({}).polluted] }');
  assert.deepEqual([d.ok, d.value], [true, '["undefined","undefined"]'], 'nothing of c in d\'s realm');
  await turn();
  assert.equal(pool.spares(), 1);
  assert.deepEqual([pool.made(), pool.restored()], [1, 3], 'one realm made ahead (for b), then images');
});

// Back to back no task runs between two runs, so no realm can be made
// ahead; the image of a realm whose prelude was called (taken once, before
// its script ran) is put back after each run instead.
test('back to back, each run in an image\'s realm puts the image back: the next sees nothing of it, draws other Math.random numbers, makes nothing', async () => {
  const pool = makeQuickJSPool(wasm, WORKERD_LIMITS.memoryCap, { stackBytes: WORKERD_LIMITS.stackBytes });
  const i0 = instantiations;
  for (let i = 0; i < 2; i++) assert.equal((await run(pool, 'async function run() { return 0 }')).ok, true);
  const made = pool.made(), r0 = pool.restored();
  const seen = new Set();
  const N = 30;
  for (let i = 0; i < N; i++) {
    // Each run looks for what the one before it left, then leaves the
    // same: globals, polluted prototypes, a replaced intrinsic, a heap of
    // strings (the heap grows past the image), a pending promise.
    const m = await run(pool, `var mark = [typeof globalThis.leak, typeof ({}).polluted, typeof [].x, typeof Math.max, typeof globalThis.kept];
      globalThis.leak = ${i}; Object.prototype.polluted = 1; Array.prototype.x = 1; Math.max = null;
      globalThis.kept = Array.from({ length: 20000 }, (_, j) => 'run ${i} ' + j); new Promise(() => {});
      async function run() { return [mark, Math.random(), kept.length] }`);
    assert.equal(m.ok, true, `run ${i}: ${m.error?.message}`);
    const [mark, r, n] = JSON.parse(m.value);
    assert.deepEqual(mark, ['undefined', 'undefined', 'undefined', 'function', 'undefined'], `run ${i} saw the run before it`);
    assert.equal(n, 20000);
    seen.add(r);
  }
  assert.equal(seen.size, N, 'each run draws its own Math.random numbers');
  assert.equal(pool.restored() - r0, N, 'every run put the image back');
  assert.equal(pool.made(), made, 'no realm was made');
  assert.equal(instantiations - i0, 1, 'one instance');
  // A run with other ctx methods drops the image and makes its realm; two
  // such runs in a row image theirs.
  const other = (/** @type {number} */ i) => new Promise((resolve) => {
    const init = { name: 'p.js', source: `async function run() { return [${i}, typeof globalThis.leak] }`, inputs: '{}', methods: ['tool'], tools: ['read'], timeoutMs: 20000 };
    runProgram(init, (m) => { if (m.t === 'done') setTimeout(() => resolve(m), 0); }, { ...WORKERD_LIMITS, wasmModule: wasm, pool });
  });
  const r1 = pool.restored();
  assert.deepEqual([(await other(1)).value, pool.restored()], ['[1,"undefined"]', r1], 'other arguments: no image');
  assert.deepEqual([(await other(2)).value, pool.restored()], ['[2,"undefined"]', r1 + 1], 'the same twice: imaged');
  assert.deepEqual([(await other(3)).value, pool.restored()], ['[3,"undefined"]', r1 + 2]);
});

// An image the pool takes while idle (prepare, for the arguments two runs
// in a row had: here told by hand, as a concurrent run would) is taken
// before any run set an interrupt handler; after the first run in it is
// put back, the next run's loop must still be stopped at its CPU budget.
// (The loop is finite, so a missing interrupt fails the test instead of
// hanging it.)
test('a loop in a realm put back from an image made while idle stops at its CPU budget or deadline', async () => {
  const { realmArgs, startLimits } = await import(`${pkg}/src/ptc-host.mjs`);
  const pool = makeQuickJSPool(wasm, WORKERD_LIMITS.memoryCap, { stackBytes: WORKERD_LIMITS.stackBytes });
  assert.equal((await run(pool, 'async function run() { return 1 }')).ok, true);
  const init = { name: 'p.js', source: '', inputs: '{}', methods: [], tools: [], timeoutMs: 20000 };
  pool.expect(realmArgs(init, startLimits(init).maxToolCalls));
  await turn();
  assert.deepEqual([pool.spares(), pool.made()], [1, 1], 'a realm called and imaged while idle');
  const loop = 'async function run() { let i = 0; for (; i < 5e7; i++) {} return i }';
  for (let k = 0; k < 3; k++) {
    const r0 = pool.restored();
    const m = await run(pool, loop, { timeoutMs: 200 });
    assert.equal(m.ok, false, `run ${k}: the loop ran to its end (${m.value})`);
    assert.match(m.error.message, /stopped at its (CPU budget|deadline)/, `run ${k}`);
    await turn();
    assert.equal(pool.restored(), r0 + 1, `run ${k}: the image put back`);
  }
});

// Two runs at once hold two instances, each with its own image; a run
// waits on a ctx call the host answers later, while the other runs.
test('two runs at once, each waiting on a ctx call, in two instances with their own images: each sees only its own realm', async () => {
  const pool = makeQuickJSPool(wasm, WORKERD_LIMITS.memoryCap, { stackBytes: WORKERD_LIMITS.stackBytes });
  const i0 = instantiations;
  // start runs a script whose ctx calls the host answers when told
  // (answer), and resolves with its done message.
  const start = (source) => {
    let receive = null, asked = null;
    const calls = [];
    const done = new Promise((resolve) => {
      const init = { name: 'p.js', source, inputs: '{}', methods: ['tool'], tools: [], timeoutMs: 20000 };
      runProgram(init, (m) => {
        if (m.t === 'call') { calls.push(m); asked?.(); }
        if (m.t === 'done') setTimeout(() => resolve(m), 0);
      }, { ...WORKERD_LIMITS, wasmModule: wasm, pool }).then((r) => { receive = r; });
    });
    const called = () => new Promise((r) => { if (calls.length) r(); else asked = r; });
    const answer = async (value) => {
      await called();
      while (!receive) await new Promise((r) => setTimeout(r, 1));
      const c = calls.shift();
      receive({ t: 'reply', id: c.id, ok: true, value: JSON.stringify(value) });
    };
    return { done, answer };
  };
  const script = (tag) => `var seen = [typeof globalThis.mine, typeof globalThis.theirs, typeof ({}).polluted];
    globalThis.mine = '${tag}'; Object.prototype.polluted = '${tag}';
    async function run(ctx) { const got = await ctx.tool('echo', { tag: '${tag}' }); return [seen, got, globalThis.mine] }`;
  for (let round = 0; round < 8; round++) {
    const a = start(script('a' + round)), b = start(script('b' + round));
    // Answer in either order: each run's answer reaches its own realm.
    if (round % 2) { await b.answer('for b' + round); await a.answer('for a' + round); }
    else { await a.answer('for a' + round); await b.answer('for b' + round); }
    const [ma, mb] = await Promise.all([a.done, b.done]);
    assert.equal(ma.ok, true, `round ${round} a: ${ma.error?.message}`);
    assert.equal(mb.ok, true, `round ${round} b: ${mb.error?.message}`);
    assert.deepEqual(JSON.parse(ma.value), [['undefined', 'undefined', 'undefined'], 'for a' + round, 'a' + round]);
    assert.deepEqual(JSON.parse(mb.value), [['undefined', 'undefined', 'undefined'], 'for b' + round, 'b' + round]);
  }
  assert.equal(instantiations - i0, 2, 'two instances, reused');
  assert.ok(pool.restored() >= 12, `images put back: ${pool.restored()}`);
});

// The image leaves out the C stack and reads sbrk's break: both are where
// ptc-quickjs.mjs says in the pinned build's .wasm.
test('the QuickJS build\'s layout is the one the images assume', async () => {
  const { QJS_LAYOUT } = await import(`${pkg}/src/ptc-quickjs.mjs`);
  const b = await readFile(new URL(`${pkg}/dist/quickjs.wasm`, import.meta.url));
  let p = 8;
  const uleb = () => { let r = 0, sh = 0, x; do { x = b[p++]; r += (x & 0x7f) * 2 ** sh; sh += 7; } while (x & 0x80); return r; };
  const sleb = () => { let r = 0, sh = 0, x; do { x = b[p++]; r |= (x & 0x7f) << sh; sh += 7; } while (x & 0x80); if (sh < 32 && (x & 0x40)) r |= -1 << sh; return r; };
  let stackTop = -1, dataEnd = 0, brk = -1;
  while (p < b.length) {
    const id = b[p++], size = uleb(), end = p + size;
    if (id === 6) { // globals: the first is the stack pointer, an i32.const
      uleb(); p += 2;
      assert.equal(b[p++], 0x41);
      stackTop = sleb();
    }
    if (id === 11) { // data: active segments at an i32.const
      for (let n = uleb(); n > 0; n--) {
        assert.equal(uleb(), 0, 'an active segment of memory 0');
        assert.equal(b[p++], 0x41);
        const at = sleb();
        p++; // end
        const len = uleb();
        if (at <= QJS_LAYOUT.BRK_AT && QJS_LAYOUT.BRK_AT < at + len) { // (the linker trims a segment's trailing zeros)
          const word = Buffer.alloc(4);
          b.copy(word, 0, p + QJS_LAYOUT.BRK_AT - at, p + Math.min(len, QJS_LAYOUT.BRK_AT + 4 - at));
          brk = word.readUInt32LE(0);
        }
        dataEnd = Math.max(dataEnd, at + len);
        p += len;
      }
    }
    p = end;
  }
  assert.equal(stackTop, QJS_LAYOUT.STACK_TOP, 'the stack pointer starts at STACK_TOP');
  assert.ok(dataEnd <= QJS_LAYOUT.STACK_BASE, `the static data (${dataEnd} B) lies below STACK_BASE`);
  assert.ok(b.includes(Buffer.from([0x41, 0x80, 0x80, 0xc0, 0x02])), 'the build stores a 5 MiB stack size (i32.const 5242880)');
  assert.ok(brk >= QJS_LAYOUT.STACK_TOP && brk < QJS_LAYOUT.STACK_TOP + (1 << 20), `sbrk's break starts at the heap's base (${brk})`);
});

test('in an image\'s realm the stack bound, the CPU budget, a throw and the deadline end the run, and the image put back serves the next; the memory cap drops the instance', async () => {
  const pool = makeQuickJSPool(wasm, WORKERD_LIMITS.memoryCap, { stackBytes: WORKERD_LIMITS.stackBytes });
  const cases = [
    ['memory cap', 'async function run() { const a = []; for (;;) a.push(new Uint8Array(1 << 20).fill(1)) }', {}, /memory/, false],
    ['stack bound', 'async function run() { const f = () => f() + 1; return f() }', {}, /stack|RangeError/i, true],
    ['CPU budget', 'async function run() { for (;;) {} }', { timeoutMs: 200 }, /stopped/, true],
    ['a throw', 'async function run() { throw new TypeError("no") }', {}, /TypeError: no/, true],
    ['the deadline, awaiting', 'async function run() { await new Promise(() => {}) }', { timeoutMs: 200 }, /deadline/, true],
  ];
  for (const [what, source, limits, err, kept] of cases) {
    for (let i = 0; i < 2; i++) assert.equal((await run(pool, 'async function run() { return 0 }')).ok, true);
    await turn();
    assert.equal(pool.spares(), 1, `${what}: a realm waits`);
    const made = pool.made(), restored = pool.restored();
    const d = await run(pool, `globalThis.leak = 1; Object.prototype.polluted = 1; ${source}`, limits);
    assert.equal(d.ok, false, what);
    assert.match(d.error.message, err, what);
    await turn();
    if (kept) {
      assert.deepEqual([pool.idle(), pool.spares(), pool.made(), pool.restored()], [1, 1, made, restored + 1], `${what}: the image put back`);
      const n = await run(pool, 'async function run() { return [typeof globalThis.leak, typeof ({}).polluted, [3, 1, 2].sort().join()] }');
      assert.deepEqual([n.ok, n.value], [true, '["undefined","undefined","1,2,3"]'], `${what}: nothing of it in the next run`);
    } else {
      assert.deepEqual([pool.idle(), pool.spares(), pool.made()], [0, 0, made], `${what}: the instance is dropped (its memory grew to the cap)`);
    }
  }
});

// A program worker's spare (Node, browsers) gets {t:'prepare'} while it
// waits: QuickJS loaded and a realm made once, used by its one run when
// the memoryBytes match; another memoryBytes loads its own instance.
test('a worker prepared ahead runs its script in the prepared instance; another memoryBytes gets its own', async () => {
  // Instantiations over prepare and start together (counted, not timed):
  // 1 when the run uses the prepared instance, 2 when it needs its own.
  for (const [memoryBytes, want] of [[64 << 20, 1], [8 << 20, 2]]) {
    const out = [];
    const i0 = instantiations;
    const done = new Promise((resolve) => {
      const onMessage = workerMain((m) => { out.push(m); if (m.t === 'done') resolve(m); }, 256 << 10);
      onMessage({ t: 'prepare', wasmModule: wasm, memoryBytes: 64 << 20 });
      setTimeout(() => onMessage({ t: 'start', wasmModule: wasm, init: { name: 'p.js', source: 'async function run() { try { new ArrayBuffer(48 << 20); return "allocated" } catch (e) { return String(e) } }', inputs: '{}', methods: [], tools: [], memoryBytes } }), 50);
    });
    const d = await done;
    assert.equal(instantiations - i0, want, `memoryBytes ${memoryBytes}: instantiations`);
    assert.equal(d.ok, true);
    assert.equal(d.value, memoryBytes === 64 << 20 ? '"allocated"' : '"InternalError: out of memory"', 'the run\'s own memory cap');
    assert.deepEqual(out.map((m) => m.t), ['running', 'done']);
  }
});

// The pool also calls the prelude ahead with the realm arguments of the
// last runs (ctx methods, tools, script name, maxToolCalls) once two runs
// in a row had the same: a run with those takes that realm, its host
// functions reaching this run; a run with other ones gets a realm of its
// own, built for its arguments, and the next realms are left uncalled.
test('a realm called ahead serves a run with the same ctx, tools and name only', async () => {
  const pool = makeQuickJSPool(wasm, WORKERD_LIMITS.memoryCap, { stackBytes: WORKERD_LIMITS.stackBytes });
  const shape = 'async function run(ctx) { return [Object.keys(ctx).sort().join(), Object.keys(ctx.tools).sort().join()] }';
  const A = { methods: ['glob', 'tool'], tools: ['glob', 'read'] };
  for (let i = 0; i < 2; i++) {
    const a = await run(pool, shape, A);
    assert.deepEqual([a.ok, a.value], [true, '["glob,tool,tools","glob,read"]']);
    await turn();
  }
  assert.deepEqual([pool.spares(), pool.ahead()], [1, 0], 'two runs with the same arguments: a realm called for them waits');
  const b = await run(pool, shape, A);
  assert.deepEqual([b.ok, b.value], [true, '["glob,tool,tools","glob,read"]'], 'the same ctx in the realm called ahead');
  assert.equal(pool.ahead(), 1, 'b took the realm called ahead');
  await turn();
  const B = { methods: ['grep', 'tool'], tools: ['grep', 'read', 'write'] };
  const c = await run(pool, shape, B);
  assert.deepEqual([c.ok, c.value], [true, '["grep,tool,tools","grep,read,write"]'], 'other tools: a realm of its own');
  assert.equal(pool.ahead(), 1);
  await turn();
  // After a change the next realm is left uncalled: a run with A again
  // calls it for its own arguments.
  const c2 = await run(pool, shape, A);
  assert.deepEqual([c2.ok, c2.value], [true, '["glob,tool,tools","glob,read"]']);
  assert.equal(pool.ahead(), 1);
  await turn();
  // The script name filters the stack lines an error reports: a realm
  // called ahead for another name would lose the line.
  const d = await run(pool, 'async function run() {\n  const x = 1;\n  throw new Error("at line three " + x)\n}', { name: 'other.js', ...A });
  assert.equal(d.ok, false);
  assert.match(d.error.message, /at line three 1/);
  assert.equal(d.error.line, 3, 'the line of the throw in other.js');
  assert.equal(pool.ahead(), 1, 'another name: a realm of its own');
  // A failed run drops its instance; the next realms are fresh and
  // nothing of an earlier run is in them; eval is tamed in a realm
  // called ahead as in any other.
  for (let i = 0; i < 2; i++) {
    const e = await run(pool, 'globalThis.leak = 1; async function run() { return typeof globalThis.leak }', { name: 'third.js', ...A });
    assert.deepEqual([e.ok, e.value], [true, '"number"']);
    await turn();
  }
  const f = await run(pool, 'async function run() { return [typeof globalThis.leak, typeof eval("1")] }', { name: 'third.js', ...A });
  assert.equal(f.ok, false, 'eval is tamed in a realm called ahead too');
  assert.match(f.error.message, /EvalError|code generation/);
  assert.equal(pool.ahead(), 2, 'f took the realm called ahead for the two e runs\' arguments');
});

// A run hands its instance back in a task after its answer; a run that
// starts before that task (back to back, in the same turn) takes it back
// itself first: no second instance is loaded.
test('back-to-back runs in one turn reuse the instance whose return was still deferred', async () => {
  const pool = makeQuickJSPool(wasm, WORKERD_LIMITS.memoryCap, { stackBytes: WORKERD_LIMITS.stackBytes });
  const now = (source) => new Promise((resolve) => {
    const init = { name: 'p.js', source, inputs: '{}', methods: [], tools: [], timeoutMs: 20000 };
    runProgram(init, (m) => { if (m.t === 'done') queueMicrotask(() => resolve(m)); }, { ...WORKERD_LIMITS, wasmModule: wasm, pool });
  });
  assert.equal((await now('async function run() { return 0 }')).ok, true);
  const i0 = instantiations;
  for (let i = 0; i < 5; i++) {
    const d = await now(`async function run() { return ${i} }`);
    assert.deepEqual([d.ok, d.value], [true, String(i)]);
  }
  assert.equal(instantiations - i0, 0, 'five runs back to back, no new instance');
  await turn();
  assert.equal(pool.idle(), 1);
});
