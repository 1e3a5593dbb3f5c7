// The `program` engine of the JavaScript hosts (PROTOCOL.md §4 "PTC"),
// shared by Node (ptc-node-worker.mjs) and browsers (ptc-browser-worker.mjs):
// the script runs in QuickJS (quickjs-ng) compiled to WebAssembly, never in
// a realm of the host's own engine. Each program gets its own worker (which
// imports this module, runs one script and is terminated on ptc.stop) and
// its own QuickJS runtime:
//
// - the realm holds ECMAScript globals only, `ctx` and the script: nothing
//   of the host exists in it but three bridge functions kept in the
//   prelude's closure (code generation from strings is tamed there too);
// - every allocation of the script (objects, strings, ArrayBuffer) is in
//   the wasm memory, capped at memoryBytes beyond the engine's image (at
//   the cap QuickJS throws a catchable out-of-memory error); QuickJS has
//   no WebAssembly object;
// - the QuickJS stack is bounded (stackBytes), an interrupt handler stops
//   the script at its deadline, and any fault of the wasm itself ends the
//   program (the worker is discarded, nothing else is touched);
// - ctx calls are counted inside the realm (maxToolCalls: later calls are
//   refused there and never leave it), at most maxInFlight are outstanding
//   at the host (the rest wait here in order), and a call's arguments and
//   the script's result are at most maxResultBytes of JSON.
import { QuickJSWASMModule } from 'quickjs-emscripten-core';
import { QuickJSFFI } from '@jitl/quickjs-ng-wasmfile-release-sync/ffi';
import loadEmscripten from '@jitl/quickjs-ng-wasmfile-release-sync/emscripten-module';
import { startLimits, realmArgs, realmStreak } from './ptc-host.mjs';
// The realm's side of the engine, one source with the native engine
// (ptc/qjsengine/prelude.js, generated into ptc-prelude.mjs):
// (send, finish, violation, methodsJSON, toolsJSON, scriptName, maxToolCalls) => {deliver, start, fail}.
import { PRELUDE } from './ptc-prelude.mjs';

// utf8Length counts the UTF-8 bytes of s (a lone surrogate counts 3, as
// TextEncoder writes U+FFFD).
function utf8Length(s) {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) { n += 2; i++; }
    else n += 2;
  }
  return n;
}

// The wasm's whole memory is capped at its initial 16 MiB (code data, C
// stack, the runtime) plus memoryBytes: QuickJS's own memory limit counts
// every allocation as 8 bytes in this build (quickjs-ng has no
// malloc_usable_size under Emscripten), so it stops one huge allocation
// but not many 1 MiB ones. At the cap malloc fails and QuickJS throws its
// out-of-memory error, which the script may catch.
const PAGE = 65536;
const IMAGE_BYTES = 16 << 20;

// loadQuickJS instantiates the QuickJS wasm: from wasmModule when the
// spawner passes one it got from an earlier worker, else by the variant's
// own loader, whose compiled module is returned too so the spawner can
// hand it to the next worker (a fetch and a compile saved per program).
// It assembles the module as quickjs-emscripten's
// newQuickJSWASMModuleFromVariant does, from static imports: bundlers
// build module workers as one chunk by default (Vite's worker.format
// "iife"), which the variant's dynamic imports would forbid.
async function loadQuickJS(wasmModule, wasmMemory) {
  const W = WebAssembly;
  const arg = { wasmMemory };
  let compiled = null;
  const orig = { instantiate: W.instantiate, instantiateStreaming: W.instantiateStreaming };
  if (wasmModule) {
    arg.instantiateWasm = (imports, done) => { W.instantiate(wasmModule, imports).then((inst) => done(inst, wasmModule)); return {}; };
  } else {
    const tap = (r) => { if (r && r.module instanceof W.Module) compiled = r.module; return r; };
    W.instantiate = (...a) => orig.instantiate.apply(W, a).then(tap);
    if (orig.instantiateStreaming) W.instantiateStreaming = (...a) => orig.instantiateStreaming.apply(W, a).then(tap);
  }
  try {
    // The variant declares its loader's default export loosely (not callable).
    const mod = await /** @type {any} */ (loadEmscripten)(arg);
    mod.type = 'sync';
    return { QuickJS: new QuickJSWASMModule(mod, new QuickJSFFI(mod)), compiled };
  } finally {
    Object.assign(W, orig);
  }
}

// makeQuickJSPool keeps loaded QuickJS instances for a host whose scripts
// run on its own thread (workerd), where instantiating the module and its
// 16 MiB memory for every run was most of a trivial program's time. A run
// still gets a fresh runtime and realm; the instance it ran in is taken
// back only after the script succeeded (a failure may be the engine's own:
// after a stack overflow this QuickJS build leaks the runtime's objects
// without a word), once its context and runtime were disposed without
// error and its memory had not grown past POOL_GROWTH beyond the image;
// anything else drops it. (A run in the realm of the instance's image is
// the exception: after any end but a wasm fault the image is put back,
// which erases leaks too; see STACK_TOP.) memoryBytes: the cap of the
// pooled instances (runs with another memoryBytes get an instance of
// their own).
//
// With stackBytes, the pool also makes the next run's runtime and realm
// ahead of it: a task after an instance is taken back creates a runtime
// (memoryBytes, stackBytes), its context, and the prelude's function,
// which were two thirds of a trivial program's engine time (QuickJS
// compiles the prelude at ~3 bytes/µs here). When the pool knows the
// realm arguments of the last run (its ctx methods, tools, script name
// and maxToolCalls: `expect`), it also calls the prelude with them, which
// locks the realm down and builds ctx (~0.4 ms more); its three host
// functions then reach the run through `hooks`, which the run that takes
// the realm fills. A run with other arguments drops that realm and makes
// its own. No script ever ran in such a realm; the run that takes the
// instance takes it (once) and sets its interrupt handler (RATIONALE.md
// "Why do workerd programs share QuickJS instances?"). With images (see
// STACK_TOP below), a realm called ahead is not used up: its instance's
// memory is put back after the run.
const POOL_GROWTH = 8 << 20;

