// The browser engine for the `program` tool (PROTOCOL.md §4): each script
// runs in a fresh dedicated Web Worker (spawned by whoever holds the host
// dispatcher: the page, or the wasm's own worker) whose global scope is
// locked down before the script's first statement runs:
//
// - every property of the global object and of its prototype chain
//   (DedicatedWorkerGlobalScope, WorkerGlobalScope, EventTarget) that is
//   not an ECMAScript global is deleted: fetch, XMLHttpRequest, WebSocket,
//   EventSource, importScripts, indexedDB, caches, navigator (storage,
//   OPFS), Worker, postMessage, onmessage, addEventListener, self, close,
//   timers, and every Web API interface object;
// - code generation from strings is tamed: eval and the Function,
//   AsyncFunction, GeneratorFunction and AsyncGeneratorFunction
//   constructors throw, so no source is compiled after the script's own
//   (and the `import` keyword is refused in that, so no dynamic import);
// - the worker's postMessage and its message handler are captured in
//   closures first: the script cannot post, receive or forge bridge
//   messages; only ctx calls (JSON text) and inputs cross.
//
// Hand-rolled rather than SES lockdown()/Compartment: see RATIONALE.md
// "How is the browser PTC worker locked down?". terminate() on ptc.stop
// pre-empts for(;;){}.
import { PRELUDE, makePtcHostKinds } from './ptc-prelude.mjs';

// ECMAScript globals kept (everything else goes).
const KEEP = ['globalThis', 'Infinity', 'NaN', 'undefined', 'eval', 'isFinite', 'isNaN', 'parseFloat', 'parseInt',
  'decodeURI', 'decodeURIComponent', 'encodeURI', 'encodeURIComponent', 'escape', 'unescape', 'AggregateError', 'Array',
  'ArrayBuffer', 'Atomics', 'BigInt', 'BigInt64Array', 'BigUint64Array', 'Boolean', 'DataView', 'Date', 'Error', 'EvalError',
  'FinalizationRegistry', 'Float16Array', 'Float32Array', 'Float64Array', 'Function', 'Int8Array', 'Int16Array', 'Int32Array',
  'Iterator', 'Map', 'Number', 'Object', 'Promise', 'Proxy', 'RangeError', 'ReferenceError', 'Reflect', 'RegExp', 'Set',
  'SharedArrayBuffer', 'String', 'Symbol', 'SyntaxError', 'TypeError', 'Uint8Array', 'Uint8ClampedArray', 'Uint16Array',
  'Uint32Array', 'URIError', 'WeakMap', 'WeakRef', 'WeakSet', 'JSON', 'Math', 'Intl', 'WebAssembly', 'SuppressedError',
  'DisposableStack', 'AsyncDisposableStack', 'run'];

