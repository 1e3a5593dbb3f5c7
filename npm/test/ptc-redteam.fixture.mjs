// The PTC red-team pack: escape attempts every engine must contain. Plain JSON after
// `export default` so Go (ptc/enginetest) reads the same file. Each script returns
// 'contained' when nothing escaped; expect: contained (exit 0, result 'contained'),
// fails (exit != 0), bounded (any outcome). Always: no 'escaped' in the output, pwned.txt
// never written, the next program starts from clean intrinsics.
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
   "    'Uint32Array','URIError','WeakMap','WeakRef','WeakSet','JSON','Math','Intl','WebAssembly','SuppressedError',",
   "    'DisposableStack','AsyncDisposableStack','console','run',",
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
  ],
  "engines": [
   "node",
   "browser"
  ],
  "note": "goja has no memory cap; the native engine is for trusted Go hosts"
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
  "engines": [
   "node"
  ],
  "note": "needs a per-isolate heap cap: Node's worker resourceLimits (64 MiB); goja and Chromium workers have none, the timeout bounds them"
 },
 {
  "name": "huge_buffer",
  "category": "resources",
  "expect": "contained",
  "source": [
   "async function run(ctx) {",
   "  try { new ArrayBuffer(2 ** 40); return 'allocated 1 TiB'; } catch (e) { return 'contained'; }",
   "}"
  ],
  "engines": [
   "node",
   "browser"
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
 }
];