// Images. Back to back, a run found no realm made ahead (making one, ~2 ms
// here, is most of a trivial program), so the pool also keeps, per idle
// instance, an image of its memory taken right after a realm's prelude
// was called ahead, and after a run in that realm puts the image back
// instead of disposing the realm and making the next: the instance is
// then, byte for byte, as it was before any script ran in it (RATIONALE.md
// "Why does a workerd run put back an image of its instance?"). The image
// leaves out the C stack, where nothing is live between calls: the pinned
// build (@jitl/quickjs-ng-wasmfile-release-sync 0.32.0, Emscripten's
// STACK_SIZE 5 MiB) keeps its static data below STACK_BASE and its heap
// above STACK_TOP, the initial value of its stack pointer (a test reads
// both from the .wasm). What a restore cannot reset is the JS side of
// quickjs-emscripten: handles it caches (LAZY) made during a run would
// point into freed memory, so such an instance is dropped instead, and
// the runtime's interrupt handler, which each run removes and sets.
const STACK_TOP = 5342832;
const STACK_BASE = STACK_TOP - (5 << 20);
const BRK_AT = 96576; // sbrk's break, a static word (its initial value is the heap's base)
const IMAGE_MAX = 4 << 20; // a heap over this is not copied (a restore would cost more than a realm)
export const QJS_LAYOUT = { STACK_TOP, STACK_BASE, BRK_AT };
const LAZY = ['_undefined', '_null', '_true', '_false', '_global', '_BigInt', '_Symbol', '_SymbolIterator', '_SymbolAsyncIterator'];

/**
 * @typedef {{low: Uint8Array, high: Uint8Array, realm: Spare, lazy: string, seedAt: number}} Image
 */

// ctxPointer is the address of vm's JSContext (quickjs-emscripten keeps it protected).
const ctxPointer = (/** @type {any} */ vm) => /** @type {number} */ (vm.ctx.value);

// lazyOf names the handles vm has cached (quickjs-emscripten's getters).
const lazyOf = (/** @type {any} */ vm) => LAZY.filter((k) => vm[k]).join(',');

// takeImage copies inst's memory for realm: the static data and the heap
// up to the break (where sbrk keeps it, BRK_AT: every block malloc owns
// lies below it), or answers null when the heap is over IMAGE_MAX.
/** @param {Pooled} inst @param {Spare} realm @param {number} seedAt @returns {Image | null} */
function takeImage(inst, realm, seedAt) {
  for (const k of ['undefined', 'null', 'true', 'false', 'global']) void realm.vm[k]; // cached now, not in a run
  const buf = inst.memory.buffer;
  const brk = new DataView(buf).getUint32(BRK_AT, true);
  if (brk < STACK_TOP || brk > buf.byteLength || brk - STACK_TOP > IMAGE_MAX) return null;
  return { low: new Uint8Array(buf, 0, STACK_BASE).slice(), high: new Uint8Array(buf, STACK_TOP, brk - STACK_TOP).slice(), realm, lazy: lazyOf(realm.vm), seedAt };
}

// restoreImage puts inst's image back and gives its realm a fresh seed for
// Math.random (in the image, every run would draw the same numbers); it
// answers false when the instance cannot be reused.
/** @param {Pooled} inst */
function restoreImage(inst) {
  const img = inst.image;
  if (!img || lazyOf(img.realm.vm) !== img.lazy) return false;
  const buf = inst.memory.buffer;
  const bytes = new Uint8Array(buf);
  bytes.set(img.low, 0);
  bytes.set(img.high, STACK_TOP);
  const seed = new Uint32Array(2);
  crypto.getRandomValues(seed);
  seed[0] |= 1; // xorshift's state is never zero
  const view = new DataView(buf);
  const at = ctxPointer(img.realm.vm) + img.seedAt;
  view.setUint32(at, seed[0], true);
  view.setUint32(at + 4, seed[1], true);
  if (img.realm.hooks) Object.assign(img.realm.hooks, { send: null, finish: null, violation: null });
  inst.spare = img.realm;
  return true;
}

// findSeed answers where a context keeps its Math.random state (an offset
// from the context's pointer), or -1: the one 8-byte field that changes
// when Math.random is called and not otherwise, and that, set to one
// value twice, makes Math.random answer the same number twice.
/** @param {QuickJSWASMModule} QuickJS @param {WebAssembly.Memory} memory */
function findSeed(QuickJS, memory) {
  const rt = QuickJS.newRuntime(), vm = rt.newContext();
  try {
    const p = ctxPointer(vm), N = 1024;
    const ev = (/** @type {string} */ s) => {
      const r = vm.evalCode(s);
      if (r.error) { r.error.dispose(); throw new Error('probe'); }
      const v = vm.dump(/** @type {any} */ (r).value);
      /** @type {any} */ (r).value.dispose();
      return v;
    };
    const diff = (/** @type {string} */ s) => {
      const a = new Uint8Array(memory.buffer, p, N).slice();
      ev(s);
      const b = new Uint8Array(memory.buffer, p, N);
      const o = [];
      for (let i = 0; i < N; i++) if (a[i] !== b[i]) o.push(i);
      return o;
    };
    ev('Math.random() + 0.25');
    const found = new Set();
    for (let k = 0; k < 4; k++) {
      const plain = new Set(diff('0.75000000 + 0.25'));
      for (const o of diff('Math.random() + 0.25')) if (!plain.has(o)) found.add(o);
    }
    const at = Math.min(...found) & ~7;
    if (!found.size || [...found].some((o) => o < at || o >= at + 8)) return -1;
    const set = (/** @type {number} */ lo) => { const v = new DataView(memory.buffer); v.setUint32(p + at, lo, true); v.setUint32(p + at + 4, 7, true); };
    set(12345); const x = ev('Math.random()');
    set(12345); const y = ev('Math.random()');
    set(54321); const z = ev('Math.random()');
    return x === y && x !== z ? at : -1;
  } catch {
    return -1;
  } finally {
    vm.dispose();
    rt.dispose();
  }
}

