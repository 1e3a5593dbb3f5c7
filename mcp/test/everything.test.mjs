// The MCP client under js/wasm in Node, through the npm package's entry,
// against the real @modelcontextprotocol/server-everything on 127.0.0.1
// (started here with an empty environment). Run: make test-npm-mcp.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { createSession } from '../../npm/src/entry-node.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
let server, url;
const requests = {};

before(async () => {
  server = spawn(process.execPath, ['--import', join(root, 'mcp/testdata/loopback.mjs'),
    join(root, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'streamableHttp'],
  { env: { PORT: '0' }, stdio: ['ignore', 'ignore', 'pipe'] });
  url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('server-everything did not start in 20 s')), 20000);
    let buf = '';
    server.stderr.on('data', (d) => {
      buf += d;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i); buf = buf.slice(i + 1);
        if (line.startsWith('LISTENING ')) { clearTimeout(timer); resolve(`http://${line.slice(10)}/mcp`); }
        if (line.startsWith('REQ ')) requests[line.slice(4)] = (requests[line.slice(4)] ?? 0) + 1;
      }
    });
  });
});
after(() => server?.kill('SIGKILL'));

test('server-everything through the package in Node', async () => {
  const s = await createSession({
    mcpServers: [{ name: 'everything', url }],
    permissionPolicy: { deny: ['mcp__everything__get-env'], allow: ['*'] },
  });
  after(() => s.close());
  const [st] = s.mcpStatus();
  assert.equal(st.state, 'connected');
  const names = s.toolNames();
  for (const n of ['mcp__everything__echo', 'mcp__everything__get-sum', 'mcp__everything__get-structured-content']) {
    assert.ok(names.includes(n), `${n} in ${names}`);
  }
  const echo = await s.tool('mcp__everything__echo', { message: 'from wasm' });
  assert.equal(echo.output, 'Echo: from wasm');
  assert.equal(JSON.parse(echo.metadataJson).trust, 'external');
  const sum = await s.tool('mcp__everything__get-sum', { a: 19, b: 23 });
  assert.match(sum.output, /42/);
  const structured = await s.tool('mcp__everything__get-structured-content', { location: 'Chicago' });
  assert.equal(typeof JSON.parse(structured.metadataJson).structured.temperature, 'number');

  // A policy deny sends no request.
  const posts = requests.POST;
  const denied = await s.governedTool('mcp__everything__get-env', {});
  assert.equal(denied.exitCode, 1);
  assert.equal(requests.POST, posts);

  // Aborting a call sends notifications/cancelled (a second POST). The
  // abort comes once the call's POST is out, however long a busy machine
  // takes to send it.
  const ac = new AbortController();
  const before = requests.POST;
  const call = s.tool('mcp__everything__trigger-long-running-operation', { duration: 30, steps: 30 }, { signal: ac.signal });
  for (let i = 0; i < 1500 && requests.POST < before + 1; i++) await new Promise((r) => setTimeout(r, 20));
  ac.abort();
  await assert.rejects(call, { code: 'ABORTED' });
  for (let i = 0; i < 1500 && requests.POST < before + 2; i++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(requests.POST >= before + 2, `POSTs ${before} → ${requests.POST}`);

  await s.removeMcp('everything');
  assert.ok(!s.toolNames().some((n) => n.startsWith('mcp__')));
});

test('an unreachable server registers nothing', async () => {
  const s = await createSession({ mcpServers: [{ name: 'gone', url: 'http://127.0.0.1:1/mcp' }] });
  after(() => s.close());
  const [st] = s.mcpStatus();
  assert.equal(st.state, 'failed');
  assert.ok(st.error);
  assert.ok(!s.toolNames().some((n) => n.startsWith('mcp__')));
  await assert.rejects(s.addMcp({ name: 'gone2', url: 'http://127.0.0.1:1/mcp' }), { code: 'MCP_FAILED' });
  await assert.rejects(s.addMcp({ name: 'a__b', url }), { code: 'INVALID_CALL' });
  await assert.rejects(s.addMcp({ name: 'x', url, bogus: 1 }), /unknown key/);
});
