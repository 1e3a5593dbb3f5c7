// The workerd tier (`make test-workerd`): pack the built package, install
// the tarball into a scratch Worker project as a user would, bundle it with
// wrangler (`deploy --dry-run`, no login), serve the bundle with the real
// workerd binary on 127.0.0.1 and a free port, and check its answers.
//   node npm/test/workerd/run.mjs            (KEEP_SCRATCH=1 keeps the project)
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, copyFileSync, readdirSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { createServer as createHTTPServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join, dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { startLLMServer } from '../../../web/test/llmserver.mjs';
import pack from '../ptc-redteam.fixture.mjs';
import { bin, freePort, startWranglerDev, wranglerEnv } from './rig.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const pkgDir = join(here, '..', '..');
const keep = process.env.KEEP_SCRATCH === '1';
const t0 = Date.now();
const step = (what) => console.log(`[workerd tier +${((Date.now() - t0) / 1000).toFixed(1)}s] ${what}`);

for (const b of ['wrangler', 'workerd']) {
  if (!existsSync(bin(b))) throw new Error(`${bin(b)} is missing: run \`make deps\` (npm ci at the repository root)`);
}

async function fetchJSON(url, deadline) {
  for (;;) {
    try {
      const res = await fetch(url);
      const body = await res.text();
      assert.equal(res.status, 200, body);
      return JSON.parse(body);
    } catch (e) {
      if (Date.now() > deadline || (e instanceof assert.AssertionError)) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

const scratch = mkdtempSync(join(tmpdir(), 'code-wasm-workerd-'));
let workerd;
let llmServer;
let site;
let wranglerDev;
try {
  step('npm pack');
  const packOut = execFileSync('npm', ['pack', '--json', '--pack-destination', scratch], { cwd: pkgDir, encoding: 'utf8' });
  const tgz = join(scratch, JSON.parse(packOut)[0].filename);
  const project = join(scratch, 'worker');
  mkdirSync(join(project, 'src'), { recursive: true });
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'code-wasm-worker-test', private: true, type: 'module' }));
  step('npm install the tarball');
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tgz], { cwd: project, stdio: 'inherit' });
  copyFileSync(join(here, 'worker.mjs'), join(project, 'src', 'worker.mjs'));
  writeFileSync(join(project, 'wrangler.toml'), [
    'name = "code-wasm-workerd-test"',
    'main = "src/worker.mjs"',
    'compatibility_date = "2025-09-01"',
    '[[r2_buckets]]',
    'binding = "WORKSPACE"',
    'bucket_name = "code-workspaces"',
    '',
  ].join('\n'));

  step('wrangler deploy --dry-run --outdir dist');
  const env = wranglerEnv(scratch);
  const out = execFileSync(bin('wrangler'), ['deploy', '--dry-run', '--outdir', 'dist'], { cwd: project, env, encoding: 'utf8' });
  const upload = out.match(/Total Upload: .*/)?.[0];
  console.log(upload ?? out);

  const dist = join(project, 'dist');
  const files = readdirSync(dist);
  const mainJs = files.find((f) => f.endsWith('.js') && !f.endsWith('.map.js'));
  const wasms = files.filter((f) => f.endsWith('.wasm'));
  assert.ok(mainJs, `wrangler emitted no .js: ${files}`);
  assert.equal(wasms.length, 2, `wrangler picked the workerd condition and emitted code.wasm and quickjs.wasm as modules: ${files}`);

  // The test Worker's own code (last in the bundle) probes the platform
  // with a compile of bytes; the scan is of everything before it.
  const bundle = readFileSync(join(dist, mainJs), 'utf8');
  const own = bundle.lastIndexOf('\n// src/worker.mjs\n');
  assert.ok(own > 0, 'the bundle marks the test Worker\'s code');
  scanBundle(bundle.slice(0, own));

  const port = await freePort();
  const modules = [
    `(name = "${mainJs}", esModule = embed "dist/${mainJs}")`,
    ...wasms.map((w) => `(name = "${w}", wasm = embed "dist/${w}")`),
  ];
  writeFileSync(join(project, 'config.capnp'), `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .worker), (name = "net", network = (allow = ["public", "private", "local"])) ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const worker :Workerd.Worker = (
  modules = [ ${modules.join(', ')} ],
  compatibilityDate = "2025-09-01",
  globalOutbound = "net",
);
`);

  step(`workerd serve on 127.0.0.1:${port}`);
  workerd = spawn(bin('workerd'), ['serve', 'config.capnp'], { cwd: project, stdio: ['ignore', 'inherit', 'inherit'] });
  const exited = new Promise((_, reject) => workerd.on('exit', (code) => reject(new Error(`workerd exited with ${code}`))));
  exited.catch(() => {});
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30000;

  const first = await Promise.race([fetchJSON(`${base}/`, deadline), exited]);
  step(`first response: ${JSON.stringify(first).slice(0, 160)}`);
  for (const t of ['read', 'write', 'edit', 'patch', 'ls', 'glob', 'grep']) assert.ok(first.toolNames.includes(t), `${t} in ${first.toolNames}`);
  assert.ok(!first.toolNames.includes('bash') && !first.toolNames.includes('git'), String(first.toolNames));
  // program runs in QuickJS on the calling thread (ptc-workerd.mjs).
  assert.ok(first.toolNames.includes('program'), `program listed: ${first.toolNames}`);
  assert.equal(first.read, '     1\thello from workerd\n');

  // The one Go instance of the isolate serves later and concurrent requests.
  const texts = ['alpha', 'beta', 'gamma', 'delta'];
  const writes = await Promise.all(texts.map((t) => fetchJSON(`${base}/write?text=${t}`, deadline)));
  writes.forEach((w, i) => {
    assert.equal(w.write.exitCode, 0, JSON.stringify(w));
    assert.equal(w.read, `     1\t${texts[i]}\n`, 'each request has its own workspace');
    assert.deepEqual(w.glob.sort(), ['hello.txt', 'notes/n.txt']);
  });
  const hidden = await fetchJSON(`${base}/hidden`, deadline);
  assert.equal(hidden.code, 'TOOL_NOT_REGISTERED', JSON.stringify(hidden));
  const opfs = await fetchJSON(`${base}/opfs`, deadline);
  assert.equal(opfs.code, 'INVALID_OPTIONS', JSON.stringify(opfs));
  assert.match(opfs.message, /the opfs workspace needs a browser \(Origin Private File System\); use kind 'memory' here/);
  assert.doesNotMatch(opfs.message, /goroutine|panic/);
  // The agent loop (issue 13): send from the Worker against the scripted
  // provider server (llm/llmtest's helper binary, on 127.0.0.1).
  step('send against the scripted provider server');
  llmServer = await startLLMServer();
  const llmURL = llmServer.url;
  for (const provider of ['openai', 'anthropic']) {
    const id = provider === 'openai' ? 'call_1' : 'toolu_1';
    const usage = { promptTokens: 10, completionTokens: 5, totalTokens: 15 };
    const script = await (await fetch(`${llmURL}/scripts`, { method: 'POST', body: JSON.stringify({ provider, replies: [
      { events: [{ tool: { index: 0, id, name: 'read' } }, { args: { index: 0, fragment: '{"file_path":' } }, { args: { index: 0, fragment: '"hello.txt"}' } }, { finish: { stop: 'tool_use', usage } }] },
      { events: [{ text: 'it says hello' }, { finish: { stop: 'stop', usage } }] },
    ] }) })).json();
    const sent = await fetchJSON(`${base}/send?provider=${provider}&baseURL=${encodeURIComponent(script.baseURL)}`, deadline + 30000);
    assert.deepEqual(sent.result, { text: 'it says hello', toolCallsCount: 1, usage: { promptTokens: 20, completionTokens: 10, totalTokens: 30 } }, JSON.stringify(sent));
    const log = await (await fetch(`${llmURL}/scripts/${script.id}/log`)).json();
    assert.equal(log.requests.length, 2);
    assert.match(JSON.stringify(log.requests[1].body), /hello from workerd/, 'the read result reached the model');
  }
  // web_fetch from the Worker against a local site (the page is shorter
  // than one window of 100,000 so the windows can be compared whole).
  step('web_fetch against a local site');
  let page = '<!doctype html><html><body><h1>Site</h1><table><tr><th>k</th></tr><tr><td>v</td></tr></table>';
  for (let i = 0; page.length < 60 * 1024; i++) page += `<p>Paragraph ${i} with <a href="/p/${i}">a link</a>.</p>\n`;
  page += '</body></html>';
  let siteHits = 0;
  site = createHTTPServer((req, res) => {
    siteHits++;
    const p = new URL(req.url, 'http://x').pathname;
    if (p === '/page' || p === '/final') { res.writeHead(200, { 'content-type': 'text/html' }); res.end(p === '/page' ? page : '<p>landed</p>'); }
    else if (p === '/a') { res.writeHead(302, { location: '/b?token=1' }); res.end(); }
    else if (p === '/b') { res.writeHead(301, { location: '/final#f' }); res.end(); }
    else if (p === '/limited') { res.writeHead(429, { 'retry-after': '3' }); res.end(); }
    else { res.writeHead(404); res.end(); }
  });
  await new Promise((r) => site.listen(0, '127.0.0.1', r));
  const siteURL = `http://127.0.0.1:${site.address().port}`;
  const wf = await fetchJSON(`${base}/webfetch?origin=${encodeURIComponent(siteURL)}`, Date.now() + 120000);
  assert.equal(wf.reassembled, true, JSON.stringify(wf).slice(0, 2000));
  assert.ok(wf.calls >= 3, `${wf.calls} windows`);
  assert.equal(wf.limited.kind?.type, 'rate_limited', JSON.stringify(wf.limited));
  step(`web_fetch redirect 302 → 301 in workerd: ${JSON.stringify({ exitCode: wf.redirect.exitCode, anchors: wf.redirect.meta?.source_anchors, output: wf.redirect.output.slice(0, 200) })}`);
  assert.equal(wf.redirect.exitCode, 0, JSON.stringify(wf.redirect));
  assert.deepEqual(wf.redirect.meta.source_anchors, [`${siteURL}/a`, `${siteURL}/final`]);
  const before = siteHits;
  const refused = await fetchJSON(`${base}/webfetch?only=refused&origin=${encodeURIComponent(siteURL)}`, Date.now() + 60000);
  assert.equal(refused.refused.kind?.type, 'invalid_argument', JSON.stringify(refused));
  assert.equal(siteHits, before, 'a refused URL sent no request');

  const dir = await fetchJSON(`${base}/directory`, deadline);
  assert.equal(dir.code, 'INVALID_OPTIONS', JSON.stringify(dir));
  assert.match(dir.message, /options\.workspace\.kind 'directory' needs Node\.js .*in Cloudflare Workers 'memory'/);

  // Exact content: every file of GOROOT/src/net and image test data (binary)
  // through createSession's files, importFiles, exportFiles, readBytes,
  // readText and writeBytes, byte for byte (compared by SHA-256).
  const goroot = execFileSync('go', ['env', 'GOROOT'], { encoding: 'utf8' }).trim();
  const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const posted = [];
  const want = {};
  for (const dir of ['net', 'image/testdata']) {
    const root = join(goroot, 'src', dir);
    for (const e of readdirSync(root, { recursive: true, withFileTypes: true })) {
      if (!e.isFile()) continue;
      const full = join(e.parentPath ?? e.path, e.name);
      const b = readFileSync(full);
      let isText = !b.includes(0);
      try { if (isText) utf8.decode(b); } catch { isText = false; }
      const p = `${dir}/${relative(root, full)}`;
      posted.push([p, b.toString('base64'), isText]);
      want[p] = { sha: createHash('sha256').update(b).digest('hex'), isText };
    }
  }
  assert.ok(posted.some(([, , t]) => !t), 'binary files are among them');
  const res = await fetch(`${base}/content`, { method: 'POST', body: JSON.stringify({ files: posted }) });
  const got = await res.json();
  assert.equal(res.status, 200, JSON.stringify(got).slice(0, 2000));
  assert.equal(Object.keys(got).length, posted.length);
  for (const [p, w] of Object.entries(want)) {
    const g = got[p];
    for (const k of ['exported', 'seeded', 'readBytes', 'copy']) assert.equal(g[k], w.sha, `${p}: ${k}`);
    assert.equal(g.exportedText, w.isText, `${p}: exported as ${w.isText ? 'text' : 'bytes'}`);
    if (w.isText) assert.equal(g.readText, w.sha, `${p}: readText`);
  }
  step(`content: ${posted.length} files round-tripped`);
  const compile = await fetchJSON(`${base}/compile`, deadline);
  assert.match(compile.refused, /disallowed|not allowed|embedder/i, 'this workerd refuses to compile wasm bytes, as Cloudflare does');
  await programChecks(base);
  await r2Checks(project, env);
  step('workerd tier passed');
} finally {
  if (wranglerDev) await wranglerDev.stop();
  if (workerd && workerd.exitCode === null) workerd.kill('SIGTERM');
  if (llmServer) llmServer.stop();
  if (site) { site.closeAllConnections(); site.close(); }
  if (!keep) rmSync(scratch, { recursive: true, force: true });
  else console.log('scratch kept at', scratch);
}