// hostArgs are the prelude's arguments for realm arguments e: its three
// host functions, which reach whatever hooks holds when they are called
// (a realm made ahead gets its run's later), and e's fields. hooks.send
// takes and answers plain values (the call's id, or its answer given at
// once, or '~' and a refusal); the library's way wraps them in handles.
/** @param {any} v @param {Hooks} hooks @param {RealmArgs} e */
const hostArgs = (v, hooks, e) => {
  const send = (/** @type {any} */ method, /** @type {any} */ json) => {
    const r = hooks.send ? hooks.send(v.getString(method), v.getString(json)) : '~the program has not started';
    return typeof r === 'number' ? v.newNumber(r) : v.newString(r);
  };
  directSend(v, send, hooks);
  return [
    v.newFunction('send', send),
    v.newFunction('finish', (/** @type {any[]} */ ...a) => { hooks.finish?.(...a); }),
    v.newFunction('violation', (/** @type {any[]} */ ...a) => { hooks.violation?.(...a); }),
    v.newString(e.methods), v.newString(e.tools), v.newString(e.name), v.newNumber(e.maxToolCalls)];
};

// directSend gives the prelude's send (one call per ctx call) a shorter
// way from QuickJS to the host than quickjs-emscripten's: its callback
// wraps every host function call in a scope, a generator (for async
// host functions) and a handle per argument and per result, ~20 % of a
// ctx call's time in QuickJS (RATIONALE.md "Why does a ctx call skip
// quickjs-emscripten's callback?"). Here send's two string arguments are
// read and its answer (hooks.send's: a string or a call id) is made
// through the module's FFI directly. Any other host function, or a vm
// of a build without these internals, takes the library's way.
/** @param {any} vm @param {Function} send @param {Hooks} hooks */
function directSend(vm, send, hooks) {
  const cb = vm.cToHostCallbacks, ffi = vm.ffi, mod = vm.module, refs = vm.runtime?.hostRefs;
  if (!cb || typeof cb.callFunction !== 'function' || !refs || typeof refs.get !== 'function' || !ffi || !mod) return;
  for (const f of [ffi.QTS_GetString, ffi.QTS_FreeCString, ffi.QTS_ArgvGetJSValueConstPointer, ffi.QTS_NewString, ffi.QTS_NewFloat64,
    mod.UTF8ToString, mod.lengthBytesUTF8, mod.stringToUTF8, mod._malloc, mod._free]) if (typeof f !== 'function') return;
  const library = cb.callFunction;
  const text = (/** @type {number} */ ctx, /** @type {number} */ argv, /** @type {number} */ i) => {
    const c = ffi.QTS_GetString(ctx, ffi.QTS_ArgvGetJSValueConstPointer(argv, i));
    const s = mod.UTF8ToString(c);
    ffi.QTS_FreeCString(ctx, c);
    return s;
  };
  // The answer is a new JSValue the C side takes (as the library's own
  // answer is); 0 (undefined in QuickJS) only when malloc fails, the
  // wasm memory at its cap.
  cb.callFunction = (/** @type {number} */ ctx, /** @type {number} */ self, /** @type {number} */ argc, /** @type {number} */ argv, /** @type {number} */ id) => {
    if (argc !== 2 || !hooks.send || refs.get(id) !== send) return library(ctx, self, argc, argv, id);
    let r;
    try {
      r = hooks.send(text(ctx, argv, 0), text(ctx, argv, 1));
    } catch (e) {
      r = `~ctx call failed in the host: ${/** @type {any} */ (e)?.message ?? e}`;
    }
    if (typeof r === 'number') return ffi.QTS_NewFloat64(ctx, r);
    const len = mod.lengthBytesUTF8(r) + 1, p = mod._malloc(len);
    if (!p) return 0;
    mod.stringToUTF8(r, p, len);
    const v = ffi.QTS_NewString(ctx, p);
    mod._free(p);
    return v;
  };
}

