// web_fetch through the built package in Node: real HTTP on 127.0.0.1,
// every redirect taken by hand (redirect: 'manual') and vetted.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { createSession } from '@a3s-lab/code-wasm';

const meta = (r) => (r.metadataJson ? JSON.parse(r.metadataJson) : undefined);
const kind = (r) => (r.errorKindJson ? JSON.parse(r.errorKindJson) : undefined);

let page = '<!doctype html><html><head><title>T</title><script>SCRIPT</script></head><body><nav>NAV</nav><h1>Big</h1>'
  + '<table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>';
for (let i = 0; page.length < 300 * 1024; i++) page += `<p>Paragraph ${i} with <a href="/p/${i}">a link</a> and ünïcödé.</p>\n`;
page += '</body></html>';

let server, origin, hits = 0;
before(async () => {
  server = createServer((req, res) => {
    hits++;
    const u = new URL(req.url, 'http://x');
    const redirect = (code, to) => { res.writeHead(code, { location: to }); res.end(); };
    if (u.pathname === '/page') { res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }); res.end(page); }
    else if (u.pathname === '/big') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const mb = Buffer.alloc(1 << 20, 'x');
      for (let i = 0; i < 6; i++) res.write(mb);
      res.end();
    } else if (u.pathname === '/a') redirect(302, '/b?token=1');
    else if (u.pathname === '/b') redirect(301, `${origin}/final#f`);
    else if (u.pathname === '/final') { res.writeHead(200, { 'content-type': 'text/html' }); res.end('<p>landed</p>'); }
    else if (u.pathname.startsWith('/loop/')) { const n = +u.pathname.slice(6); redirect(302, n === 11 ? '/final' : `/loop/${n + 1}`); }
    else if (u.pathname === '/to') redirect(302, u.searchParams.get('u'));
    else if (u.pathname === '/limited') { res.writeHead(429, { 'retry-after': '3' }); res.end(); }
    else { res.writeHead(404); res.end(); }
  });
  server.keepAliveTimeout = 60000; // undici reuses sockets the default 5 s would close under it (ECONNRESET)
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${server.address().port}`;
});
after(() => server.close());

test('web_fetch: windows of 20,000 chars reassemble the single-call page; tables kept, scripts and nav dropped', async () => {
  const s = await createSession({ webFetch: { allowOrigins: [origin] } });
  assert.ok(s.toolNames().includes('web_fetch'));
  let whole = '', off = 0, total;
  for (;;) {
    const r = await s.tool('web_fetch', { url: `${origin}/page`, offset: off, max_chars: 100000 });
    assert.equal(r.exitCode, 0, r.output);
    whole += r.output;
    const g = meta(r).range; total = g.total_chars;
    if (g.next_offset == null) break;
    off = g.next_offset;
  }
  assert.match(whole, /# Big/); assert.match(whole, /\| k \| v \|/); assert.match(whole, /\[a link\]\(\/p\/0\)/);
  assert.doesNotMatch(whole, /SCRIPT|NAV/);
  let parts = '', calls = 0;
  for (off = 0; ; calls++) {
    const r = await s.tool('web_fetch', { url: `${origin}/page?q=1#x`, offset: off, max_chars: 20000 });
    assert.equal(r.exitCode, 0, r.output);
    parts += r.output;
    const m = meta(r);
    assert.deepEqual(m.source_anchors, [`${origin}/page`]);
    assert.ok(m.range.returned_chars <= 20000);
    if (m.range.next_offset == null) break;
    off = m.range.next_offset;
  }
  assert.ok(calls >= 10, `${calls} calls`);
  if (parts !== whole) { let i = 0; while (parts[i] === whole[i]) i++; assert.fail(`differ at ${i} of ${parts.length}/${whole.length}: ${JSON.stringify(parts.slice(i - 40, i + 40))} vs ${JSON.stringify(whole.slice(i - 40, i + 40))}`); }
  assert.equal([...whole].length, total);
  await s.close();
});

test('web_fetch: 5 MB cap, 302 → 301 followed, 11 redirects fail, 429 → rate_limited', async () => {
  const s = await createSession({ webFetch: { allowOrigins: [origin] } });
  let r = await s.tool('web_fetch', { url: `${origin}/big`, max_chars: 10 });
  assert.equal(meta(r).bytes, 5 * 1024 * 1024); assert.equal(meta(r).download_truncated, true);
  r = await s.tool('web_fetch', { url: `${origin}/a` });
  assert.equal(r.output.trim(), 'landed');
  assert.deepEqual(meta(r).source_anchors, [`${origin}/a`, `${origin}/final`]);
  r = await s.tool('web_fetch', { url: `${origin}/loop/1` });
  assert.equal(kind(r)?.type, 'transport'); assert.match(r.output, /more than 10 redirects/);
  r = await s.tool('web_fetch', { url: `${origin}/loop/2` });
  assert.equal(r.exitCode, 0, r.output);
  r = await s.tool('web_fetch', { url: `${origin}/limited` });
  assert.deepEqual(kind(r), { type: 'rate_limited', retry_after_ms: 3000 });
  await s.close();
});

test('web_fetch: non-public targets, redirects to them and credentials are refused before any request', async () => {
  const port = server.address().port;
  const targets = [`${origin}/page`, `http://[::1]:${port}/`, 'http://169.254.169.254/latest/meta-data/', 'http://10.0.0.1/', `http://localhost:${port}/`];
  const plain = await createSession();
  hits = 0;
  for (const u of targets) {
    const r = await plain.tool('web_fetch', { url: u });
    assert.equal(kind(r)?.type, 'invalid_argument', `${u}: ${r.output}`);
    assert.match(r.output, /only public addresses/);
  }
  const cred = await plain.tool('web_fetch', { url: `http://user:pw@127.0.0.1:${port}/page` });
  assert.equal(kind(cred)?.type, 'invalid_argument'); assert.match(cred.output, /credentials/);
  assert.equal(hits, 0, 'the server saw a request');
  const allowed = await createSession({ webFetch: { allowOrigins: [origin] } });
  for (const u of targets.slice(1)) {
    const r = await allowed.tool('web_fetch', { url: `${origin}/to?u=${encodeURIComponent(u)}` });
    assert.equal(kind(r)?.type, 'invalid_argument', `redirect to ${u}: ${r.output}`);
  }
  assert.equal(hits, targets.length - 1, 'only the allowed redirecting origin was reached');
  await assert.rejects(createSession({ webFetch: { allowOrigins: ['127.0.0.1:80'] } }), /allowOrigins/);
  await plain.close(); await allowed.close();
});
