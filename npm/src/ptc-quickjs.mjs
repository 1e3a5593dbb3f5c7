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
import { startLimits } from './ptc-host.mjs';

// The globals kept in the realm (ECMAScript's, as quickjs-ng has them);
// everything else QuickJS adds (queueMicrotask, performance,
// DOMException, InternalError, navigator in some builds…) is deleted.
const KEEP = ['globalThis', 'Infinity', 'NaN', 'undefined', 'eval', 'isFinite', 'isNaN', 'parseFloat', 'parseInt',
  'decodeURI', 'decodeURIComponent', 'encodeURI', 'encodeURIComponent', 'escape', 'unescape', 'AggregateError', 'Array',
  'ArrayBuffer', 'Atomics', 'BigInt', 'BigInt64Array', 'BigUint64Array', 'Boolean', 'DataView', 'Date', 'Error', 'EvalError',
  'FinalizationRegistry', 'Float16Array', 'Float32Array', 'Float64Array', 'Function', 'Int8Array', 'Int16Array', 'Int32Array',
  'Iterator', 'Map', 'Number', 'Object', 'Promise', 'Proxy', 'RangeError', 'ReferenceError', 'Reflect', 'RegExp', 'Set',
  'SharedArrayBuffer', 'String', 'Symbol', 'SyntaxError', 'TypeError', 'Uint8Array', 'Uint8ClampedArray', 'Uint16Array',
  'Uint32Array', 'URIError', 'WeakMap', 'WeakRef', 'WeakSet', 'JSON', 'Math', 'SuppressedError', 'DisposableStack',
  'AsyncDisposableStack'];