// fastCalls gives the two calls a run makes into QuickJS on every ctx
// call (running its jobs, then the prelude's flush) a shorter way than
// quickjs-emscripten's: its executePendingJobs allocates an out pointer,
// asks the result's typeof through a C string and wraps it in handles and
// a result object, and its callFunction copies an argument array into
// the heap and wraps the answer too. Here the FFI is called directly,
// with the context's own 4-byte scratch word (allocated with it, so inside
// an image: "Why does a workerd run put back an image of its instance?")
// as the out pointer. Each answers null, or a handle of the exception,
// as the library's result's error would be. null (the library's way)
// for a build without these internals.
/** @param {any} vm */
function fastCalls(vm) {
  const ffi = vm.ffi, mod = vm.module, out = vm.uint32Out?.value, mem = vm.memory;
  if (!ffi || !mod || !out || typeof out.ptr !== 'number' || !mem || typeof mem.heapValueHandle !== 'function') return null;
  for (const f of [ffi.QTS_ExecutePendingJob, ffi.QTS_FreeValuePointerRuntime, ffi.QTS_FreeValuePointer, ffi.QTS_Typeof, ffi.QTS_Call,
    ffi.QTS_ResolveException, mod.UTF8ToString, mod._free]) if (typeof f !== 'function') return null;
  const ctx = vm.ctx?.value, rt = vm.rt?.value, undef = vm.undefined?.value;
  if (typeof ctx !== 'number' || typeof rt !== 'number' || typeof undef !== 'number' || !(mod.HEAPU8 instanceof Uint8Array)) return null;
  let words = new Uint32Array(0);
  return {
    // jobs runs up to max pending jobs (QTS_ExecutePendingJob: the count
    // run, or the exception one of them threw).
    jobs(/** @type {number} */ max) {
      const v = ffi.QTS_ExecutePendingJob(rt, max, out.ptr);
      if (words.buffer !== mod.HEAPU8.buffer) words = new Uint32Array(mod.HEAPU8.buffer); // (memory grown)
      const c = words[out.ptr >> 2];
      if (c === 0) {
        ffi.QTS_FreeValuePointerRuntime(rt, v);
        return null;
      }
      const t = ffi.QTS_Typeof(c, v), type = mod.UTF8ToString(t);
      mod._free(t);
      if (type === 'number') {
        ffi.QTS_FreeValuePointer(c, v);
        return null;
      }
      return mem.heapValueHandle(v); // (the runtime has this one context)
    },
    // call0 calls fn with no arguments and this undefined.
    call0(/** @type {{value: number}} */ fn) {
      const r = ffi.QTS_Call(ctx, fn.value, undef, 0, out.ptr);
      const e = ffi.QTS_ResolveException(ctx, r);
      ffi.QTS_FreeValuePointer(ctx, r);
      return e ? mem.heapValueHandle(e) : null;
    },
  };
}

/**
 * @typedef {ReturnType<typeof realmArgs>} RealmArgs
 * @typedef {{send: Function | null, finish: Function | null, violation: Function | null}} Hooks
 * @typedef {{rt: any, vm: any, fn: any, kit: any, key: string, hooks: Hooks | null}} Spare fn: the prelude's function (not yet called), or kit: what its call made for key
 * @typedef {{QuickJS: QuickJSWASMModule, memory: WebAssembly.Memory, spare: Spare | null, image?: Image | null}} Pooled
 * @param {WebAssembly.Module} wasmModule @param {number} memoryBytes
 * @param {{maxIdle?: number, stackBytes?: number, remake?: boolean, images?: boolean}} [opts] remake: make a realm ahead after each give (false: only prime does); images: keep an image of a realm whose prelude was called ahead, and restore it after a run in it
 */
