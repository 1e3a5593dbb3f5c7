// The PTC red-team pack: escape attempts every engine must contain. Plain JSON after
// `export default` so Go (ptc/enginetest) reads the same file. Each script returns
// 'contained' when nothing escaped; expect: contained (exit 0, result 'contained'),
// fails (exit != 0), bounded (any outcome, within the timeout). Always: no 'escaped'
// in the output, pwned.txt never written, the next program starts from clean
// intrinsics. engines, when present, limits an attempt to some of "native", "node",
// "browser"; every attempt here holds on all three (QuickJS everywhere). The
// realm_*, mem_*, ctx_concurrent_*, flood_*, result_* and args_* attempts are
// issue 11's findings 1, 5 and 7 with their variants. limits (timeoutMs...) apply as
// given; without timeoutMs every runner gives a contained attempt 30 s (it must finish:
// the bound only catches a hang, and heavy ones take over 2 s on a busy machine) and
// the rest 2 s.
export default [
 {
  "name": "net_fetch",
  "category": "network",
  "expect": "contained",
  "source": [
   "async function run(ctx) {",
   "  const v = globalThis['fe' + 'tch'];",
   "  return v === undefined ? 'contained' : 'escaped: ' + typeof v;",
   "}"
  ]
 },
 {
  "name": "net_xmlhttprequest",
  "category": "network",
  "expect": "contained",
  "source": [
   "async function run(ctx) {",
   "  const v = globalThis['XMLHttp' + 'Request'];",
   "  return v === undefined ? 'contained' : 'escaped: ' + typeof v;",
   "}"
  ]
 },
 {
  "name": "net_websocket",
  "category": "network",
  "expect": "contained",
  "source": [
   "async function run(ctx) {",
   "  const v = globalThis['Web' + 'Socket'];",
   "  return v === undefined ? 'contained' : 'escaped: ' + typeof v;",
   "}"
  ]
 },
 {
  "name": "net_eventsource",
  "category": "network",
  "expect": "contained",
  "source": [
   "async function run(ctx) {",
   "  const v = globalThis['Event' + 'Source'];",
   "  return v === undefined ? 'contained' : 'escaped: ' + typeof v;",
   "}"
  ]
 },
 {
  "name": "net_importscripts",
  "category": "network",
  "expect": "contained",
  "source": [
   "async function run(ctx) {",
   "  const v = globalThis['imp' + 'ortScripts'];",
   "  return v === undefined ? 'contained' : 'escaped: ' + typeof v;",
   "}"
  ]
 },
 {
  "name": "net_navigator",
  "category": "network",
  "expect": "contained",
  "source": [
   "async function run(ctx) {",
   "  const v = globalThis['navi' + 'gator'];",
   "  return v === undefined ? 'contained' : 'escaped: ' + typeof v;",
   "}"
  ]
 },
 {
  "name": "storage_indexeddb",
  "category": "storage",
  "expect": "contained",
  "source": [
   "async function run(ctx) {",
   "  const v = globalThis['indexed' + 'DB'];",
   "  return v === undefined ? 'contained' : 'escaped: ' + typeof v;",
   "}"
  ]
 },
 {
  "name": "storage_caches",
  "category": "storage",
  "expect": "contained",
  "source": [
   "async function run(ctx) {",
   "  const v = globalThis['cach' + 'es'];",
   "  return v === undefined ? 'contained' : 'escaped: ' + typeof v;",
   "}"
  ]
 },
 {
  "name": "storage_localstorage",
  "category": "storage",
  "expect": "contained",
  "source": [
   "async function run(ctx) {",
   "  const v = globalThis['local' + 'Storage'] || globalThis['session' + 'Storage'];",
   "  return v === undefined ? 'contained' : 'escaped: ' + typeof v;",
   "}"
  ]
 },
 {
  "name": "workers_nested",
  "category": "storage",
  "expect": "contained",
  "source": [
   "async function run(ctx) {",
   "  const v = globalThis['Wor' + 'ker'] || globalThis['Shared' + 'Worker'];",
   "  return v === undefined ? 'contained' : 'escaped: ' + typeof v;",
   "}"
  ]
 },
 {
  "name": "host_process_require",
  "category": "globals",
  "expect": "contained",
  "source": [
   "async function run(ctx) {",
   "  const v = globalThis['pro' + 'cess'] || globalThis['req' + 'uire'] || globalThis['mod' + 'ule'] || globalThis['Buf' + 'fer'] || globalThis['Deno'];",
   "  return v === undefined ? 'contained' : 'escaped: ' + typeof v;",
   "}"
  ]
 },
 {
  "name": "host_postmessage",
  "category": "globals",
  "expect": "contained",
  "source": [
   "async function run(ctx) {",
   "  const v = globalThis['post' + 'Message'] || globalThis['add' + 'EventListener'] || globalThis['onmes' + 'sage'] || globalThis['self'] || globalThis['close'];",
   "  return v === undefined ? 'contained' : 'escaped: ' + typeof v;",
   "}"
  ]
 },
 {
  "name": "net_dynamic_import_via_eval",
  "category": "network",
  "expect": "contained",
  "source": [
   "async function run(ctx) {",
   "  try {",
   "    const ev = globalThis['ev' + 'al'];",
   "    await ev('imp' + 'ort(\"data:text/javascript,export default 1\")');",
   "    return 'escaped: dynamic load ran';",
   "  } catch (e) {",
   "    return 'contained';",
   "  }",
   "}"
  ]
 },
 {
  "name": "net_dynamic_import_via_function",
  "category": "network",
  "expect": "contained",
  "source": [
   "async function run(ctx) {",
   "  try {",
   "    const F = (async function () {}).constructor;",
   "    await F('return imp' + 'ort(\"node:fs\")')();",
   "    return 'escaped: dynamic load ran';",
   "  } catch (e) {",
   "    return 'contained';",
   "  }",
   "}"
  ]
 },
 {
  "name": "net_import_keyword_spelled_oddly",
  "category": "network",
  "expect": "fails",
  "source": [
   "async function run(ctx) {",
   "  const m = await import/**/('node:fs');",
   "  return 'escaped: loaded ' + typeof m;",
   "}"
  ],
  "note": "refused by the source check before any engine runs"
 },
 {
  "name": "globals_whitelist",
  "category": "globals",
  "expect": "contained",
  "source": [
   "async function run(ctx) {",
   "  const std = new Set(['globalThis','Infinity','NaN','undefined','eval','isFinite','isNaN','parseFloat','parseInt',",
   "    'decodeURI','decodeURIComponent','encodeURI','encodeURIComponent','escape','unescape','AggregateError','Array',",
   "    'ArrayBuffer','Atomics','BigInt','BigInt64Array','BigUint64Array','Boolean','DataView','Date','Error','EvalError',",
   "    'FinalizationRegistry','Float16Array','Float32Array','Float64Array','Function','Int8Array','Int16Array','Int32Array',",
   "    'Iterator','Map','Number','Object','Promise','Proxy','RangeError','ReferenceError','Reflect','RegExp','Set',",
   "    'SharedArrayBuffer','String','Symbol','SyntaxError','TypeError','Uint8Array','Uint8ClampedArray','Uint16Array',",
   "    'Uint32Array','URIError','WeakMap','WeakRef','WeakSet','JSON','Math','Intl','SuppressedError',",
   "    'DisposableStack','AsyncDisposableStack','run',",
   "    'constructor','__proto__','__defineGetter__','__defineSetter__','__lookupGetter__','__lookupSetter__',",
   "    'hasOwnProperty','isPrototypeOf','propertyIsEnumerable','toLocaleString','toString','valueOf']);",
   "  const extra = [];",
   "  for (let o = globalThis; o && o !== Object.prototype; o = Object.getPrototypeOf(o)) {",
   "    for (const k of Object.getOwnPropertyNames(o)) {",
   "      if (std.has(k)) continue;",
   "      const d = Object.getOwnPropertyDescriptor(o, k);",
   "      if (d && !d.get && !d.set && (d.value === null || (typeof d.value !== 'object' && typeof d.value !== 'function'))) continue;",
   "      extra.push(k);",
   "    }",
   "  }",
   "  return extra.length === 0 ? 'contained' : 'escaped: non-standard globals ' + extra.slice(0, 20).join(',');",
   "}"
  ]
 },
 {
  "name": "host_function_constructor_global",
  "category": "realm",
  "expect": "contained",
  "source": [
   "async function run(ctx) {",
   "  let g;",
   "  try { g = (function () {}).constructor('return this')(); } catch (e) { return 'contained'; }",
   "  const leak = ['pro' + 'cess', 'req' + 'uire', 'fe' + 'tch', 'post' + 'Message', 'self'].filter((k) => g[k] !== undefined);",
   "  return leak.length === 0 ? 'contained' : 'escaped: ' + leak.join(',');",
   "}"
  ]
 },
 {
  "name": "host_ctx_function_constructor",
  "category": "realm",
  "expect": "contained",
  "source": [
   "async function run(ctx) {",
   "  const F = ctx.tool.constructor;",
   "  if (F !== Function) return 'escaped: ctx.tool is a foreign-realm function';",
   "  let g;",
   "  try { g = F('return this')(); } catch (e) { return 'contained'; }",
   "  return g === globalThis && g['pro' + 'cess'] === undefined ? 'contained' : 'escaped: reached another global';",
   "}"
  ]
 },
 {
  "name": "host_ctx_result_constructor",
  "category": "realm",
  "expect": "contained",
  "source": [
   "async function run(ctx) {",
   "  const r = await ctx.read('a.txt');",
   "  const objs = [r, r.metadata, ctx, ctx.tools, inputsOf(r)];",
   "  for (const o of objs) {",
   "    if (o && Object.getPrototypeOf(o) !== Object.prototype) return 'escaped: foreign prototype';",
   "  }",
   "  const p = ctx.readFile('a.txt');",
   "  if (!(p instanceof Promise)) return 'escaped: ctx returned a foreign promise';",
   "  await p;",
   "  return 'contained';",
   "}",
   "function inputsOf(r) { return null; }"
  ]
 },
 {
  "name": "host_inputs_realm",
  "category": "realm",
  "expect": "contained",
  "source": [
   "async function run(ctx, inputs) {",
   "  return Object.getPrototypeOf(inputs) === Object.prototype && Array.isArray(inputs.list) &&",
   "    Object.getPrototypeOf(inputs.list) === Array.prototype ? 'contained' : 'escaped: inputs from another realm';",
   "}"
  ]
 },
 {
  "name": "host_error_realm",
  "category": "realm",
  "expect": "contained",
  "source": [
   "async function run(ctx) {",
   "  try {",
   "    await ctx.readFile('missing.txt');",
   "    return 'unexpected success';",
   "  } catch (e) {",
   "    return e instanceof Error && e.constructor === Error ? 'contained' : 'escaped: foreign error ' + Object.prototype.toString.call(e);",
   "  }",
   "}"
  ]
 },
 {
  "name": "host_prepare_stack_trace",
  "category": "realm",
  "expect": "contained",
  "source": [
   "async function run(ctx) {",
   "  const leaks = [];",
   "  Error.prepareStackTrace = (e, sites) => {",
   "    for (const s of sites) {",
   "      for (const get of ['getThis', 'getFunction']) {",
   "        try {",
   "          const x = s[get] && s[get]();",
   "          if (x && (x['pro' + 'cess'] || x['post' + 'Message'] || (typeof x === 'function' && x.constructor !== Function && x.constructor !== (async function () {}).constructor))) leaks.push(get);",
   "        } catch (err) {}",
   "      }",
   "    }",
   "    return 'trace';",
   "  };",
   "  const probe = { toJSON() { new Error('probe').stack; return 'a.txt'; } };",
   "  try { await ctx.readFile(probe); } catch (e) { void e.stack; }",
   "  try { await ctx.tool('read', { file_path: probe }); } catch (e) { void e.stack; }",
   "  return leaks.length === 0 ? 'contained' : 'escaped: ' + leaks.join(',');",
   "}"
  ]
 },
 {
  "name": "pollute_intrinsics_then_ctx",
  "category": "pollution",
  "expect": "contained",
  "source": [
   "async function run(ctx) {",
   "  Object.prototype.polluted = 'yes';",
   "  Array.prototype.map = function () { return ['hijacked']; };",
   "  JSON.parse = function () { return 'hijacked'; };",
   "  JSON.stringify = function () { return '\"hijacked\"'; };",
   "  globalThis.__marker = 'left behind';",
   "  const t = await ctx.readFile('a.txt');",
   "  return t === 'alpha\\n' ? 'contained' : 'ctx corrupted: ' + String(t);",
   "}"
  ]
 },
 {
  "name": "pollute_promise_then",
  "category": "pollution",
  "expect": "bounded",
  "source": [
   "async function run(ctx) {",
   "  const orig = Promise.prototype.then;",
   "  Promise.prototype.then = function (a, b) { return orig.call(this, a, b); };",
   "  Promise.prototype.constructor = function () {};",
   "  Object.defineProperty(Promise, Symbol.species, { get() { return undefined; } });",
   "  await ctx.readFile('a.txt');",
   "  return 'contained';",
   "}"
  ]
 },
 {
  "name": "pollute_ctx_results",
  "category": "pollution",
  "expect": "contained",
  "source": [
   "async function run(ctx) {",
   "  const r1 = await ctx.read('a.txt');",
   "  r1.metadata.polluted = true;",
   "  r1.output = 'changed';",
   "  Object.getPrototypeOf(r1).injected = 'yes';",
   "  const r2 = await ctx.read('a.txt');",
   "  return r2 !== r1 && r2.output !== 'changed' && r2.metadata.polluted === undefined ? 'contained' : 'escaped: results are shared';",
   "}"
  ]
 },
 {
  "name": "proto_key_in_args",
  "category": "pollution",
  "expect": "contained",
  "source": [
   "async function run(ctx) {",
   "  const args = JSON.parse('{\"__proto__\": {\"file_path\": \"a.txt\", \"polluted\": true}}');",
   "  try { await ctx.tool('read', args); } catch (e) {}",
   "  try { await ctx.readFile('a.txt', JSON.parse('{\"__proto__\": {\"offset\": 5}}')); } catch (e) {}",
   "  return ({}).polluted === undefined && ({}).file_path === undefined ? 'contained' : 'escaped: prototype polluted';",
   "}"
  ]
 },
 {
  "name": "freeze_defeat_ctx",
  "category": "pollution",
  "expect": "contained",
  "source": [
   "async function run(ctx) {",
   "  const attempts = [",
   "    () => Object.defineProperty(ctx, 'tool', { value: () => 'hijacked' }),",
   "    () => Object.setPrototypeOf(ctx, { evil: 1 }),",
   "    () => { ctx.tools.read = () => 'hijacked'; },",
   "    () => Reflect.set(ctx, 'readFile', () => 'x'),",
   "  ];",
   "  for (const a of attempts) { try { a(); } catch (e) {} }",
   "  const t = await ctx.readFile('a.txt');",
   "  return t === 'alpha\\n' && ctx.evil === undefined ? 'contained' : 'escaped: ctx mutated';",
   "}"
  ]
 },
 {
  "name": "forge_bridge_messages",
  "category": "bridge",
  "expect": "contained",
  "allowWrite": true,
  "source": [
   "async function run(ctx) {",
   "  const pm = globalThis['post' + 'Message'];",
   "  const msg = { type: 'ctx', id: 1, method: 'tool', args: '[\"write\",{\"file_path\":\"pwned.txt\",\"content\":\"x\"}]' };",
   "  if (typeof pm === 'function') { try { pm(msg); pm({ type: 'result', ok: true, value: '\"forged\"' }); } catch (e) {} }",
   "  for (const k of ['port', 'parentPort', '__bridge', '__call', '__ptc', 'ptcBridge', 'workerData']) {",
   "    if (globalThis[k] !== undefined) return 'escaped: found ' + k;",
   "  }",
   "  return 'contained';",
   "}"
  ]
 },
 {
  "name": "huge_string",
  "category": "resources",
  "expect": "bounded",
  "source": [
   "async function run(ctx) {",
   "  try { let s = 'x'.repeat(1 << 20); for (let i = 0; i < 40; i++) s = s + s; return 'allocated ' + s.length; }",
   "  catch (e) { return 'contained'; }",
   "}"
  ]
 },
 {
  "name": "heap_exhaustion",
  "category": "resources",
  "expect": "fails",
  "source": [
   "async function run(ctx) {",
   "  const keep = [];",
   "  for (;;) keep.push(new Array(1 << 16).fill(keep.length));",
   "}"
  ],
  "note": "fails by the memory bound or by the timeout, whichever comes first"
 },
 {
  "name": "huge_buffer",
  "category": "resources",
  "expect": "contained",
  "source": [
   "async function run(ctx) {",
   "  try { new ArrayBuffer(2 ** 40); return 'allocated 1 TiB'; } catch (e) { return 'contained'; }",
   "}"
  ]
 },
 {
  "name": "deep_recursion",
  "category": "resources",
  "expect": "bounded",
  "source": [
   "async function run(ctx) {",
   "  function f(n) { return f(n + 1) + 1; }",
   "  try { f(0); } catch (e) { return 'contained'; }",
   "  return 'no overflow';",
   "}"
  ]
 },
 {
  "name": "deep_recursion_into_ctx",
  "category": "resources",
  "expect": "bounded",
  "source": [
   "async function run(ctx) {",
   "  let caught = 'none';",
   "  function f(d) {",
   "    try { return f(d + 1); } catch (e) {",
   "      try { ctx.readFile('a.txt').catch((x) => { caught = x; }); } catch (x) { caught = x; }",
   "      return d;",
   "    }",
   "  }",
   "  f(0);",
   "  await null; await null;",
   "  if (caught !== 'none' && caught !== undefined && !(caught instanceof Error)) return 'escaped: foreign error at stack limit';",
   "  return 'contained';",
   "}"
  ]
 },
 {
  "name": "timer_after_return",
  "category": "lifetime",
  "expect": "contained",
  "allowWrite": true,
  "source": [
   "async function run(ctx) {",
   "  const st = globalThis['setTime' + 'out'];",
   "  if (typeof st === 'function') st(() => ctx.tool('write', { file_path: 'pwned.txt', content: 'timer' }), 50);",
   "  const si = globalThis['setInter' + 'val'];",
   "  if (typeof si === 'function') si(() => ctx.tool('write', { file_path: 'pwned.txt', content: 'interval' }), 30);",
   "  return 'contained';",
   "}"
  ]
 },
 {
  "name": "promise_after_return",
  "category": "lifetime",
  "expect": "contained",
  "allowWrite": true,
  "source": [
   "async function run(ctx) {",
   "  (async () => {",
   "    for (let i = 0; i < 1000; i++) await null;",
   "    await ctx.tool('write', { file_path: 'pwned.txt', content: 'late promise' });",
   "  })();",
   "  return 'contained';",
   "}"
  ]
 },
 {
  "name": "pending_ctx_call_after_return",
  "category": "lifetime",
  "expect": "contained",
  "allowWrite": true,
  "source": [
   "async function run(ctx) {",
   "  ctx.readFile('a.txt').then(() => ctx.tool('write', { file_path: 'pwned.txt', content: 'chained' }));",
   "  return 'contained';",
   "}"
  ]
 },
 {
  "name": "microtask_flood_after_return",
  "category": "lifetime",
  "expect": "bounded",
  "source": [
   "async function run(ctx) {",
   "  Promise.resolve().then(function loop() { return Promise.resolve().then(loop); });",
   "  return 'contained';",
   "}"
  ]
 },
 {
  "name": "getter_loops_in_result",
  "category": "lifetime",
  "expect": "fails",
  "source": [
   "async function run(ctx) {",
   "  return { get x() { for (;;) {} } };",
   "}"
  ]
 },
 {
  "name": "cyclic_result",
  "category": "lifetime",
  "expect": "fails",
  "source": [
   "async function run(ctx) {",
   "  const o = {}; o.self = o;",
   "  return o;",
   "}"
  ]
 },
 {
  "name": "tojson_probe",
  "category": "globals",
  "expect": "contained",
  "source": [
   "async function run(ctx) {",
   "  return { toJSON() { return globalThis['pro' + 'cess'] === undefined ? 'contained' : 'escaped: process'; } };",
   "}"
  ]
 },
 {
  "name": "atomics_wait_blocks",
  "category": "resources",
  "expect": "bounded",
  "source": [
   "async function run(ctx) {",
   "  try { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); } catch (e) { return 'contained'; }",
   "  return 'woke';",
   "}"
  ]
 },
 {
  "name": "wasm_compile",
  "category": "globals",
  "expect": "bounded",
  "source": [
   "async function run(ctx) {",
   "  if (typeof WebAssembly === 'undefined') return 'contained';",
   "  try { await WebAssembly.compile(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0])); } catch (e) { return 'contained'; }",
   "  return 'contained';",
   "}"
  ]
 },
 {
  "name": "throw_non_error",
  "category": "realm",
  "expect": "fails",
  "source": [
   "async function run(ctx) {",
   "  throw { toString() { for (;;) {} }, get message() { for (;;) {} } };",
   "}"
  ]
 },
 {
  "name": "realm_walk_every_reachable_object",
  "category": "realm",
  "expect": "contained",
  "source": [
   "async function run(ctx, inputs) {",
   "  const HOST = ['process', 'require', 'module', 'Buffer', 'global', 'fetch', 'postMessage', 'self', 'window', 'document',",
   "    'importScripts', 'std', 'os', 'Deno', 'Bun', 'navigator', 'print', 'console', 'setTimeout', 'setInterval',",
   "    'XMLHttpRequest', 'Web' + 'Socket', 'Worker', 'WebAssembly', 'location', 'indexedDB', 'caches', 'parentPort', 'workerData'];",
   "  const host = new Set(HOST);",
   "  const hostly = (o) => {",
   "    for (let p = o; p !== null; p = Object.getPrototypeOf(p)) {",
   "      for (const k of Reflect.ownKeys(p)) if (host.has(k) && !(k === 'global' && p === RegExp.prototype)) return String(k);",
   "    }",
   "    return '';",
   "  };",
   "  const promise = ctx.readFile('a.txt');",
   "  await promise;",
   "  const result = await ctx.read('a.txt');",
   "  let rejected, caught;",
   "  try { await ctx.readFile('missing.txt'); } catch (e) { rejected = e; }",
   "  try { null.f(); } catch (e) { caught = e; }",
   "  const roots = [globalThis, ctx, ctx.tools, result, rejected, caught, promise, inputs];",
   "  for (const k of Object.keys(ctx)) roots.push(ctx[k]);",
   "  for (const k of Object.keys(ctx.tools)) roots.push(ctx.tools[k]);",
   "  const seen = new Set(), queue = roots.slice(), fns = new Set(), leaks = [];",
   "  while (queue.length && seen.size < 50000) {",
   "    const o = queue.pop();",
   "    if ((typeof o !== 'object' && typeof o !== 'function') || o === null || seen.has(o)) continue;",
   "    seen.add(o);",
   "    if (typeof o === 'function') fns.add(o);",
   "    queue.push(Object.getPrototypeOf(o));",
   "    for (const k of Reflect.ownKeys(o)) {",
   "      if (host.has(k) && !(k === 'global' && o === RegExp.prototype)) leaks.push(String(k));",
   "      const d = Object.getOwnPropertyDescriptor(o, k);",
   "      if (!d) continue;",
   "      if ('value' in d) queue.push(d.value);",
   "      else { queue.push(d.get); queue.push(d.set); }",
   "    }",
   "  }",
   "  const makers = new Set([globalThis['ev' + 'al'], Function]);",
   "  for (const f of fns) {",
   "    try { makers.add(f.constructor); makers.add(Object.getPrototypeOf(f).constructor); } catch (e) {}",
   "    if (/Function$|^eval$/.test(f.name)) makers.add(f);",
   "  }",
   "  const bodies = ['return this', 'return pro' + 'cess', 'return typeof req' + 'uire === \"function\" ? req' + 'uire : globalThis', 'return (function () { return this })()'];",
   "  const tryValue = async (v) => {",
   "    if (typeof v === 'function') { try { v = v(); } catch (e) { return; } }",
   "    if (v && typeof v.next === 'function') { try { v = v.next().value; } catch (e) { return; } }",
   "    if (v && typeof v.then === 'function') { try { v = await v; } catch (e) { return; } }",
   "    if (v && typeof v === 'object' || typeof v === 'function') {",
   "      const h = hostly(v);",
   "      if (h) leaks.push('a constructor reached ' + h);",
   "    }",
   "  };",
   "  for (const F of makers) {",
   "    if (typeof F !== 'function') continue;",
   "    for (const b of bodies) {",
   "      for (const make of [() => F(b), () => new F(b), () => Reflect.construct(F, [b])]) {",
   "        let v;",
   "        try { v = make(); } catch (e) { continue; }",
   "        await tryValue(v);",
   "      }",
   "    }",
   "  }",
   "  return leaks.length === 0 && seen.size > 100 ? 'contained' : 'escaped: ' + (leaks.slice(0, 5).join(', ') || 'walked only ' + seen.size);",
   "}"
  ],
  "note": "issue 11 finding 1: walks globalThis, ctx, its methods, ctx.tools, a result, a rejection, a caught error, the promise of a call and inputs through every prototype, property and accessor, then tries every Function-like constructor found on source that would return the global or a host object"
 },
 {
  "name": "realm_codegen_refused_everywhere",
  "category": "realm",
  "expect": "contained",
  "source": [
   "async function run(ctx) {",
   "  const kinds = {",
   "    'function': function () {}, 'arrow': () => {}, 'async function': async function () {}, 'async arrow': async () => {},",
   "    'generator': function* () {}, 'async generator': async function* () {}, 'class': class {}, 'method': { m() {} }.m,",
   "    'getter': Object.getOwnPropertyDescriptor({ get g() { return 1; } }, 'g').get, 'bound': function () {}.bind(null),",
   "    'native': JSON.parse, 'ctx method': ctx.readFile, 'ctx.tools member': ctx.tools.read, 'promise then': Promise.prototype.then,",
   "  };",
   "  const makers = { 'eval': globalThis['ev' + 'al'], 'Function': Function };",
   "  for (const [k, f] of Object.entries(kinds)) {",
   "    makers[k + '.constructor'] = f.constructor;",
   "    makers[k + ' prototype.constructor'] = Object.getPrototypeOf(f).constructor;",
   "  }",
   "  const ran = [];",
   "  for (const [k, F] of Object.entries(makers)) {",
   "    for (const call of [() => F('return 1'), () => new F('return 1'), () => Reflect.construct(F, ['return 1']), () => Reflect.apply(F, null, ['1'])]) {",
   "      try {",
   "        call();",
   "        ran.push(k);",
   "      } catch (e) {",
   "        if (!(e instanceof EvalError) || e.message !== 'code generation from strings is disabled in programs') ran.push(k + ' threw ' + String(e));",
   "      }",
   "    }",
   "  }",
   "  return ran.length === 0 ? 'contained' : 'escaped: source compiled or unclear refusal via ' + ran.slice(0, 4).join('; ');",
   "}"
  ],
  "note": "finding 1: eval and the constructor of every kind of function (and of its prototype) refuse with EvalError, called, constructed or reflected"
 },
 {
  "name": "realm_ctx_values_of_the_script_realm",
  "category": "realm",
  "expect": "contained",
  "source": [
   "async function run(ctx, inputs) {",
   "  const bad = [];",
   "  const check = (what, cond) => { if (!cond) bad.push(what); };",
   "  const p = ctx.read('a.txt');",
   "  check('promise', p instanceof Promise && Object.getPrototypeOf(p) === Promise.prototype && p.constructor === Promise && p.then === Promise.prototype.then);",
   "  const r = await p;",
   "  check('result', Object.getPrototypeOf(r) === Object.prototype && r.constructor === Object);",
   "  check('result.metadata', r.metadata === undefined || Object.getPrototypeOf(r.metadata) === Object.prototype);",
   "  const t = await ctx.readFile('a.txt');",
   "  check('text', typeof t === 'string' && t.constructor === String);",
   "  const list = await ctx.glob('*.txt');",
   "  check('glob list', Array.isArray(list) && Object.getPrototypeOf(list) === Array.prototype);",
   "  try { await ctx.readFile('missing.txt'); bad.push('no rejection'); } catch (e) {",
   "    check('rejection', e instanceof Error && Object.getPrototypeOf(e) === Error.prototype && e.constructor === Error && typeof e.message === 'string');",
   "  }",
   "  try { null.f(); } catch (e) { check('engine error', e instanceof TypeError && e.constructor === TypeError); }",
   "  try { throw { x: 1 }; } catch (e) { check('thrown object', Object.getPrototypeOf(e) === Object.prototype); }",
   "  check('inputs', Object.getPrototypeOf(inputs) === Object.prototype && Object.getPrototypeOf(inputs.list) === Array.prototype);",
   "  for (const k of Object.keys(ctx)) if (typeof ctx[k] === 'function') check('ctx.' + k, ctx[k].constructor === Function && Object.getPrototypeOf(ctx[k]) === Function.prototype);",
   "  for (const k of Object.keys(ctx.tools)) check('ctx.tools.' + k, ctx.tools[k].constructor === Function && Object.getPrototypeOf(ctx.tools[k]) === Function.prototype);",
   "  check('ctx', Object.getPrototypeOf(ctx) === Object.prototype && Object.getPrototypeOf(ctx.tools) === Object.prototype);",
   "  for (let o = p, n = 0; o !== null; o = Object.getPrototypeOf(o), n++) if (n > 3) { bad.push('long promise chain'); break; }",
   "  return bad.length === 0 ? 'contained' : 'escaped: foreign-realm values: ' + bad.join(', ');",
   "}"
  ],
  "note": "finding 1: results, rejections, promises, inputs, thrown values and ctx members belong to the script realm"
 },
 {
  "name": "realm_error_stacks_show_script_frames_only",
  "category": "realm",
  "expect": "contained",
  "source": [
   "const topLevel = new Error('at top level');",
   "async function run(ctx) {",
   "  const errors = { topLevel };",
   "  try { throw new Error('thrown in run'); } catch (e) { errors.thrown = e; }",
   "  try { null.f(); } catch (e) { errors.engine = e; }",
   "  try { JSON.parse('{'); } catch (e) { errors.parse = e; }",
   "  try { await ctx.readFile('missing.txt'); } catch (e) { errors.rejected = e; }",
   "  const probe = { toJSON() { errors.inBridge = new Error('made while the bridge serialises'); return 'a.txt'; } };",
   "  await ctx.readFile(probe);",
   "  await ctx.readFile('a.txt').then(() => { errors.inCallback = new Error('made in a ctx callback'); });",
   "  await Promise.all([ctx.readFile('a.txt'), ctx.readFile('a.txt')]).then(() => { errors.afterAll = new RangeError('after Promise.all'); });",
   "  const bad = [];",
   "  for (const [k, e] of Object.entries(errors)) {",
   "    const s = String(e.stack);",
   "    if (/node:|internal|\\[worker eval\\]|prelude|ptc|bridge|quickjs|\\.mjs|wasm|https?:|file:|blob:|<ptc/i.test(s)) bad.push(k + ': ' + s.slice(0, 200));",
   "    for (const m of s.matchAll(/\\(([^()]*):\\d+:\\d+\\)/g)) if (m[1] !== 'inline.js') bad.push(k + ' names ' + m[1]);",
   "  }",
   "  return bad.length === 0 ? 'contained' : 'escaped: host frames in stacks: ' + bad.slice(0, 3).join(' | ');",
   "}"
  ],
  "note": "finding 1: no host, bridge or prelude frame in any error.stack, including errors made while the bridge runs"
 },
 {
  "name": "realm_call_sites_are_the_scripts",
  "category": "realm",
  "expect": "contained",
  "source": [
   "async function run(ctx) {",
   "  const mine = new Set();",
   "  const found = [];",
   "  Error.prepareStackTrace = (e, sites) => {",
   "    for (const s of sites) {",
   "      const file = typeof s.getFileName === 'function' ? s.getFileName() : undefined;",
   "      if (file !== 'inline.js') found.push('file ' + file);",
   "      for (const get of ['getFunction', 'getThis']) {",
   "        if (typeof s[get] !== 'function') continue;",
   "        let x;",
   "        try { x = s[get](); } catch (err) { continue; }",
   "        if (typeof x === 'function' && !mine.has(x)) found.push(get + ' gave a function the script did not define: ' + String(x).slice(0, 60));",
   "        if (x && typeof x === 'object' && x !== globalThis && (x['pro' + 'cess'] || x['post' + 'Message'])) found.push(get + ' gave a host object');",
   "      }",
   "    }",
   "    return 'trace';",
   "  };",
   "  function inRun() { return new Error('x').stack; }",
   "  const toJSON = function () { void new Error('in bridge').stack; return 'a.txt'; };",
   "  const cb = function () { void new Error('in callback').stack; };",
   "  [run, inRun, toJSON, cb].forEach((f) => mine.add(f));",
   "  inRun();",
   "  await ctx.readFile({ toJSON });",
   "  await ctx.tool('read', { file_path: { toJSON } }).then(cb, cb);",
   "  await ctx.readFile('a.txt').then(cb);",
   "  try { await ctx.readFile('missing.txt'); } catch (e) { void e.stack; }",
   "  Error.prepareStackTrace = undefined;",
   "  return found.length === 0 ? 'contained' : 'escaped: ' + found.slice(0, 3).join(' | ');",
   "}"
  ],
  "note": "finding 1: a script prepareStackTrace sees only its own call sites; getFunction/getThis give nothing it did not define"
 },
 {
  "name": "mem_1gib_arraybuffer",
  "category": "resources",
  "expect": "bounded",
  "source": [
   "async function run(ctx) {",
   "  try {",
   "    const b = new ArrayBuffer(2 ** 30);",
   "    new Uint8Array(b).fill(7, 2 ** 30 - 8);",
   "  } catch (e) {",
   "    return 'contained';",
   "  }",
   "  return 'escaped: allocated 1 GiB (ArrayBuffer)';",
   "}"
  ],
  "note": "finding 5: 1 GiB fails inside the script (caught here) or fails the program; the next program runs clean"
 },
 {
  "name": "mem_1gib_uint8array",
  "category": "resources",
  "expect": "bounded",
  "source": [
   "async function run(ctx) {",
   "  try {",
   "    const a = new Uint8Array(2 ** 30);",
   "    a[a.length - 1] = 7;",
   "  } catch (e) {",
   "    return 'contained';",
   "  }",
   "  return 'escaped: allocated 1 GiB (Uint8Array)';",
   "}"
  ],
  "note": "finding 5: 1 GiB fails inside the script (caught here) or fails the program; the next program runs clean"
 },
 {
  "name": "mem_1gib_string_repeat",
  "category": "resources",
  "expect": "bounded",
  "source": [
   "async function run(ctx) {",
   "  try {",
   "    const s = 'x'.repeat(2 ** 30);",
   "    if (s.indexOf('y') !== -1) return 'odd';",
   "  } catch (e) {",
   "    return 'contained';",
   "  }",
   "  return 'escaped: allocated 1 GiB (string repeat)';",
   "}"
  ],
  "note": "finding 5: 1 GiB fails inside the script (caught here) or fails the program; the next program runs clean"
 },
 {
  "name": "mem_1gib_string_doubling",
  "category": "resources",
  "expect": "bounded",
  "source": [
   "async function run(ctx) {",
   "  try {",
   "    let s = 'x'.repeat(1 << 20);",
   "    for (let i = 0; i < 10; i++) { s = s + s; if (s.indexOf('y') !== -1) return 'odd'; }",
   "  } catch (e) {",
   "    return 'contained';",
   "  }",
   "  return 'escaped: allocated 1 GiB (string doubling)';",
   "}"
  ],
  "note": "finding 5: 1 GiB fails inside the script (caught here) or fails the program; the next program runs clean"
 },
 {
  "name": "mem_1gib_array_push_buffers",
  "category": "resources",
  "expect": "bounded",
  "source": [
   "async function run(ctx) {",
   "  try {",
   "    const keep = [];",
   "    for (let i = 0; i < 1024; i++) keep.push(new Uint8Array(1 << 20).fill(i));",
   "  } catch (e) {",
   "    return 'contained';",
   "  }",
   "  return 'escaped: allocated 1 GiB (array of 1 MiB buffers)';",
   "}"
  ],
  "note": "finding 5: 1 GiB fails inside the script (caught here) or fails the program; the next program runs clean"
 },
 {
  "name": "mem_1gib_array_push_strings",
  "category": "resources",
  "expect": "bounded",
  "source": [
   "async function run(ctx) {",
   "  try {",
   "    const keep = [];",
   "    for (let i = 0; i < 16384; i++) keep.push(String(i).padEnd(1 << 16, 'y'));",
   "  } catch (e) {",
   "    return 'contained';",
   "  }",
   "  return 'escaped: allocated 1 GiB (array of 64 KiB strings)';",
   "}"
  ],
  "note": "finding 5: 1 GiB fails inside the script (caught here) or fails the program; the next program runs clean"
 },
 {
  "name": "mem_1gib_webassembly_memory",
  "category": "resources",
  "expect": "bounded",
  "source": [
   "async function run(ctx) {",
   "  try {",
   "    const W = globalThis['WebAss' + 'embly'];",
   "    if (W === undefined) return 'contained';",
   "    const m = new W.Memory({ initial: 16384, maximum: 16384 });",
   "    new Uint8Array(m.buffer)[2 ** 30 - 1] = 7;",
   "  } catch (e) {",
   "    return 'contained';",
   "  }",
   "  return 'escaped: allocated 1 GiB (WebAssembly.Memory)';",
   "}"
  ],
  "note": "finding 5: 1 GiB fails inside the script (caught here) or fails the program; the next program runs clean"
 },
 {
  "name": "ctx_concurrent_1000",
  "category": "resources",
  "expect": "bounded",
  "limits": {
   "maxToolCalls": 1000
  },
  "source": [
   "async function run(ctx) {",
   "  const names = Array.from({ length: 1000 }, () => 'a.txt');",
   "  const out = await Promise.allSettled(names.map((n) => ctx.readFile(n)));",
   "  let ok = 0, refused = 0;",
   "  for (const r of out) {",
   "    if (r.status === 'fulfilled' && (r.value === 'alpha\\n' || (r.value && r.value.exitCode === 0))) ok++;",
   "    else if (r.status === 'rejected' && r.reason instanceof Error && /^PTC script exceeded maxToolCalls=\\d+$/.test(r.reason.message)) refused++;",
   "    else return 'escaped: unclear outcome ' + JSON.stringify(r).slice(0, 120);",
   "  }",
   "  return ok + refused === 1000 && ok > 0 ? 'contained' : 'escaped: ' + ok + ' results, ' + refused + ' refusals';",
   "}"
  ],
  "note": "finding 5: 1,000 concurrent ctx calls end with results or the clear refusal, never a crash; at most maxInFlight are outstanding at once (bounded: within the pack timeout a busy host may not finish all)"
 },
 {
  "name": "ctx_concurrent_1000_default_limit",
  "category": "resources",
  "expect": "bounded",
  "source": [
   "async function run(ctx) {",
   "  const names = Array.from({ length: 1000 }, () => 'a.txt');",
   "  const out = await Promise.allSettled(names.map((n) => ctx.readFile(n)));",
   "  let ok = 0, refused = 0;",
   "  for (const r of out) {",
   "    if (r.status === 'fulfilled' && (r.value === 'alpha\\n' || (r.value && r.value.exitCode === 0))) ok++;",
   "    else if (r.status === 'rejected' && r.reason instanceof Error && /^PTC script exceeded maxToolCalls=\\d+$/.test(r.reason.message)) refused++;",
   "    else return 'escaped: unclear outcome ' + JSON.stringify(r).slice(0, 120);",
   "  }",
   "  return ok + refused === 1000 && ok > 0 ? 'contained' : 'escaped: ' + ok + ' results, ' + refused + ' refusals';",
   "}"
  ],
  "note": "finding 5: with the default maxToolCalls (20) the first calls succeed and the rest are refused inside the engine"
 },
 {
  "name": "ctx_concurrent_1000_tools_proxy",
  "category": "resources",
  "expect": "bounded",
  "limits": {
   "maxToolCalls": 1000
  },
  "source": [
   "async function run(ctx) {",
   "  const names = Array.from({ length: 1000 }, () => 'a.txt');",
   "  const out = await Promise.allSettled(names.map((n) => ctx.tools.read({ file_path: n })));",
   "  let ok = 0, refused = 0;",
   "  for (const r of out) {",
   "    if (r.status === 'fulfilled' && (r.value === 'alpha\\n' || (r.value && r.value.exitCode === 0))) ok++;",
   "    else if (r.status === 'rejected' && r.reason instanceof Error && /^PTC script exceeded maxToolCalls=\\d+$/.test(r.reason.message)) refused++;",
   "    else return 'escaped: unclear outcome ' + JSON.stringify(r).slice(0, 120);",
   "  }",
   "  return ok + refused === 1000 && ok > 0 ? 'contained' : 'escaped: ' + ok + ' results, ' + refused + ' refusals';",
   "}"
  ],
  "note": "finding 5: the same through ctx.tools"
 },
 {
  "name": "ctx_concurrent_300_in_waves",
  "category": "resources",
  "expect": "bounded",
  "limits": {
   "maxToolCalls": 300
  },
  "source": [
   "async function run(ctx) {",
   "  let ok = 0;",
   "  for (let w = 0; w < 3; w++) {",
   "    const out = await Promise.all(Array.from({ length: 100 }, () => ctx.readFile('a.txt')));",
   "    ok += out.filter((t) => t === 'alpha\\n').length;",
   "  }",
   "  return ok === 300 ? 'contained' : 'escaped: ' + ok + ' of 300 results';",
   "}"
  ],
  "note": "finding 5: three waves of 100 concurrent calls (the size that once crashed the browser host)"
 },
 {
  "name": "flood_1e6_unawaited_after_limit",
  "category": "flood",
  "expect": "bounded",
  "source": [
   "async function run(ctx) {",
   "  for (let i = 0; i < 20; i++) await ctx.readFile('a.txt');",
   "  let last;",
   "  for (let i = 0; i < 1000000; i++) last = ctx.readFile('a.txt');",
   "  try { await last; } catch (e) {",
   "    return e instanceof Error && e.message === 'PTC script exceeded maxToolCalls=20' ? 'contained' : 'escaped: unclear refusal ' + String(e);",
   "  }",
   "  return 'escaped: a call past maxToolCalls succeeded';",
   "}"
  ],
  "note": "finding 7: a million un-awaited calls after maxToolCalls are refused inside the engine; the host sees none of them (bounded: the program fails by the limit violation, and must end within its timeout)"
 },
 {
  "name": "flood_1e5_ctx_tool_after_limit",
  "category": "flood",
  "expect": "bounded",
  "source": [
   "async function run(ctx) {",
   "  for (let i = 0; i < 20; i++) await ctx.readFile('a.txt');",
   "  let last;",
   "  for (let i = 0; i < 100000; i++) last = ctx.tool('read', { file_path: 'a.txt' });",
   "  try { await last; } catch (e) {",
   "    return e instanceof Error && e.message === 'PTC script exceeded maxToolCalls=20' ? 'contained' : 'escaped: unclear refusal ' + String(e);",
   "  }",
   "  return 'escaped: a call past maxToolCalls succeeded';",
   "}"
  ],
  "note": "finding 7: the same through ctx.tool"
 },
 {
  "name": "flood_1e5_tools_proxy_after_limit",
  "category": "flood",
  "expect": "bounded",
  "source": [
   "async function run(ctx) {",
   "  for (let i = 0; i < 20; i++) await ctx.readFile('a.txt');",
   "  let last;",
   "  for (let i = 0; i < 100000; i++) last = ctx.tools.read({ file_path: 'a.txt' });",
   "  try { await last; } catch (e) {",
   "    return e instanceof Error && e.message === 'PTC script exceeded maxToolCalls=20' ? 'contained' : 'escaped: unclear refusal ' + String(e);",
   "  }",
   "  return 'escaped: a call past maxToolCalls succeeded';",
   "}"
  ],
  "note": "finding 7: the same through ctx.tools"
 },
 {
  "name": "flood_awaited_after_limit",
  "category": "flood",
  "expect": "bounded",
  "source": [
   "async function run(ctx) {",
   "  let refused = 0;",
   "  for (let i = 0; i < 50000; i++) {",
   "    try { await ctx.readFile('a.txt'); } catch (e) {",
   "      if (!(e instanceof Error) || e.message !== 'PTC script exceeded maxToolCalls=20') return 'escaped: unclear refusal ' + String(e);",
   "      refused++;",
   "    }",
   "  }",
   "  return refused === 50000 - 20 ? 'contained' : 'escaped: ' + refused + ' refused';",
   "}"
  ],
  "note": "finding 7: awaited calls past the limit are refused one by one, none crossing"
 },
 {
  "name": "result_20mb_refused",
  "category": "flood",
  "expect": "fails",
  "source": [
   "async function run(ctx) {",
   "  return 'x'.repeat(20 * 1000 * 1000);",
   "}"
  ],
  "note": "finding 7: a result over maxResultBytes (1 MiB) fails the program inside the engine"
 },
 {
  "name": "result_2mb_of_objects_refused",
  "category": "flood",
  "expect": "fails",
  "source": [
   "async function run(ctx) {",
   "  return Array.from({ length: 200000 }, (_, i) => ({ i }));",
   "}"
  ],
  "note": "finding 7: the limit is on the JSON text, whatever its shape"
 },
 {
  "name": "result_tojson_inflates_refused",
  "category": "flood",
  "expect": "fails",
  "source": [
   "async function run(ctx) {",
   "  return { toJSON() { return 'y'.repeat(3 << 20); } };",
   "}"
  ],
  "note": "finding 7: measured after toJSON"
 },
 {
  "name": "args_over_limit_refused_before_crossing",
  "category": "flood",
  "expect": "contained",
  "allowWrite": true,
  "source": [
   "async function run(ctx) {",
   "  const big = 'x'.repeat((1 << 20) + 1);",
   "  const want = /^the arguments of ctx\\.(readFile|tool) are \\d+ bytes of JSON; the limit is 1048576$/;",
   "  const tries = [() => ctx.readFile(big), () => ctx.tool('write', { file_path: 'pwned.txt', content: big })];",
   "  for (let i = 0; i < 2; i++) {",
   "    for (const t of tries) {",
   "      try { await t(); return 'escaped: an argument over the limit crossed'; } catch (e) {",
   "        if (!(e instanceof Error) || !want.test(e.message)) return 'escaped: unclear refusal ' + String(e).slice(0, 120);",
   "      }",
   "    }",
   "  }",
   "  return (await ctx.readFile('a.txt')) === 'alpha\\n' ? 'contained' : 'escaped: ctx broken after refusals';",
   "}"
  ],
  "note": "finding 7: a ctx call whose arguments exceed maxResultBytes is refused inside the engine and does not count"
 },
 {
  "name": "scope_batch_child_write",
  "category": "scope",
  "expect": "fails",
  "source": [
   "async function run(ctx) {",
   "  try { await ctx.tool('batch', { invocations: [{ tool: 'write', args: { file_path: 'pwned.txt', content: 'pwned' } }] }); } catch (e) {}",
   "  return 'contained';",
   "}"
  ],
  "note": "finding 2: a program allowed read and batch may not reach write as a batch child; the refusal fails the program even when caught",
  "allowedTools": [
   "read",
   "batch"
  ]
 },
 {
  "name": "scope_batch_in_batch_write",
  "category": "scope",
  "expect": "bounded",
  "source": [
   "async function run(ctx) {",
   "  try { await ctx.tool('batch', { invocations: [{ tool: 'batch', args: { invocations: [{ tool: 'write', args: { file_path: 'pwned.txt', content: 'pwned' } }] } }] }); } catch (e) {}",
   "  return 'contained';",
   "}"
  ],
  "note": "finding 2: at any depth (the inner batch may be refused by the recursion guard or the scope; either way pwned.txt is never written)",
  "allowedTools": [
   "read",
   "batch"
  ]
 },
 {
  "name": "scope_batch_child_edit_patch",
  "category": "scope",
  "expect": "fails",
  "source": [
   "async function run(ctx) {",
   "  const diff = '--- a/a.txt\\n+++ b/a.txt\\n@@ -1 +1 @@\\n-alpha\\n+pwned\\n';",
   "  try { await ctx.tool('batch', { invocations: [",
   "    { tool: 'edit', args: { file_path: 'a.txt', old_string: 'alpha', new_string: 'pwned' } },",
   "    { tool: 'patch', args: { file_path: 'a.txt', diff } } ] }); } catch (e) {}",
   "  const t = await ctx.readFile('a.txt').catch(() => 'alpha\\n');",
   "  return t === 'alpha\\n' ? 'contained' : 'escaped: a.txt became ' + t;",
   "}"
  ],
  "note": "finding 2: edit and patch as batch children are outside ['read','batch'] (a later canary also checks a.txt)",
  "allowedTools": [
   "read",
   "batch"
  ]
 },
 {
  "name": "scope_batch_children_count",
  "category": "scope",
  "expect": "fails",
  "source": [
   "async function run(ctx) {",
   "  const inv = Array.from({ length: 10 }, () => ({ tool: 'read', args: { file_path: 'a.txt' } }));",
   "  try { await ctx.tool('batch', { invocations: inv }); } catch (e) {}",
   "  return 'contained';",
   "}"
  ],
  "note": "finding 2: maxToolCalls counts every invocation a script causes (a batch of 10 reads is 11 calls > 3)",
  "allowedTools": [
   "read",
   "batch"
  ],
  "limits": {
   "maxToolCalls": 3
  }
 },
 {
  "name": "search_glob_nested_braces",
  "category": "search",
  "expect": "bounded",
  "source": [
   "async function run(ctx) {",
   "  let p = 'x';",
   "  for (let i = 0; i < 12; i++) p = '{' + p + ',' + p + '}';",
   "  try { await ctx.glob('**/' + p); return 'ran'; } catch (e) { return 'refused'; }",
   "}"
  ],
  "note": "finding 6: nested braces are refused up front (depth and expansion limits), never exponential inside a name match"
 },
 {
  "name": "search_glob_braces_in_sequence",
  "category": "search",
  "expect": "bounded",
  "source": [
   "async function run(ctx) {",
   "  await ctx.tool('write', { file_path: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab.txt', content: 'x' });",
   "  const p = '{a,a}'.repeat(16) + '*c';",
   "  try { await ctx.glob(p); return 'ran'; } catch (e) { return 'refused'; }",
   "}"
  ],
  "note": "finding 6: braces in sequence (2^16 alternatives) are refused or matched in bounded time"
 },
 {
  "name": "search_glob_doublestar_braces",
  "category": "search",
  "expect": "bounded",
  "source": [
   "async function run(ctx) {",
   "  const p = '**/' + '{a*,b*,c*,d*}/'.repeat(6) + '**/*.{js,ts,go,rs}';",
   "  try { await ctx.glob(p); return 'ran'; } catch (e) { return 'refused'; }",
   "}"
  ],
  "note": "finding 6: ** plus braces"
 },
 {
  "name": "search_grep_long_line_alternation",
  "category": "search",
  "expect": "bounded",
  "source": [
   "async function run(ctx) {",
   "  await ctx.tool('write', { file_path: 'bundle.min.js', content: 'abcdefgh'.repeat(100000) });",
   "  try { await ctx.grep('(a|b|c|d|e|f|g|h){300}z', { path: 'bundle.min.js' }); return 'ran'; } catch (e) { return 'stopped'; }",
   "}"
  ],
  "note": "finding 6: one long line with a large RE2 program stops at the timeout (or is refused), the engine returns in time",
  "limits": {
   "timeoutMs": 1500
  }
 },
 {
  "name": "search_grep_long_line_ignorecase_count",
  "category": "search",
  "expect": "bounded",
  "source": [
   "async function run(ctx) {",
   "  await ctx.tool('write', { file_path: 'bundle.min.js', content: 'ABCDEFGH'.repeat(100000) });",
   "  try { await ctx.tool('grep', { pattern: '(a|b|c|d|e|f|g|h){200}z', path: 'bundle.min.js', '-i': true, output_mode: 'count' }); return 'ran'; } catch (e) { return 'stopped'; }",
   "}"
  ],
  "note": "finding 6: -i and count mode",
  "limits": {
   "timeoutMs": 1500
  }
 },
 {
  "name": "search_grep_program_too_large",
  "category": "search",
  "expect": "bounded",
  "source": [
   "async function run(ctx) {",
   "  const alt = Array.from({ length: 400 }, (_, i) => 'w' + i).join('|');",
   "  try { await ctx.grep('(' + alt + '){40}', { path: '.' }); return 'ran'; } catch (e) { return 'refused'; }",
   "}"
  ],
  "note": "finding 6: an RE2 program over the instruction limit is refused up front"
 },
 {
  "name": "args_case_variant_keys",
  "category": "args",
  "expect": "contained",
  "source": [
   "async function run(ctx) {",
   "  const tries = [",
   "    { file_path: 'ok.txt', FILE_PATH: 'pwned.txt', content: 'x' },",
   "    { FILE_PATH: 'pwned.txt', file_path: 'ok.txt', content: 'x' },",
   "    { File_Path: 'pwned.txt', content: 'x' },",
   "    { file_path: 'pwned.txt', content: 'x', Content: 'y' },",
   "  ];",
   "  for (const a of tries) {",
   "    const r = await ctx.tool('write', a);",
   "    if (r.exitCode === 0) return 'escaped: write took ' + JSON.stringify(a);",
   "  }",
   "  const r = await ctx.tool('read', { file_path: 'ok.txt' });",
   "  return r.exitCode === 0 ? 'escaped: ok.txt written' : 'contained';",
   "}"
  ],
  "note": "ctx.tool's object reaches the kernel as the script wrote it (2026-12-03, no longer re-marshalled from a map): keys that only a case-insensitive decode would take are refused by the tool's schema before it runs; pwned.txt must not be written"
 }
];