// PRELUDE is the source of one function evaluated in the realm before the
// script:
//
//   (send, finish, violation, methodsJSON, toolsJSON, scriptName, maxToolCalls, keepJSON) => {deliver, start, fail}
//
// send(method, argsJSON) → an id (the call left) or a refusal message;
// finish(ok, text, line); violation(message). They are the only host
// functions in the realm and stay in this closure; they take and return
// primitives only. Everything the script sees (ctx, results, errors,
// promises) is made here, in its realm, from intrinsics captured before
// the script runs: a script that pollutes JSON, Promise or Array breaks
// only itself. Then the realm is locked: non-ECMAScript globals deleted,
// eval and every Function-like constructor replaced by one that throws,
// and Error.prepareStackTrace wrapped so that no stack (the default text or
// the call sites a script's own prepareStackTrace gets) shows a frame
// outside the script's file.
const PRELUDE = String.raw`(function (send, finish, violation, methodsJSON, toolsJSON, scriptName, maxToolCalls, keepJSON) {
  'use strict';
  var G = globalThis, O = Object, E = Error, P = Promise, S = String, EvalErr = EvalError;
  var stringify = JSON.stringify, parse = JSON.parse, freeze = O.freeze, create = O.create, getProto = O.getPrototypeOf;
  var defineProperty = O.defineProperty, getDesc = O.getOwnPropertyDescriptor, ownKeys = Reflect.ownKeys, apply = Reflect.apply;
  var preject = P.reject, isProto = O.prototype.isPrototypeOf, EP = E.prototype, slice = Array.prototype.slice;
  var WM = WeakMap, wmGet = WM.prototype.get, wmSet = WM.prototype.set, toStringTag = Symbol.toStringTag;
  var pending = create(null), count = 0, closed = false, refused = null;

  // Stacks: quickjs-ng calls Error.prepareStackTrace(error, callSites) for
  // every error it makes; the real hook keeps the script's frames only,
  // remembers the first one's line for the error message, and hands the
  // script's own prepareStackTrace (kept behind an accessor) those frames.
  var prepDesc = getDesc(E, 'prepareStackTrace'), setPrepare = prepDesc.set, userPrepare;
  var CS = null;
  apply(setPrepare, E, [function (e, sites) { CS = getProto(sites[0]); return ''; }]);
  new E('probe');
  var csFile = CS.getFileName, csLine = CS.getLineNumber, csCol = CS.getColumnNumber, csName = CS.getFunctionName;
  var lines = new WM();
  apply(setPrepare, E, [function (error, sites) {
    var kept = [], text = '';
    for (var i = 0; i < sites.length; i++) {
      var s = sites[i];
      if (apply(csFile, s, []) !== scriptName) continue;
      kept[kept.length] = s;
      text += '    at ' + (apply(csName, s, []) || '<anonymous>') + ' (' + scriptName + ':' + apply(csLine, s, []) + ':' + apply(csCol, s, []) + ')\n';
    }
    if (kept.length && (typeof error === 'object' || typeof error === 'function') && error !== null) apply(wmSet, lines, [error, apply(csLine, kept[0], [])]);
    return typeof userPrepare === 'function' ? userPrepare(error, kept) : text;
  }]);
  defineProperty(E, 'prepareStackTrace', { get: function () { return userPrepare; }, set: function (f) { userPrepare = f; }, enumerable: false, configurable: false });

  function reject(e) { return apply(preject, P, [e]); }
  // refuse answers every call past maxToolCalls with one frozen rejection:
  // a flood of them costs neither the host nor this realm an allocation
  // each.
  function refuse() {
    if (refused === null) {
      var msg = 'PTC script exceeded maxToolCalls=' + maxToolCalls;
      refused = reject(freeze(new E(msg)));
      violation(msg);
    }
    return refused;
  }
  function call(method, args) {
    if (closed) return reject(new E('the program has finished; ctx calls are closed'));
    if (count >= maxToolCalls) return refuse();
    var json;
    try { json = stringify(args); } catch (e) { return reject(e); }
    var id = send(method, json);
    if (typeof id === 'string') return reject(new E(id));
    count++;
    return new P(function (resolve, reject) { pending[id] = { resolve: resolve, reject: reject }; });
  }
  function deliver(id, ok, text) {
    var p = pending[id];
    if (!p) return;
    delete pending[id];
    if (!ok) { p.reject(new E(text)); return; }
    var v;
    try { v = parse(text); } catch (_) { p.reject(new E('ctx result is not JSON')); return; }
    p.resolve(v);
  }

  var methods = parse(methodsJSON), tools = parse(toolsJSON), ctx = create(O.prototype), t = create(O.prototype);
  for (var i = 0; i < methods.length; i++) (function (m) {
    ctx[m] = freeze(function () { return count >= maxToolCalls && !closed ? refuse() : call(m, apply(slice, arguments, [])); });
  })(methods[i]);
  for (var j = 0; j < tools.length; j++) (function (n) {
    t[n] = freeze(function (args) { return count >= maxToolCalls && !closed ? refuse() : call('tool', [n, args]); });
  })(tools[j]);
  ctx.tools = freeze(t);
  freeze(ctx);

  function describe(e) {
    try {
      if (apply(isProto, EP, [e])) {
        var name = S(e.name), msg = S(e.message);
        return [name && name !== 'Error' ? name + ': ' + msg : msg, apply(wmGet, lines, [e]) || 0];
      }
      return [(typeof e === 'object' && e !== null) || typeof e === 'function' ? '[object]' : S(e), 0];
    } catch (_) {
      return ['uncaught exception', 0];
    }
  }
  function settle(ok, v) {
    if (closed) return;
    closed = true;
    if (!ok) { var d = describe(v); finish(false, d[0], d[1]); return; }
    var out;
    try { out = stringify(v); } catch (e) { finish(false, 'the result is not JSON-serialisable: ' + describe(e)[0], 0); return; }
    finish(true, out === undefined ? 'null' : out, 0);
  }
  async function drive(run, inputs) {
    var v;
    try {
      if (typeof run !== 'function') throw new E('the script does not define async function run(ctx, inputs)');
      v = await run(ctx, inputs);
    } catch (e) {
      settle(false, e);
      return;
    }
    settle(true, v);
  }

  // Lock the realm: only ECMAScript globals, and no source compiled after
  // the script's own.
  var keep = create(null), names = parse(keepJSON);
  for (var k = 0; k < names.length; k++) keep[names[k]] = true;
  var keys = ownKeys(G);
  for (var n = 0; n < keys.length; n++) {
    var key = keys[n];
    if (key === toStringTag || (typeof key === 'string' && keep[key] === true)) continue;
    if (!delete G[key]) throw new E('the realm lockdown could not remove ' + S(key));
  }
  var tame = function () { throw new EvalErr('code generation from strings is disabled in programs'); };
  defineProperty(tame, 'prototype', { value: O.getPrototypeOf(function () {}), writable: false });
  var kinds = [function () {}, async function () {}, function* () {}, async function* () {}];
  for (var f = 0; f < kinds.length; f++) defineProperty(getProto(kinds[f]), 'constructor', { value: tame, writable: false, enumerable: false, configurable: false });
  defineProperty(G, 'Function', { value: tame, writable: false, enumerable: false, configurable: false });
  defineProperty(G, 'eval', { value: tame, writable: false, enumerable: false, configurable: false });

  return freeze({
    deliver: deliver,
    start: function (run, inputsJSON) { drive(run, parse(inputsJSON)); },
    fail: function (e) { settle(false, e); },
  });
})`;

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

// runProgram runs one script: init is the ptc.start payload as the
// spawner forwards it ({name, source, inputs (JSON text), methods, tools}
// and the limits of startLimits); post(m) sends the worker's messages
// ({t:'call', id, method, args}, {t:'violation', message}, {t:'done', ok,
// value | error:{message, line}}, once {t:'module', module}); stackBytes
// is the QuickJS stack bound this host's worker can hold. It resolves to
// receive(m), which takes the spawner's {t:'reply', id, ok, value | error}.
/**
 * @param {any} init
 * @param {(m: object) => void} post
 * @param {{stackBytes?: number, wasmModule?: WebAssembly.Module}} [host]
 */
