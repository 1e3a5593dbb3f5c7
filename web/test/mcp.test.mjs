// The MCP client in Chromium: mcp's tests compiled for GOOS=js GOARCH=wasm
// run in a dedicated Worker of a page against server-everything on another
// 127.0.0.1 origin (cross-origin fetch; the server sends CORS headers).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launch, server, freshProfile, removeProfile, repo } from './browser.mjs';

test('server-everything through the wasm MCP client in Chromium', { timeout: 300_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'code-wasm-mcp-'));
  const profile = freshProfile();
  let ctx, srv, everything;
  try {
    execFileSync('go', ['test', '-c', '-o', join(dir, 'pkg.test.wasm'), './mcp'], {
      cwd: repo, stdio: 'inherit', env: { ...process.env, GOOS: 'js', GOARCH: 'wasm' },
    });
    everything = spawn(process.execPath, ['--import', join(repo, 'mcp/testdata/loopback.mjs'),
      join(repo, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'streamableHttp'],
    { env: { PORT: '0' }, stdio: ['ignore', 'ignore', 'pipe'] });
    const url = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('server-everything did not start in 30 s')), 30_000);
      let buf = '';
      everything.stderr.on('data', (d) => {
        buf += d;
        const m = buf.match(/LISTENING (\S+)/);
        if (m) { clearTimeout(timer); resolve(`http://${m[1]}/mcp`); }
      });
    });
    srv = await server([['/gotest/', dir]]);
    ctx = await launch(profile);
    const page = await ctx.newPage();
    await page.goto(`${srv.url}/test/gotest.html?bin=/gotest/pkg.test.wasm&arg=-test.v&arg=-test.run=TestRemoteEverything&env=MCP_EVERYTHING_URL=${encodeURIComponent(url)}`);
    await page.waitForFunction(() => window.goTest.exit !== null, null, { timeout: 240_000 });
    const { out, exit } = await page.evaluate(() => window.goTest);
    assert.equal(exit, 0, out.slice(-4000));
    assert.match(out, /--- PASS: TestRemoteEverything /, out.slice(-3000));
  } finally {
    await ctx?.close();
    await srv?.close();
    everything?.kill('SIGKILL');
    removeProfile(profile);
    rmSync(dir, { recursive: true, force: true });
  }
});
