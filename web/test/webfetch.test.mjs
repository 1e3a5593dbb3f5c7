// web_fetch in Chromium: compiles the tools package's tests for
// GOOS=js GOARCH=wasm and runs TestWebFetchRemote in a dedicated Worker of
// a page against a local server on another 127.0.0.1 origin (real
// cross-origin fetches; the server sends CORS headers except on /nocors).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launch, server, freshProfile, removeProfile, repo } from './browser.mjs';

let page = '<!doctype html><html><head><title>T</title><script>SCRIPT</script></head><body><nav>NAV</nav><h1>Big</h1>'
  + '<table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>';
for (let i = 0; page.length < 300 * 1024; i++) page += `<p>Paragraph ${i} with <a href="/p/${i}">a link</a> and ünïcödé.</p>\n`;
page += '</body></html>';

// startSite serves the pages TestWebFetchRemote asks for; /hits answers how
// many other requests arrived (preflights included).
async function startSite() {
  let hits = 0;
  const s = createServer((req, res) => {
    const u = new URL(req.url, 'http://x');
    const cors = u.pathname === '/nocors' ? {} : {
      'access-control-allow-origin': '*', 'access-control-allow-headers': '*', 'access-control-expose-headers': '*' };
    if (u.pathname === '/hits') { res.writeHead(200, cors); res.end(String(hits)); return; }
    hits++;
    if (req.method === 'OPTIONS') { res.writeHead(204, cors); res.end(); return; }
    const send = (code, h, body) => { res.writeHead(code, { ...cors, ...h }); res.end(body); };
    if (u.pathname === '/page') send(200, { 'content-type': 'text/html; charset=utf-8' }, page);
    else if (u.pathname === '/big') {
      res.writeHead(200, { ...cors, 'content-type': 'text/plain' });
      const mb = Buffer.alloc(1 << 20, 'x');
      for (let i = 0; i < 6; i++) res.write(mb);
      res.end();
    } else if (u.pathname === '/a') send(302, { location: '/b' });
    else if (u.pathname === '/b') send(301, { location: '/final' });
    else if (u.pathname === '/final' || u.pathname === '/nocors') send(200, { 'content-type': 'text/html' }, '<p>landed</p>');
    else if (u.pathname === '/limited') send(429, { 'retry-after': '3' });
    else send(404, {});
  });
  s.keepAliveTimeout = 60000;
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${s.address().port}`, close: () => { s.closeAllConnections(); return new Promise((r) => s.close(r)); } };
}

test('web_fetch in Chromium: windows, the 5 MB cap, 429, opaque redirects and CORS, loopback refused', { timeout: 300_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'code-wasm-webfetch-'));
  const profile = freshProfile();
  let ctx, srv, site;
  try {
    execFileSync('go', ['test', '-c', '-o', join(dir, 'pkg.test.wasm'), './tools'], {
      cwd: repo, stdio: 'inherit', env: { ...process.env, GOOS: 'js', GOARCH: 'wasm' },
    });
    site = await startSite();
    srv = await server([['/gotest/', dir]]);
    ctx = await launch(profile);
    const p = await ctx.newPage();
    await p.goto(`${srv.url}/test/gotest.html?bin=/gotest/pkg.test.wasm&arg=-test.v&arg=-test.run=TestWebFetchRemote`
      + `&env=WEBFETCH_URL=${encodeURIComponent(site.url)}&env=WEBFETCH_BROWSER=1`);
    await p.waitForFunction(() => window.goTest.exit !== null, null, { timeout: 240_000 });
    const { out, exit } = await p.evaluate(() => window.goTest);
    const failed = out.split('\n').filter((l) => /--- FAIL/.test(l));
    assert.equal(exit, 0, `go test in Chromium exited ${exit}; failures:\n${failed.join('\n')}\n\n${out.slice(-4000)}`);
    assert.match(out, /--- PASS: TestWebFetchRemote /, out.slice(-3000));
    assert.doesNotMatch(out, /--- SKIP/, out.slice(-3000));
  } finally {
    await ctx?.close();
    await srv?.close();
    await site?.close();
    removeProfile(profile);
    rmSync(dir, { recursive: true, force: true });
  }
});
