// Code generated from ptc/qjsengine/prelude.js by "go generate ./ptc/qjsengine"; DO NOT EDIT.

// PRELUDE is the source of the function evaluated in a program's realm
// before its script (see prelude.js: one source for every engine).
export const PRELUDE = String.raw`// The realm's side of the program engines, evaluated before the script and
// called once with the three host functions, which stay in this closure.
// One source for every host: ptc/qjsengine embeds this file, and
// "go generate ./ptc/qjsengine" writes it into npm/src/ptc-prelude.mjs for
// the Node and browser engine (TestNPMPreludeIsGenerated fails when the two
// differ). The host functions:
//
//   send(method, argsJSON) → the call's id (deliver answers it), or a
//                           string: the call's answer, given at once (the
//                           result's JSON text, or '!' and the message
//                           it rejects with), which the host hands over
//                           later with flush() as it would with deliver,
//                           or '~' and the message of a refusal (not a
//                           call: not counted)
//   finish(ok, text, line)  → the script's result (JSON text) or error
//   violation(message)      → a limit the script hit (reported once)
//
// Everything the script sees (ctx, the values and errors ctx calls settle
// with, the promises) is made here from intrinsics captured before the
// script runs, so a script that pollutes JSON, Promise or Array breaks
// only itself. Then the realm is locked: every global that is not
// ECMAScript's (as quickjs-ng has them: KEEP) is deleted, eval and every
// Function-like constructor throw, and Error.prepareStackTrace keeps the
// script's own frames only. Every value it hands a host function is a
// primitive (an argument list that stringifies to nothing is sent as
// 'null').
(function (send, finish, violation, methodsJSON, toolsJSON, scriptName, maxToolCalls) {
  'use strict';
  var G = globalThis, O = Object, E = Error, P = Promise, S = String, EvalErr = EvalError;
  var stringify = JSON.stringify, parse = JSON.parse, freeze = O.freeze, create = O.create, getProto = O.getPrototypeOf;
  var defineProperty = O.defineProperty, getDesc = O.getOwnPropertyDescriptor, ownKeys = Reflect.ownKeys, apply = Reflect.apply;
  var preject = P.reject, sslice = S.prototype.slice, isProto = O.prototype.isPrototypeOf, EP = E.prototype, slice = Array.prototype.slice;
  var WM = WeakMap, wmGet = WM.prototype.get, wmSet = WM.prototype.set, toStringTag = Symbol.toStringTag;
  var pending = create(null), count = 0, closed = false, refused = null;
  // Answers given at once by send, in order (a null-prototype queue).
  var now = create(null), nowHead = 0, nowTail = 0;

  // Stacks: quickjs-ng calls Error.prepareStackTrace(error, callSites) for
  // every error it makes. Call sites hand out the function of each frame
  // (getFunction), so no frame but the script's may reach the script: the
  // hook installed here keeps those alone, remembers the first one's line,
  // and passes them on to a prepareStackTrace the script sets.
  var setPrepare = getDesc(E, 'prepareStackTrace').set, userPrepare;
  var CS = null;
  apply(setPrepare, E, [function (e, sites) { CS = getProto(sites[0]); return ''; }]);
  new E('probe');
  var csFile = CS.getFileName, csLine = CS.getLineNumber, csCol = CS.getColumnNumber, csName = CS.getFunctionName;
  var lines = new WM();
  var stackHook = function (error, sites) {
    var kept = [], text = '';
    for (var i = 0; i < sites.length; i++) {
      var s = sites[i];
      if (apply(csFile, s, []) !== scriptName) continue;
      kept[kept.length] = s;
      text += '    at ' + (apply(csName, s, []) || '<anonymous>') + ' (' + scriptName + ':' + apply(csLine, s, []) + ':' + apply(csCol, s, []) + ')\n';
    }
    if (kept.length && (typeof error === 'object' || typeof error === 'function') && error !== null) apply(wmSet, lines, [error, apply(csLine, kept[0], [])]);
    return typeof userPrepare === 'function' ? userPrepare(error, kept) : text;
  };
  apply(setPrepare, E, [stackHook]);
  defineProperty(E, 'prepareStackTrace', { get: function () { return userPrepare; }, set: function (f) { userPrepare = f; }, enumerable: false, configurable: false });

  function reject(e) { return apply(preject, P, [e]); }
  // Calls past maxToolCalls get one shared rejection: a flood of them
  // costs the host nothing and this realm no allocation each.
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
    var id = send(method, json === undefined ? 'null' : json);
    if (typeof id === 'string' && id[0] === '~') return reject(new E(apply(sslice, id, [1])));
    count++;
    if (typeof id === 'string') return new P(function (resolve, reject) { now[nowTail++] = { resolve: resolve, reject: reject, text: id }; });
    return new P(function (resolve, reject) { pending[id] = { resolve: resolve, reject: reject }; });
  }
  // hostError makes the error a ctx call rejects with. It runs when the
  // host hands an answer over (deliver, flush), with no frame of the
  // script on the stack, so the stack trace limit is 0 while it is made:
  // its stack keeps no frame either way (stackHook keeps the script's
  // own), and walking and describing the prelude's frames cost a refused
  // ctx call's QuickJS side 7 %. Not while the script could see the
  // limit: its own prepareStackTrace runs inside new E, and a limit that
  // is not a number is converted (valueOf) by each error made.
  var stl = getDesc(E, 'stackTraceLimit'), stlGet = stl && stl.get, stlSet = stl && stl.set;
  function hostError(text) {
    if (typeof stlGet !== 'function' || typeof stlSet !== 'function' || typeof userPrepare === 'function') return new E(text);
    var limit = apply(stlGet, E, []);
    if (typeof limit !== 'number') return new E(text); // (an object's valueOf runs as it did)
    apply(stlSet, E, [0]);
    try {
      return new E(text);
    } finally {
      apply(stlSet, E, [limit]);
    }
  }
  function answer(p, ok, text) {
    if (!ok) { p.reject(hostError(text)); return; }
    var v;
    try { v = parse(text); } catch (_) { p.reject(hostError('ctx result is not JSON')); return; }
    p.resolve(v);
  }
  function deliver(id, ok, text) {
    var p = pending[id];
    if (!p) return;
    delete pending[id];
    answer(p, ok, text);
  }
  // flush hands over the oldest answer send gave at once. The host calls
  // it as it would call deliver, once the realm's jobs are done: the
  // script sees such an answer when it would have seen it through deliver
  // (never before the jobs queued with it, e.g. the end of run).
  function flush() {
    if (nowHead === nowTail) return;
    var a = now[nowHead];
    delete now[nowHead++];
    if (a.text[0] === '!') answer(a, false, apply(sslice, a.text, [1]));
    else answer(a, true, a.text);
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

  // Lock the realm.
  // KEEP: the globals left in the realm, ECMAScript's as quickjs-ng has
  // them. Everything else an engine defines (std, os, bjson, print,
  // console, navigator, scriptArgs, gc, setTimeout…, performance,
  // queueMicrotask, DOMException, InternalError) is deleted.
  var KEEP = ['globalThis', 'Infinity', 'NaN', 'undefined', 'eval', 'isFinite', 'isNaN', 'parseFloat', 'parseInt',
    'decodeURI', 'decodeURIComponent', 'encodeURI', 'encodeURIComponent', 'escape', 'unescape', 'AggregateError', 'Array',
    'ArrayBuffer', 'Atomics', 'BigInt', 'BigInt64Array', 'BigUint64Array', 'Boolean', 'DataView', 'Date', 'Error', 'EvalError',
    'FinalizationRegistry', 'Float16Array', 'Float32Array', 'Float64Array', 'Function', 'Int8Array', 'Int16Array', 'Int32Array',
    'Iterator', 'Map', 'Number', 'Object', 'Promise', 'Proxy', 'RangeError', 'ReferenceError', 'Reflect', 'RegExp', 'Set',
    'SharedArrayBuffer', 'String', 'Symbol', 'SyntaxError', 'TypeError', 'Uint8Array', 'Uint8ClampedArray', 'Uint16Array',
    'Uint32Array', 'URIError', 'WeakMap', 'WeakRef', 'WeakSet', 'JSON', 'Math', 'SuppressedError', 'DisposableStack',
    'AsyncDisposableStack'];
  var keep = create(null);
  for (var k = 0; k < KEEP.length; k++) keep[KEEP[k]] = true;
  var keys = ownKeys(G);
  for (var n = 0; n < keys.length; n++) {
    var key = keys[n];
    if (key === toStringTag || (typeof key === 'string' && keep[key] === true)) continue;
    if (!delete G[key]) throw new E('the realm lockdown could not remove ' + S(key));
  }
  var tame = function () { throw new EvalErr('code generation from strings is disabled in programs'); };
  defineProperty(tame, 'prototype', { value: getProto(function () {}), writable: false });
  var kinds = [function () {}, async function () {}, function* () {}, async function* () {}];
  for (var f = 0; f < kinds.length; f++) defineProperty(getProto(kinds[f]), 'constructor', { value: tame, writable: false, enumerable: false, configurable: false });
  defineProperty(G, 'Function', { value: tame, writable: false, enumerable: false, configurable: false });
  defineProperty(G, 'eval', { value: tame, writable: false, enumerable: false, configurable: false });

  return freeze({
    deliver: deliver,
    flush: flush,
    start: function (run, inputsJSON) { drive(run, parse(inputsJSON)); },
    fail: function (e) { settle(false, e); },
  });
})
`;