export function makeQuickJSPool(wasmModule, memoryBytes, { maxIdle = 2, stackBytes = 0, remake = true, images = remake } = {}) {
  /** @type {Pooled[]} */
  const idle = [];
  let made = 0, ahead = 0, restored = 0;
  // seedAt: where a context keeps its Math.random state (findSeed), once
  // known; -1: images are off.
  let seedAt = images ? NaN : -1;
  // Instances on their way back (retire, deferred by their run to a task
  // after its answer): a run that needs an instance before that task ran
  // takes them back itself first, so back-to-back runs reuse them.
  /** @type {Array<() => void>} */
  const returning = [];
  const flush = () => { while (returning.length) /** @type {() => void} */ (returning.shift())(); };
  /** @type {RealmArgs | null} */
  let expected = null;
  const note = realmStreak();
  // keeps: whether inst, given back, would be kept.
  const keeps = (/** @type {Pooled} */ inst) => idle.length < maxIdle && inst.memory.buffer.byteLength <= IMAGE_BYTES + POOL_GROWTH;
  // image takes inst's image for realm (its prelude just called), when
  // images are on and realm's arguments are the ones expected.
  const image = (/** @type {Pooled} */ inst, /** @type {Spare} */ realm) => {
    inst.image = null;
    if (!images || !expected || expected.key !== realm.key) return;
    if (Number.isNaN(seedAt)) seedAt = findSeed(inst.QuickJS, inst.memory);
    if (seedAt >= 0) inst.image = takeImage(inst, realm, seedAt);
  };
  // prepare makes inst's spare realm, if inst is still idle; an instance
  // that cannot make one is dropped.
  const prepare = (/** @type {Pooled} */ inst) => {
    if (inst.spare || !idle.includes(inst)) return;
    inst.image = null;
    let rt = null, vm = null;
    try {
      rt = inst.QuickJS.newRuntime();
      rt.setMemoryLimit(memoryBytes);
      rt.setMaxStackSize(stackBytes);
      vm = rt.newContext();
      const r = vm.evalCode(PRELUDE, '<ptc-prelude>');
      if (r.error) {
        r.error.dispose();
        throw new Error('the prelude failed');
      }
      const fn = /** @type {any} */ (r).value; // (the union does not narrow on error)
      const e = expected;
      if (!e) {
        inst.spare = { rt, vm, fn, kit: null, key: '', hooks: null };
      } else {
        /** @type {Hooks} */
        const hooks = { send: null, finish: null, violation: null };
        const args = hostArgs(vm, hooks, e);
        const called = vm.callFunction(fn, vm.undefined, ...args);
        fn.dispose();
        args.forEach((h) => h.dispose());
        if (called.error) {
          called.error.dispose();
          throw new Error('the prelude failed');
        }
        inst.spare = { rt, vm, fn: null, kit: /** @type {any} */ (called).value, key: e.key, hooks };
        image(inst, inst.spare);
      }
      made++;
    } catch {
      try { vm?.dispose(); rt?.dispose(); } catch { /* dropped below */ }
      idle.splice(idle.indexOf(inst), 1);
    }
  };
  return {
    memoryBytes,
    stackBytes,
    // expect tells the pool a run's realm arguments: the realms it makes
    // are called for what realmStreak answers.
    /** @param {RealmArgs} a */
    expect(a) { expected = note(a); },
    // usedAhead counts a run that took a realm whose prelude was called ahead.
    usedAhead() { ahead++; },
    // defer runs fn (a run's retire) in a task, or when a run asks for an
    // instance first.
    /** @param {() => void} fn */
    defer(fn) {
      returning.push(fn);
      if (returning.length === 1) setTimeout(flush, 0);
    },
    // image: a run that made its own realm in a lent instance offers it
    // right after its prelude was called (see image above).
    image,
    // restore puts back the image of inst (a run's instance, after the
    // run in the image's realm ended without a wasm fault) and gives inst
    // back; false: inst is not kept (the pool is full, its memory grew
    // too far, or its image cannot be put back) and is dropped.
    /** @param {Pooled} inst */
    restore(inst) {
      if (!keeps(inst) || !restoreImage(inst)) return false;
      restored++;
      this.give(inst);
      return true;
    },
    // takeNow lends an idle instance, or answers undefined (take loads one).
    /** @returns {Pooled | undefined} */
    takeNow: () => { flush(); return idle.pop(); },
    /** @returns {Promise<Pooled>} */
    async take() {
      flush();
      const got = idle.pop();
      if (got) return got;
      const memory = newMemory(memoryBytes);
      const { QuickJS } = await loadQuickJS(wasmModule, memory);
      return { QuickJS, memory, spare: null };
    },
    /** @param {Pooled} inst */
    give(inst) {
      if (keeps(inst)) {
        idle.push(inst);
        if (stackBytes && remake && !inst.spare) setTimeout(() => prepare(inst), 0);
      }
    },
    // prime loads an instance and makes its realm now (a worker's spare,
    // before its one run), for realm when given.
    /** @param {RealmArgs | null} [realm] */
    async prime(realm = null) {
      expected = realm;
      const inst = await this.take();
      idle.push(inst);
      if (stackBytes) prepare(inst);
    },
    idle: () => idle.length,
    // spares: the idle instances holding a realm made ahead; made: how many were ever made.
    spares: () => idle.filter((i) => i.spare).length,
    made: () => made,
    // ahead: how many runs took a realm whose prelude was called ahead.
    ahead: () => ahead,
    // restored: how many times an instance's image was put back.
    restored: () => restored,
  };
}

// capPages is the pages of a QuickJS instance's memory at its cap: the
// image and memoryBytes; newMemory makes that memory.
const capPages = (memoryBytes) => Math.ceil((IMAGE_BYTES + memoryBytes) / PAGE);
function newMemory(memoryBytes) {
  return new WebAssembly.Memory({ initial: IMAGE_BYTES / PAGE, maximum: capPages(memoryBytes) });
}

// runProgram runs one script: init is the ptc.start payload as the
// spawner forwards it ({name, source, inputs (JSON text), methods, tools}
// and the limits of startLimits); post(m) sends the worker's messages
// ({t:'running'} once the realm is ready, when timeoutMs starts; {t:'call',
// id, method, args}, {t:'violation', message}, {t:'done', ok,
// value | error:{message, line}, timedOut?: true}, once {t:'module',
// module}); timedOut marks a script stopped at timeoutMs; stackBytes
// is the QuickJS stack bound this host's worker can hold. It resolves to
// receive(m), which takes the spawner's {t:'reply', id, ok, value | error}.
// Two more host bounds serve a host that runs the script on its own
// thread (workerd, ptc-workerd.mjs): memoryCap lowers memoryBytes to what
// the isolate can spare, and ticksPerMs adds a CPU budget of timeoutMs x
// ticksPerMs interrupt-handler calls, because there Date.now() does not
// advance while the script computes (the deadline alone never fires).
// pool (makeQuickJSPool) lends the QuickJS instance when the run's
// memoryBytes is the pool's.
// direct is Go's door for ctx calls (PROTOCOL.md §4), for a host whose
// QuickJS runs on Go's own thread (workerd): direct(settle) once, then
// direct(id, method + ' ' + args) instead of posting {t:'call'}, which
// returns the answer of a call that needs no event-loop turn (the JSON
// text, or '!' and the error message) and undefined for one that does:
// settle(id, ok, text) answers that one later.
/**
 * @param {any} init
 * @param {(m: object) => void} post
 * @param {{stackBytes?: number, wasmModule?: WebAssembly.Module, memoryCap?: number, ticksPerMs?: number, pool?: ReturnType<typeof makeQuickJSPool>,
 *   direct?: (...a: [settle: (id: number, ok: boolean, text: string) => void] | [id: number, call: string]) => string | undefined}} [host]
 */