export async function runProgram(init, post, { stackBytes, wasmModule } = {}) {
  const lim = startLimits(init);
  const deadline = Date.now() + lim.timeoutMs;
  let closed = false; // done was posted: nothing more runs or leaves
  const end = (msg) => {
    if (closed) return;
    closed = true;
    post(msg);
  };
  const maxPages = Math.ceil((IMAGE_BYTES + lim.memoryBytes) / PAGE);
  const memory = new WebAssembly.Memory({ initial: IMAGE_BYTES / PAGE, maximum: maxPages });
  // A failure after the wasm memory reached its cap says so: under memory
  // pressure QuickJS may have no room left even for the error it throws
  // (the script then sees null).
  const fail = (message, line = 0) => {
    const exhausted = memory.buffer.byteLength >= (maxPages - 16) * PAGE;
    const text = exhausted ? `${message} (the program ran out of memory: memoryBytes=${lim.memoryBytes})` : String(message);
    end({ t: 'done', ok: false, error: { message: text, line } });
  };
  // failWith reports an exception the prelude could not word (one thrown
  // by the prelude itself, or out of a job); an interrupt is the deadline.
  const failWith = (h) => {
    const text = describeRaw(vm, h);
    h.dispose();
    fail(/interrupted/.test(text) ? `the program was stopped at its deadline (${lim.timeoutMs} ms)` : text);
  };

  let QuickJS, compiled;
  try {
    ({ QuickJS, compiled } = await loadQuickJS(wasmModule, memory));
  } catch (e) {
    fail(`the program engine failed to load: ${e?.message ?? e}`);
    return () => {};
  }
  if (compiled) post({ t: 'module', module: compiled });
  const rt = QuickJS.newRuntime();
  rt.setMemoryLimit(lim.memoryBytes);
  rt.setMaxStackSize(stackBytes);
  rt.setInterruptHandler(() => closed || Date.now() > deadline);
  const vm = rt.newContext();

  // Calls waiting for a free in-flight slot, in order.
  const queue = [];
  let inFlight = 0, queued = 0;
  const pump = () => {
    while (inFlight < lim.maxInFlight && queue.length) {
      inFlight++;
      const c = queue.shift();
      queued -= c.args.length;
      post(c);
    }
  };
  let nextId = 0;
  const send = vm.newFunction('send', (method, json) => {
    if (closed) return vm.newString('the program has finished; ctx calls are closed');
    const m = vm.getString(method), args = vm.getString(json);
    const n = args.length * 3 > lim.maxResultBytes ? utf8Length(args) : 0;
    if (n > lim.maxResultBytes) return vm.newString(`the arguments of ctx.${m} are ${n} bytes of JSON; the limit is ${lim.maxResultBytes}`);
    // Calls waiting here hold their arguments outside QuickJS: together
    // they may not exceed the program's memory either.
    if (queue.length && queued + args.length > lim.memoryBytes) {
      return vm.newString(`ctx.${m} refused: ${queue.length} ctx calls already wait with ${queued} bytes of arguments; the limit is memoryBytes=${lim.memoryBytes}`);
    }
    const id = ++nextId;
    queue.push({ t: 'call', id, method: m, args });
    queued += args.length;
    pump();
    return vm.newNumber(id);
  });
  const finish = vm.newFunction('finish', (ok, text, line) => {
    if (vm.dump(ok)) {
      const value = vm.getString(text);
      const n = utf8Length(value);
      if (n > lim.maxResultBytes) fail(`the program result is ${n} bytes of JSON; the limit is ${lim.maxResultBytes}`);
      else end({ t: 'done', ok: true, value });
    } else {
      fail(vm.getString(text), vm.getNumber(line) || 0);
    }
  });
  const violation = vm.newFunction('violation', (message) => {
    if (!closed) post({ t: 'violation', message: vm.getString(message) });
  });

  // guard runs one step of QuickJS. A wasm fault (the host's stack
  // overflowing inside QuickJS, a trap) leaves the runtime unusable: the
  // program fails with it and nothing of this runtime runs again.
  let broken = false;
  const guard = (fn) => {
    if (broken || closed) return undefined;
    try {
      return fn();
    } catch (e) {
      broken = true;
      fail(e?.name === 'RangeError' ? `RangeError: ${e.message}` : `the program engine failed: ${e?.message ?? e}`);
      return undefined;
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
  const jobs = () => {
    while (!closed && !broken && rt.hasPendingJob()) {
      const r = rt.executePendingJobs(1024);
      if (r.error) failWith(r.error); // an interrupt, or an exception no promise caught
    }
  };

  guard(() => {
    const pre = vm.evalCode(PRELUDE, '<ptc-prelude>');
    const fn = unwrap(pre);
    if (!fn) return;
    const args = [send, finish, violation, vm.newString(JSON.stringify(init.methods ?? [])),
      vm.newString(JSON.stringify(init.tools ?? [])), vm.newString(String(init.name)), vm.newNumber(lim.maxToolCalls),
      vm.newString(JSON.stringify(KEEP))];
    const made = vm.callFunction(fn, vm.undefined, ...args);
    fn.dispose();
    args.forEach((h) => h.dispose());
    if (made.error) { failWith(made.error); return; }
    kit = /** @type {any} */ (made).value;
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
  return function receive(m) {
    if (!m || m.t !== 'reply' || !deliver || closed || broken) return;
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
