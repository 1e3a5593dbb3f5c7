// The workerd tier (`make test-workerd`): pack the built package, install
// the tarball into a scratch Worker project as a user would, bundle it with
// wrangler (`deploy --dry-run`, no login), serve the bundle with the real
// workerd binary on 127.0.0.1 and a free port, and check its answers.
//   node npm/test/workerd/run.mjs            (KEEP_SCRATCH=1 keeps the project)
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, copyFileSync, readdirSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { createServer } from 'node:net';
import { createServer as createHTTPServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join, dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { startLLMServer } from '../../../web/test/llmserver.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..', '..');
const pkgDir = join(repo, 'npm');
const bin = (name) => join(repo, 'node_modules', '.bin', name);
const keep = process.env.KEEP_SCRATCH === '1';
const t0 = Date.now();
const step = (what) => console.log(`[workerd tier +${((Date.now() - t0) / 1000).toFixed(1)}s] ${what}`);

for (const b of ['wrangler', 'workerd']) {
  if (!existsSync(bin(b))) throw new Error(`${bin(b)} is missing: run \`make deps\` (npm ci at the repository root)`);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
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
try {
  step('npm pack');
  const packOut = execFileSync('npm', ['pack', '--json', '--pack-destination', scratch], { cwd: pkgDir, encoding: 'utf8' });
  const tgz = join(scratch, JSON.parse(packOut)[0].filename);
  const project = join(scratch, 'worker');
  mkdirSync(join(project, 'src'), { recursive: true });
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'code-wasm-worker-test', private: true, type: 'module' }));
  step('npm install the tarball');
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--offline', tgz], { cwd: project, stdio: 'inherit' });
  copyFileSync(join(here, 'worker.mjs'), join(project, 'src', 'worker.mjs'));
  writeFileSync(join(project, 'wrangler.toml'), [
    'name = "code-wasm-workerd-test"',
    'main = "src/worker.mjs"',
    'compatibility_date = "2025-09-01"',
    '',
  ].join('\n'));

  step('wrangler deploy --dry-run --outdir dist');
  const env = { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: '1', WRANGLER_LOG_PATH: join(scratch, 'wrangler-logs') };
  const out = execFileSync(bin('wrangler'), ['deploy', '--dry-run', '--outdir', 'dist'], { cwd: project, env, encoding: 'utf8' });
  const upload = out.match(/Total Upload: .*/)?.[0];
  console.log(upload ?? out);

  const dist = join(project, 'dist');
  const files = readdirSync(dist);
  const mainJs = files.find((f) => f.endsWith('.js') && !f.endsWith('.map.js'));
  const wasms = files.filter((f) => f.endsWith('.wasm'));
  assert.ok(mainJs, `wrangler emitted no .js: ${files}`);
  assert.equal(wasms.length, 1, `wrangler picked the workerd condition and emitted the wasm as a module: ${files}`);

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
  // Workers have no engine for scripts, so program is not offered.
  assert.ok(!first.toolNames.includes('program'), `program listed without an engine: ${first.toolNames}`);
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
  step('workerd tier passed');
} finally {
  if (workerd && workerd.exitCode === null) workerd.kill('SIGTERM');
  if (llmServer) llmServer.stop();
  if (site) { site.closeAllConnections(); site.close(); }
  if (!keep) rmSync(scratch, { recursive: true, force: true });
  else console.log('scratch kept at', scratch);
}