export async function runProgram(init, post, { stackBytes, wasmModule, memoryCap, ticksPerMs, pool, direct } = {}) {
  const lim = startLimits(init);
  if (memoryCap && lim.memoryBytes > memoryCap) lim.memoryBytes = memoryCap;
  // timeoutMs counts the script's run, and is enforced here, where the
  // script runs: the deadline is set when the realm is ready and
  // {t:'running'} is posted (not while QuickJS loads), and a script that
  // settles before it succeeds however late the host reads the answer.
  // Three things stop a script at its deadline: the interrupt handler
  // while QuickJS runs, a timer while the script awaits, and a ctx reply
  // arriving after it (the script is not resumed).
  let deadline = Infinity;
  let deadlineTimer = null;
  const maxTicks = ticksPerMs ? lim.timeoutMs * ticksPerMs : Infinity;
  let ticks = 0;
  let stopped = ''; // why the script was stopped (its deadline or CPU budget)
  let closed = false; // done was posted: nothing more runs or leaves
  const end = (msg) => {
    if (closed) return;
    closed = true;
    clearTimeout(deadlineTimer);
    // The instance goes back in a task of its own, after the answer: a
    // microtask made the answer wait for the realm's and the runtime's
    // disposal (~0.3 ms), which now comes after the host has it (and
    // after QuickJS returned: end may run inside it), or when the next
    // run asks the pool first. Deferred before post, so a task the host
    // schedules on done runs after it. A run in its instance's image's
    // realm gives the instance back after a failure too: the restore
    // erases whatever the script did (a wasm fault excepted: retire drops
    // that instance).
    if (lent && (msg.ok || imaged())) pool.defer(retire);
    post(msg);
  };
  const atDeadline = () => `the program was stopped at its deadline (${lim.timeoutMs} ms)`;
  const maxPages = capPages(lim.memoryBytes);
  // An idle instance is lent at once: a script that needs no event-loop
  // turn then runs to its end inside this call (ptc.start answers it).
  const lent = pool && pool.memoryBytes === lim.memoryBytes ? pool.takeNow() ?? await pool.take().catch(() => null) : null;
  const memory = lent ? lent.memory : newMemory(lim.memoryBytes);
  // A failure after the wasm memory reached its cap says so: under memory
  // pressure QuickJS may have no room left even for the error it throws
  // (the script then sees null).
  const fail = (message, line = 0) => {
    if (stopped) message = stopped; // the interrupt handler's reason, whatever the script made of it
    const exhausted = memory.buffer.byteLength >= (maxPages - 16) * PAGE;
    const text = exhausted ? `${message} (the program ran out of memory: memoryBytes=${lim.memoryBytes})` : String(message);
    // timedOut: the script did not settle within timeoutMs (Go words it).
    end(stopped ? { t: 'done', ok: false, timedOut: true, error: { message: text, line } } : { t: 'done', ok: false, error: { message: text, line } });
  };
  // expire stops a script that is not running at its deadline (it awaits
  // a ctx call or a promise): nothing of it runs again.
  const expire = () => {
    if (closed) return;
    stopped = atDeadline();
    fail(stopped);
  };
  // failWith reports an exception the prelude could not word (one thrown
  // by the prelude itself, or out of a job); an interrupt is the deadline.
  const failWith = (h) => {
    const text = describeRaw(vm, h);
    h.dispose();
    fail(/interrupted/.test(text) && !stopped ? atDeadline() : text);
  };

  let QuickJS, compiled;
  try {
    ({ QuickJS, compiled } = lent ? { QuickJS: lent.QuickJS, compiled: null } : await loadQuickJS(wasmModule, memory));
  } catch (e) {
    fail(`the program engine failed to load: ${e?.message ?? e}`);
    return () => {};
  }
  if (compiled) post({ t: 'module', module: compiled });
  // A realm the pool made ahead for this instance (makeQuickJSPool), with
  // this run's memory and stack bounds (and, when the pool called the
  // prelude ahead, this run's realm arguments), is taken once; else one
  // is made. The pool makes its next realms for this run's arguments.
  const realm = realmArgs(init, lim.maxToolCalls);
  let spare = lent ? lent.spare : null;
  if (lent) {
    lent.spare = null;
    pool.expect(realm);
  }
  if (spare && (pool.stackBytes !== stackBytes || (spare.kit && spare.key !== realm.key))) {
    try {
      for (const h of [spare.fn, spare.kit]) if (h) h.dispose();
      spare.vm.dispose();
      spare.rt.dispose();
    } catch { /* its instance serves this run only */ }
    spare = null;
    lent.image = null; // its realm is gone
  }
  const rt = spare ? spare.rt : QuickJS.newRuntime();
  if (!spare) {
    rt.setMemoryLimit(lim.memoryBytes);
    rt.setMaxStackSize(stackBytes);
  }
  // (removed first: quickjs-emscripten switches the C side on only when
  // its JS side has no handler, and a restored image may have the C side
  // off while the runtime object still holds an earlier run's handler)
  rt.removeInterruptHandler();
  rt.setInterruptHandler(() => {
    if (closed || stopped) return true;
    if (++ticks > maxTicks) stopped = `the program was stopped at its CPU budget (${maxTicks} interrupt ticks for timeoutMs ${lim.timeoutMs})`;
    else if (Date.now() > deadline) stopped = atDeadline();
    return stopped !== '';
  });
  const vm = spare ? spare.vm : rt.newContext();

  // Calls waiting for a free in-flight slot, in order.
  const queue = [];
  let inFlight = 0, queued = 0;
  // Answers of direct calls, in the order they settled, each delivered to
  // the script when QuickJS is not running (drain): a call answered inside
  // direct() settles while the script is still in ctx.x(...), before the
  // prelude holds its promise.
  const ready = [];
  let depth = 0; // QuickJS steps on the stack (guard)
  let draining = false, scheduled = false;
  const settle = (id, ok, text) => {
    ready.push({ t: 'reply', id, ok, value: text, error: text });
    // A late answer (Go's goroutine, after an event-loop turn) arrives
    // inside a call from Go: the script continues in a microtask, never
    // nested in Go's call.
    if (depth === 0 && !draining && !scheduled) {
      scheduled = true;
      queueMicrotask(() => { scheduled = false; drain(); });
    }
  };
  const send1 = (c) => {
    if (!direct) { post(c); return; }
    let r;
    try {
      r = direct(c.id, `${c.method} ${c.args}`);
    } catch (e) {
      r = `!ctx.${c.method} failed to reach the host: ${e?.message ?? e}`;
    }
    if (typeof r !== 'string') return; // settle answers it
    if (r.charCodeAt(0) === 33) settle(c.id, false, r.slice(1)); // '!': an error
    else settle(c.id, true, r);
  };
  if (direct) direct(settle);
  const pump = () => {
    while (inFlight < lim.maxInFlight && queue.length) {
      inFlight++;
      const c = queue.shift();
      queued -= c.args.length;
      send1(c);
    }
  };
  let nextId = 0;
  // send returns the call's id, its answer when the door gave it at once,
  // or '~' and a refusal (prelude.js).
  // The prelude's three host functions (prelude.js): made here, or
  // reached through the hooks of a realm whose prelude was called ahead.
  const send = (/** @type {string} */ m, /** @type {string} */ args) => {
    if (closed) return '~the program has finished; ctx calls are closed';
    const n = args.length * 3 > lim.maxResultBytes ? utf8Length(args) : 0;
    if (n > lim.maxResultBytes) return `~the arguments of ctx.${m} are ${n} bytes of JSON; the limit is ${lim.maxResultBytes}`;
    const id = ++nextId;
    // With the door free (no call waits here), a call that ends inside
    // direct() is answered by send itself: one QuickJS step, no deliver.
    if (direct && !queue.length && inFlight < lim.maxInFlight) {
      let r;
      try {
        r = direct(id, `${m} ${args}`);
      } catch (e) {
        r = `!ctx.${m} failed to reach the host: ${e?.message ?? e}`;
      }
      if (typeof r === 'string') {
        answeredNow++; // jobs() hands it over (flush)
        return r;
      }
      inFlight++; // settle answers it
      return id;
    }
    // Calls waiting here hold their arguments outside QuickJS: together
    // they may not exceed the program's memory either.
    if (queue.length && queued + args.length > lim.memoryBytes) {
      return `~ctx.${m} refused: ${queue.length} ctx calls already wait with ${queued} bytes of arguments; the limit is memoryBytes=${lim.memoryBytes}`;
    }
    queue.push({ t: 'call', id, method: m, args });
    queued += args.length;
    pump();
    return id;
  };
  const finish = (ok, text, line) => {
    if (vm.dump(ok)) {
      const value = vm.getString(text);
      const n = utf8Length(value);
      if (n > lim.maxResultBytes) fail(`the program result is ${n} bytes of JSON; the limit is ${lim.maxResultBytes}`);
      else end({ t: 'done', ok: true, value });
    } else {
      fail(vm.getString(text), vm.getNumber(line) || 0);
    }
  };
  const violation = (message) => {
    if (!closed) post({ t: 'violation', message: vm.getString(message) });
  };
  if (spare?.hooks) Object.assign(spare.hooks, { send, finish, violation });

  // guard runs one step of QuickJS. A wasm fault (the host's stack
  // overflowing inside QuickJS, a trap) leaves the runtime unusable: the
  // program fails with it and nothing of this runtime runs again.
  let broken = false;
  // imaged: this run's realm is the one its instance keeps an image of.
  function imaged() { return !!(lent && lent.image && lent.image.realm.rt === rt); }
  const guard = (fn) => {
    if (broken || closed) return undefined;
    depth++;
    try {
      return fn();
    } catch (e) {
      broken = true;
      fail(e?.name === 'RangeError' ? `RangeError: ${e.message}` : `the program engine failed: ${e?.message ?? e}`);
      return undefined;
    } finally {
      depth--;
    }
  };
  // unwrap takes a VmCallResult: the value handle, or undefined once an
  // exception is handed to the prelude's fail (or, when the prelude
  // itself is what failed, reported as is).
  let kit = null;
  const unwrap = (r) => {
    if (!r.error) return r.value;
    if (!kit) {
      failWith(r.error);
      return undefined;
    }
    const f = vm.getProp(kit, 'fail');
    const r2 = vm.callFunction(f, vm.undefined, r.error);
    f.dispose();
    r.error.dispose();
    if (r2.error) failWith(r2.error);
    else /** @type {any} */ (r2).value.dispose(); // (the union does not narrow on error)
    return undefined;
  };
  // jobs runs the realm's jobs, then hands over the answers send gave at
  // once (flush), one at a time, each after the jobs before it are done:
  // as a reply is delivered (receive), never in the middle of them.
  let answeredNow = 0, flushFn = null;
  const fast = fastCalls(vm);
  const jobs = () => {
    for (;;) {
      while (!closed && !broken && rt.hasPendingJob()) {
        const e = fast ? fast.jobs(1024) : rt.executePendingJobs(1024).error;
        if (e) failWith(e); // an interrupt, or an exception no promise caught
      }
      if (!answeredNow || closed || broken) return;
      if (Date.now() > deadline) { expire(); return; } // as receive: the deadline passed while the script awaited
      answeredNow--;
      flushFn ??= vm.getProp(kit, 'flush');
      if (fast) {
        const e = fast.call0(flushFn);
        if (e) unwrap({ error: e });
      } else {
        const v = unwrap(vm.callFunction(flushFn, vm.undefined));
        if (v) v.dispose();
      }
    }
  };

  guard(() => {
    if (spare?.kit) {
      kit = spare.kit;
      pool.usedAhead();
    } else {
      const fn = spare ? spare.fn : unwrap(vm.evalCode(PRELUDE, '<ptc-prelude>'));
      if (!fn) return;
      const hooks = { send, finish, violation };
      const args = hostArgs(vm, hooks, realm);
      const made = vm.callFunction(fn, vm.undefined, ...args);
      fn.dispose();
      args.forEach((h) => h.dispose());
      if (made.error) { failWith(made.error); return; }
      kit = /** @type {any} */ (made).value;
      // Nothing made before this point is disposed after it: the image
      // taken here is what a restore puts back.
      if (lent) pool.image(lent, { rt, vm, fn: null, kit, key: realm.key, hooks });
    }
    deadline = Date.now() + lim.timeoutMs;
    deadlineTimer = setTimeout(expire, lim.timeoutMs);
    post({ t: 'running' });
    // The script's top-level statements run now, in the locked realm.
    const top = vm.evalCode(String(init.source), String(init.name));
    const topValue = unwrap(top);
    if (!topValue) return;
    topValue.dispose();
    const found = vm.evalCode('typeof run === "function" ? run : undefined', '<ptc-run>');
    const run = unwrap(found);
    if (!run) return;
    const start = vm.getProp(kit, 'start'), inputs = vm.newString(String(init.inputs ?? '{}'));
    const r = vm.callFunction(start, vm.undefined, run, inputs);
    [start, inputs, run].forEach((h) => h.dispose());
    const v = unwrap(r);
    if (v) v.dispose();
    jobs();
  });

  const deliver = kit && guard(() => vm.getProp(kit, 'deliver'));
  // retire hands a lent instance back to the pool after the script
  // succeeded (makeQuickJSPool), its realm and runtime disposed, or after
  // any end but a wasm fault when the run's realm is its image's (the
  // image put back); after anything else the instance is dropped, and
  // nothing of it runs again.
  function retire() {
    if (broken) return;
    // A run in the realm of its instance's image: the image goes back,
    // nothing is disposed (disposing after a restore would free the
    // image's own memory), and the realm is ready for the next run.
    if (imaged()) {
      pool.restore(lent);
      return;
    }
    if (stopped) return;
    try {
      for (const h of [deliver, flushFn, kit]) if (h && h.alive) h.dispose();
      vm.dispose();
      rt.dispose();
    } catch {
      return;
    }
    pool.give(lent);
  }
  // receive takes one answer: a {t:'reply'} from the host, or a direct
  // call's (through ready).
  const receive = (m) => {
    if (!m || m.t !== 'reply' || !deliver || closed || broken) return;
    if (Date.now() > deadline) { expire(); return; } // the timer is late: the deadline passed while the script awaited
    inFlight--;
    pump();
    guard(() => {
      const args = [vm.newNumber(Number(m.id)), m.ok ? vm.true : vm.false, vm.newString(String(m.ok ? m.value : m.error))];
      const r = vm.callFunction(deliver, vm.undefined, ...args);
      args.forEach((h) => h.dispose());
      const v = unwrap(r);
      if (v) v.dispose();
      jobs();
    });
  };
  // drain delivers the direct answers that are ready, and those their
  // script steps make ready in turn.
  function drain() {
    if (draining) return;
    draining = true;
    try {
      while (ready.length && !closed && !broken) receive(ready.shift());
    } finally {
      draining = false;
      ready.length = 0; // (left only once the run is over)
    }
  }
  drain();
  return (m) => {
    receive(m);
    drain();
  };
}