// programChecks drives `program` on workerd (QuickJS on the calling
// thread, npm/src/ptc-workerd.mjs) through the Worker's /program route,
// one fresh session per script: results, the guards (CPU, memory, stack,
// a hung ctx call), each followed by a program that succeeds, and the
// red-team pack.
async function programChecks(base) {
  const run = async (body) => {
    const res = await fetch(`${base}/program`, { method: 'POST', body: JSON.stringify(body) });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    return JSON.parse(text);
  };
  const ok = async (what) => {
    const r = await run({ source: 'async function run(ctx, inputs) { return inputs.n + (await ctx.readFile("a.txt")).length }', inputs: { n: 1 } });
    assert.equal(r.exitCode, 0, `${what}: the next program: ${r.output}`);
    assert.equal(r.result, 7, what);
  };
  step('program: Promise.all of ctx calls');
  const all = await run({ source: `async function run(ctx) {
  const [a, b, g] = await Promise.all([ctx.readFile('a.txt'), ctx.readFile('b.txt'), ctx.glob('*.txt')]);
  return { ab: a + b, g: g.sort() };
}` });
  assert.equal(all.exitCode, 0, all.output);
  assert.equal(all.runtime, 'quickjs-workerd');
  assert.deepEqual(all.result, { ab: 'alpha\nbeta\n', g: ['a.txt', 'b.txt'] });

  step('program: for(;;){} under timeoutMs 1000');
  const loop = await run({ source: 'async function run() { for (;;) {} }', limits: { timeoutMs: 1000 } });
  assert.equal(loop.exitCode, 1, loop.output);
  assert.match(loop.output, /stopped at its (deadline|CPU budget)|timed out after 1000 ms/);
  assert.ok(loop.ms < 10000, `stopped after ${loop.ms} ms`);
  await ok('after the loop');

  step('program: 64 MiB under the 32 MiB cap');
  const big = await run({ source: 'async function run() { const b = new ArrayBuffer(64 * 1024 * 1024); return b.byteLength }' });
  assert.equal(big.exitCode, 1, big.output);
  assert.match(big.output, /out of memory/i);
  const many = await run({ source: 'async function run() { const a = []; for (;;) a.push(new ArrayBuffer(1 << 20)); }', limits: { timeoutMs: 20000 } });
  assert.equal(many.exitCode, 1, many.output);
  assert.match(many.output, /memory/i);
  await ok('after out of memory');

  step('program: unbounded recursion');
  const deep = await run({ source: 'function f(n) { return f(n + 1) + 1 }\nasync function run() { return f(0) }' });
  assert.equal(deep.exitCode, 1, deep.output);
  assert.match(deep.output, /stack|RangeError/i);
  await ok('after the stack overflow');

  step('program: a ctx call that never settles');
  const hung = await run({ source: 'async function run(ctx) { await ctx.tools.hang({}); return "answered" }', allowedTools: ['hang'], limits: { timeoutMs: 1000 } });
  assert.equal(hung.exitCode, 1, hung.output);
  assert.match(hung.output, /timed out after 1000 ms/);
  assert.ok(hung.ms >= 900 && hung.ms < 10000, `timed out after ${hung.ms} ms`);
  await ok('after the hung call');

  step(`program: red-team pack (${pack.length} attempts)`);
  let n = 0;
  for (const a of pack) {
    if (a.engines) continue; // the pack says every attempt holds everywhere; none is marked today
    const r = await run({ source: a.source.join('\n') + '\n', inputs: { list: [1, 2] }, limits: { timeoutMs: a.expect === 'contained' ? 30000 : 2000, ...(a.limits || {}) }, ...(a.allowedTools ? { allowedTools: a.allowedTools } : {}) });
    const shown = JSON.stringify(r).slice(0, 400);
    assert.ok(!/escaped/.test(r.output) && !/escaped/.test(JSON.stringify(r.result ?? null)), `${a.name}: ESCAPE: ${shown}`);
    if (a.expect === 'contained') {
      assert.equal(r.exitCode, 0, `${a.name}: ${shown}`);
      assert.equal(r.result, 'contained', `${a.name}: ${shown}`);
    } else if (a.expect === 'fails') {
      assert.notEqual(r.exitCode, 0, `${a.name}: ${shown}`);
    }
    assert.equal(r.pwned, false, `${a.name}: pwned.txt was written`);
    n++;
  }
  assert.ok(n >= 30, `${n} attempts ran`);
  await ok('after the pack');
}

