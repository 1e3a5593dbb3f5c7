// The package's Worker entry on plain `workerd serve`, no wrangler at run
// time: the bundle `wrangler deploy --dry-run` emits, SQLite Durable
// Objects on local disk, R2 through the checked-in gateway
// (r2gateway.mjs, its objects in a Durable Object on the same disk).
// Create a session, write / read / edit / ls / grep / glob through R2,
// a 3 MB file, a scan cut at the limit, another session sees
// nothing, restart workerd: the session and its files are still there.
//   node npm/test/workerd/serve.mjs   (KEEP_SCRATCH=1 keeps the project)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { bundleApp, installApp, startWorkerd, wranglerEnv } from './rig.mjs';

const keep = process.env.KEEP_SCRATCH === '1';
const t0 = Date.now();
const step = (what) => console.log(`[workerd serve +${((Date.now() - t0) / 1000).toFixed(1)}s] ${what}`);
const TOKEN = 'serve-token-1';

const scratch = mkdtempSync(join(tmpdir(), 'code-wasm-workerd-serve-'));
let server;
try {
  step('npm pack, install, wrangler deploy --dry-run');
  const project = installApp(scratch);
  const state = join(project, 'state');
  bundleApp({ project, state, env: wranglerEnv(scratch), vars: { AUTH_TOKEN: TOKEN } });
  const start = async () => {
    server = await startWorkerd({ project, ready: async (b) => (await fetch(`${b}/v1/stats`)).status === 401 });
    step(`workerd serve on ${server.base}`);
  };
  const call = async (method, path, body, want = 200) => {
    const res = await fetch(server.base + path, { method, headers: { authorization: `Bearer ${TOKEN}` }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    assert.equal(res.status, want, `${method} ${path}: ${text}`);
    return text ? JSON.parse(text) : null;
  };
  const tool = async (id, name, args, exit = 0) => {
    const r = await call('POST', `/v1/sessions/${id}/tools/${name}`, args);
    assert.equal(r.exitCode, exit, `${name} ${JSON.stringify(args)}: ${r.output}`);
    return r;
  };

  await start();
  const { id } = await call('POST', '/v1/sessions', { workspace: { files: { 'README.md': 'hello gateway\n' } } }, 201);
  await tool(id, 'write', { file_path: 'src/main.go', content: 'package main\n\nfunc main() {}\n' });
  await tool(id, 'edit', { file_path: 'src/main.go', old_string: 'func main() {}', new_string: 'func main() { println("r2") }' });
  assert.match((await tool(id, 'read', { file_path: 'src/main.go' })).output, /println\("r2"\)/);
  // Over the gateway's 1 MiB chunks: the last line comes back in order.
  const big = Array.from({ length: 300000 }, (_, i) => `line ${i}\n`).join('');
  await tool(id, 'write', { file_path: 'big.txt', content: big });
  assert.match((await tool(id, 'read', { file_path: 'big.txt', offset: 299999, limit: 1 })).output, /\tline 299999\n/);
  const ls = await tool(id, 'ls', { path: '.' });
  assert.match(ls.output, /README\.md/);
  assert.match(ls.output, /src/);
  assert.match((await tool(id, 'grep', { pattern: 'println' })).output, /src\/main\.go/);
  assert.match((await tool(id, 'glob', { pattern: '**/*.go' })).output, /src\/main\.go/);

  // More files than the scan limit (500): grep says the totals are cut.
  step('scan limit');
  const many = Object.fromEntries(Array.from({ length: 520 }, (_, i) => [`many/f${String(i).padStart(3, '0')}.txt`, 'needle\n']));
  const { id: wide } = await call('POST', '/v1/sessions', { workspace: { files: many } }, 201);
  const g = await tool(wide, 'grep', { pattern: 'needle', output_mode: 'count' });
  const search = JSON.parse(g.metadataJson).search;
  assert.equal(search.truncated, true, JSON.stringify(search));
  assert.equal(search.matching_files, 500);
  assert.match(g.output, /scan limit of 500 files/);
  const other = await tool(wide, 'glob', { pattern: '**/*' });
  assert.doesNotMatch(other.output, /main\.go|README/, 'sessions do not see each other\'s files');

  // A new session's prefix is answered as empty without asking R2 until
  // its first put (r2host.mjs, empty): after that R2 answers, so the write,
  // the write over it and the edit are all seen.
  step('empty session, then its first writes');
  const { id: fresh } = await call('POST', '/v1/sessions', {}, 201);
  assert.equal((await tool(fresh, 'read', { file_path: 'n/x.txt' }, 1)).exitCode, 1, 'nothing there yet');
  await tool(fresh, 'write', { file_path: 'n/x.txt', content: 'one\n' });
  await tool(fresh, 'write', { file_path: 'n/x.txt', content: 'two\n' });
  await tool(fresh, 'edit', { file_path: 'n/x.txt', old_string: 'two', new_string: 'three' });
  assert.match((await tool(fresh, 'read', { file_path: 'n/x.txt' })).output, /three/);
  assert.match((await tool(fresh, 'ls', { path: '.' })).output, /n/);

  step('restart');
  await server.stop();
  await start();
  assert.match((await tool(id, 'read', { file_path: 'src/main.go' })).output, /println\("r2"\)/, 'the edit survived the restart');
  assert.match((await tool(id, 'grep', { pattern: 'hello' })).output, /README\.md/);
  assert.equal((await call('GET', `/v1/sessions/${id}`)).id, id);
  assert.equal(await call('DELETE', `/v1/sessions/${id}`, undefined, 204), null);
  assert.equal((await call('GET', `/v1/sessions/${id}`, undefined, 404)).code, 'UNKNOWN_SESSION');
  await server.stop();
  step('workerd serve passed');
} finally {
  if (server) await server.stop();
  if (!keep) rmSync(scratch, { recursive: true, force: true });
  else console.log('scratch kept at', scratch);
}