const WORKER_SOURCE = `'use strict';
(function () {
  const G = globalThis;
  const post = G.postMessage.bind(G);
  const indirectEval = G.eval, RealFunction = G.Function;
  const PRELUDE = ${JSON.stringify(PRELUDE)};
  const KEEP = new Set(${JSON.stringify(KEEP)});
  const getProto = Object.getPrototypeOf, names = Object.getOwnPropertyNames, symbols = Object.getOwnPropertySymbols;
  const defineProperty = Object.defineProperty;
  let kit = null;

  function send(id, method, json) { post({ t: 'call', id: Number(id), method: String(method), args: String(json) }); }
  function finish(ok, text, line) {
    post(ok ? { t: 'done', ok: true, value: String(text) } : { t: 'done', ok: false, error: { message: String(text), line: Number(line) || 0 } });
  }
  function lockdown() {
    const left = [];
    for (let o = G; o && o !== Object.prototype; o = getProto(o)) {
      for (const k of names(o)) {
        if (o === G ? KEEP.has(k) : false) continue;
        let gone = false;
        try { gone = delete o[k]; } catch (_) { gone = false; }
        if (!gone) {
          // Non-configurable: harmless only if it holds a primitive (the
          // legacy TEMPORARY/PERSISTENT storage-type constants do).
          const desc = Object.getOwnPropertyDescriptor(o, k);
          const v = desc && desc.value;
          if (!desc || desc.get || desc.set || (v !== null && (typeof v === 'object' || typeof v === 'function'))) left.push(k);
        }
      }
      if (o !== G) for (const s of symbols(o)) { if (s !== Symbol.toStringTag) delete o[s]; }
    }
    const tame = function () { throw new EvalError('code generation from strings is disabled in programs'); };
    tame.prototype = Function.prototype;
    const kinds = [function () {}, async function () {}, function* () {}, async function* () {}];
    for (const f of kinds) defineProperty(getProto(f), 'constructor', { value: tame, writable: false, configurable: false, enumerable: false });
    defineProperty(G, 'Function', { value: tame, writable: false, configurable: false, enumerable: false });
    defineProperty(G, 'eval', { value: tame, writable: false, configurable: false, enumerable: false });
    if (left.length) throw new Error('lockdown left ' + left.join(','));
  }
  function start(d) {
    try {
      kit = indirectEval(PRELUDE + '\\n//# sourceURL=ptc-prelude.js')(send, finish, JSON.stringify(d.methods), JSON.stringify(d.tools), d.name, 2);
    } catch (e) {
      finish(false, 'the program worker failed to start: ' + String(e && e.message), 0);
      return;
    }
    // Compile the script as a function body (it cannot break out of it, and
    // none of its statements runs yet); V8 puts the body on line 3 of the
    // function's source, hence lineOffset 2 above.
    let compiled;
    try {
      compiled = new RealFunction(d.source + '\\n;return typeof run === "function" ? run : undefined;\\n//# sourceURL=' + d.name);
    } catch (e) {
      finish(false, (e && e.name === 'SyntaxError' ? 'SyntaxError: ' : '') + String(e && e.message), 0);
      return;
    }
    try { lockdown(); } catch (e) { finish(false, String(e.message), 0); return; }
    // The script's top-level statements run now, in the locked-down realm.
    kit.start(function (ctx, inputs) {
      const run = compiled();
      if (typeof run !== 'function') throw new Error('the script does not define async function run(ctx, inputs)');
      return run(ctx, inputs);
    }, d.inputs);
  }
  // The script's own unhandled rejections and errors (a ctx call refused
  // after run settled, say) stay in this worker: they are not the page's.
  G.addEventListener('unhandledrejection', function (e) { e.preventDefault(); });
  G.addEventListener('error', function (e) { e.preventDefault(); });
  G.onmessage = function (e) {
    const m = e.data;
    if (!m) return;
    if (m.t === 'start' && kit === null) start(m.init);
    else if (m.t === 'reply' && kit) kit.deliver(Number(m.id), !!m.ok, String(m.ok ? m.value : m.error));
  };
})();
`;

let workerURL = null;

// browserPtcHostKinds returns the PTC handlers for makeCreateSession's
// hostKinds, or {} where there is no Worker (the host then answers "no
// handler" and the program fails as unsupported).
export function browserPtcHostKinds() {
  if (typeof Worker === 'undefined' || typeof Blob === 'undefined' || typeof URL?.createObjectURL !== 'function') return {};
  return makePtcHostKinds((init, on) => {
    workerURL ??= URL.createObjectURL(new Blob([WORKER_SOURCE], { type: 'text/javascript' }));
    const w = new Worker(workerURL, { name: 'a3s-ptc' });
    let ended = false;
    w.onmessage = (e) => on.message(e.data);
    w.onerror = (e) => { e.preventDefault?.(); if (!ended) on.error(e.message || 'the program worker failed'); };
    w.onmessageerror = () => on.error('a message from the program worker could not be read');
    w.postMessage({ t: 'start', init });
    return { post: (m) => w.postMessage(m), terminate: () => { ended = true; w.terminate(); } };
  }, 'browser-worker');
}