// scanBundle checks the Worker bundle (the package's workerd entry and
// everything it imports) for code generation from strings and wasm
// compiled from bytes: no eval(, new Function, Function( or .compile(; of
// the instantiate calls, the Go loader's and the QuickJS hook's take a
// WebAssembly.Module the entry imported, and Emscripten's two fallbacks
// (bytes, fetch) are never reached because the hook (instantiateWasm) is
// always set: ptc-workerd.mjs always passes the imported module.
function scanBundle(js) {
  for (const re of [/(?<![.\w$'"])eval\s*\(/g, /\bnew\s+Function\b/g, /(?<![.\w$])Function\s*\(/g, /\.compile(Streaming)?\s*\(/g]) {
    const hits = [...js.matchAll(re)].map((m) => js.slice(Math.max(0, m.index - 60), m.index + 60));
    assert.deepEqual(hits, [], `the bundle contains ${re}`);
  }
  const calls = [...js.matchAll(/\binstantiate(Streaming)?\s*\(([^)]*)\)/g)].map((m) => m[2].trim());
  const fromModule = calls.filter((a) => /^(mod, go\.importObject|wasmModule\d*, imports)$/.test(a));
  assert.equal(fromModule.length, 2, `the Go loader and the QuickJS hook instantiate imported modules: ${calls}`);
  assert.equal(calls.length - fromModule.length, 2, `only Emscripten's two unreached fallbacks besides: ${calls}`);
  assert.match(js, /arg\.instantiateWasm = /, 'the QuickJS hook is in the bundle');
  step(`bundle scanned: no eval, new Function or compile; instantiate calls: ${calls.join(' | ')}`);
}

// r2Checks serves the same Worker with `wrangler dev` (its local R2,
// persisted to a directory) and drives the r2 workspace (workspace/r2
// through npm/src/r2host.mjs): write, read, edit, ls, grep and glob in
// one session, nothing of it in another, a clear refusal where no host
// answers r2, and after a restart of wrangler dev, the files still there.
async function r2Checks(project, env) {
  const state = join(project, 'r2-state');
  const start = async () => {
    wranglerDev = await startWranglerDev({ project, state, env, ready: async (b) => (await fetch(`${b}/r2`, { method: 'POST', body: JSON.stringify({ root: 'ws/probe', calls: [] }) })).ok });
    step(`wrangler dev (local R2 in ${state}) on ${wranglerDev.base}`);
    return `${wranglerDev.base}/r2`;
  };
  const stop = () => wranglerDev.stop();
  const post = async (url, body) => {
    const res = await fetch(url, { method: 'POST', body: JSON.stringify(body) });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    return JSON.parse(text);
  };
  let url = await start();
  const a = await post(url, { root: 'ws/a', calls: [
    ['write', { file_path: 'src/main.go', content: 'package main\n\nfunc main() {}\n' }],
    ['write', { file_path: 'README.md', content: 'hello r2\n' }],
    ['edit', { file_path: 'src/main.go', old_string: 'func main() {}', new_string: 'func main() { println("r2") }' }],
    ['read', { file_path: 'src/main.go' }],
    ['ls', { path: '.' }],
    ['grep', { pattern: 'println' }],
    ['glob', { pattern: '**/*.go' }],
  ] });
  assert.deepEqual(a.toolNames.filter((n) => ['bash', 'git'].includes(n)), [], 'no bash, no git on r2');
  for (const t of ['read', 'write', 'edit', 'ls', 'grep', 'glob']) assert.ok(a.toolNames.includes(t), `${t} in ${a.toolNames}`);
  a.results.forEach((r, i) => assert.equal(r.exitCode, 0, `call ${i}: ${r.output}`));
  assert.match(a.results[3].output, /func main\(\) \{ println\("r2"\) \}/);
  assert.match(a.results[4].output, /README\.md/);
  assert.match(a.results[4].output, /src/);
  assert.match(a.results[5].output, /src\/main\.go/);
  assert.match(a.results[6].output, /src\/main\.go/);
  const b = await post(url, { root: 'ws/b', calls: [['read', { file_path: 'src/main.go' }], ['glob', { pattern: '**/*' }]] });
  assert.equal(b.results[0].exitCode, 1, 'session b does not see a\'s file');
  assert.doesNotMatch(b.results[1].output, /main\.go|README/);
  const refused = await post(url, { root: 'ws/a', calls: [], kinds: false });
  assert.equal(refused.code, 'INVALID_OPTIONS', JSON.stringify(refused));
  assert.match(refused.message, /kind 'r2' needs the Cloudflare Worker entry/);
  step('r2: restart wrangler dev');
  await stop();
  url = await start();
  const again = await post(url, { root: 'ws/a', calls: [['read', { file_path: 'src/main.go' }], ['grep', { pattern: 'hello' }]] });
  assert.match(again.results[0].output, /println\("r2"\)/, 'the edit survived the restart');
  assert.match(again.results[1].output, /README\.md/);
  await stop();
  step('r2 workspace passed');
}