// describeRaw words an exception handle as "Name: message".
function describeRaw(vm, h) {
  try {
    const d = vm.dump(h);
    if (d && typeof d === 'object') return d.name && d.name !== 'Error' ? `${d.name}: ${d.message}` : String(d.message);
    return String(d);
  } catch (_) {
    return 'uncaught exception';
  }
}

// workerMain is the message handler of a worker that runs one program
// (ptc-node-worker.mjs, ptc-browser-worker.mjs): {t:'prepare', wasmModule,
// memoryBytes, realm?}, which a spare gets while it waits, loads QuickJS and
// makes the realm ahead (makeQuickJSPool's prime; with realm, the last
// run's realmArgs, it also calls the prelude for them; no script runs in
// it before its run); {t:'start'} runs the script, in that realm when its
// memoryBytes is the prepared one's; every later message is the run's.
/** @param {(m: object) => void} post @param {number} stackBytes */
export function workerMain(post, stackBytes) {
  /** @type {((m: any) => void) | null} */
  let receive = null;
  /** @type {ReturnType<typeof makeQuickJSPool> | undefined} */
  let pool;
  /** @type {Promise<void> | null} */
  let prepared = null;
  const early = [];
  return async (/** @type {any} */ m) => {
    if (m && m.t === 'prepare' && receive === null && prepared === null) {
      const p = makeQuickJSPool(m.wasmModule, m.memoryBytes, { maxIdle: 1, stackBytes, remake: false });
      prepared = p.prime(m.realm ?? null).then(() => { pool = p; }, () => {});
    } else if (m && m.t === 'start' && receive === null) {
      receive = (x) => early.push(x);
      if (prepared) await prepared;
      const r = await runProgram(m.init, post, { stackBytes, wasmModule: m.wasmModule, pool });
      receive = r;
      early.splice(0).forEach(r);
    } else if (receive) {
      receive(m);
    }
  };
}
