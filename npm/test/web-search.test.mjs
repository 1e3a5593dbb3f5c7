// web_search through the built package in Node: the providers are JS
// objects {name, search(query, {limit, signal})} that ask fake search APIs
// over real HTTP on 127.0.0.1 (tools/web_search.go holds the rules).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { createSession } from '@a3s-lab/code-wasm';

const meta = (r) => (r.metadataJson ? JSON.parse(r.metadataJson) : undefined);
const kind = (r) => (r.errorKindJson ? JSON.parse(r.errorKindJson) : undefined);

// The fake API: /ok/<prefix> answers 3 results, /empty none, /down 500,
// /limited 429 with Retry-After 7, /hang never answers; /searx/search
// answers as a SearXNG instance does.
let server, origin;
const hits = new Map();
before(async () => {
  server = createServer((req, res) => {
    const u = new URL(req.url, 'http://x');
    const path = u.pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const json = (code, v, h = {}) => { res.writeHead(code, { 'content-type': 'application/json', ...h }); res.end(JSON.stringify(v)); };
    if (path.startsWith('/ok/')) {
      const p = path.slice(4), n = Math.min(3, +u.searchParams.get('n'));
      json(200, { items: Array.from({ length: n }, (_, i) => ({ title: `${p} ${i}`, link: `https://${p}.example/${i}`, text: `about ${u.searchParams.get('q')}` })) });
    } else if (path === '/searx/search') {
      json(200, { results: [{ title: 'S1', url: 'https://s.example/1', content: `searx on ${u.searchParams.get('q')}` }] });
    } else if (path === '/empty') json(200, { items: [] });
    else if (path === '/down') json(500, { error: 'boom' });
    else if (path === '/limited') json(429, { error: 'slow down' }, { 'retry-after': '7' });
    else if (path === '/hang') { /* never answers */ } else json(404, {});
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${server.address().port}`;
});
after(() => { server.closeAllConnections(); server.close(); });

// provider is an engine over the fake API at path.
function provider(name, path) {
  return {
    name,
    async search(query, { limit, signal }) {
      const res = await fetch(`${origin}${path}?q=${encodeURIComponent(query)}&n=${limit}`, { signal });
      if (res.status === 429) {
        throw Object.assign(new Error(`${name}: 429`), { code: 'rate_limited', retryAfterMs: 1000 * +res.headers.get('retry-after') });
      }
      if (!res.ok) throw new Error(`${name}: HTTP ${res.status}`);
      const { items } = await res.json();
      return items.map((i) => ({ title: i.title, url: i.link, snippet: i.text }));
    },
  };
}

test('web_search is listed only with a provider', async () => {
  const none = await createSession();
  assert.ok(!none.toolNames().includes('web_search'));
  const r = await none.tool('web_search', { query: 'x' }).catch((e) => e);
  assert.ok(r instanceof Error || r.exitCode !== 0);
  await none.close();
  const s = await createSession({ webSearch: { providers: [provider('a', '/ok/a')] } });
  assert.ok(s.toolNames().includes('web_search'));
  await s.close();
});

test('web_search: complete, ok + fail is partial, all rate-limited fails rate_limited, empty with an error fails', async () => {
  const s = await createSession({ webSearch: { providers: [
    provider('a', '/ok/a'), provider('b', '/ok/b'), provider('down', '/down'),
    provider('lim1', '/limited'), provider('lim2', '/limited'), provider('empty', '/empty')] } });
  try {
    let r = await s.webSearch({ query: 'wasm', engines: ['a', 'b'], limit: 5 });
    assert.equal(r.exitCode, 0, r.output);
    let m = meta(r);
    assert.equal(m.status, 'complete');
    assert.equal(m.returned_result_count, 5);
    assert.equal(m.output_limited, true);
    assert.equal(m.trust, 'external');
    assert.match(r.output, /1\. a 0\n {3}https:\/\/a\.example\/0\n {3}about wasm/);

    r = await s.webSearch({ query: 'wasm', engines: 'down, a' });
    assert.equal(r.exitCode, 0, r.output);
    m = meta(r);
    assert.equal(m.status, 'partial');
    assert.deepEqual(m.selected_engines, ['down', 'a']);
    assert.match(r.output, /degraded engines: down \(transport: down: HTTP 500\)/);
    assert.match(r.output, /https:\/\/a\.example\/2/);

    r = await s.webSearch({ query: 'wasm', engines: ['lim1', 'lim2'] });
    assert.equal(r.exitCode, 1);
    assert.equal(meta(r).status, 'failed');
    assert.deepEqual(kind(r), { ...kind(r), type: 'rate_limited', retry_after_ms: 7000 });

    r = await s.webSearch({ query: 'wasm', engines: ['empty', 'down'] });
    assert.equal(r.exitCode, 1);
    assert.equal(meta(r).status, 'failed');
    assert.equal(kind(r).type, 'transport');
    assert.match(r.output, /no results/);

    r = await s.webSearch({ query: 'wasm', engines: ['empty'] });
    assert.equal(r.exitCode, 0, 'zero results with no errors is a complete success');
    assert.equal(meta(r).status, 'complete');
  } finally {
    await s.close();
  }
});

test('web_search: a provider past the timeout is aborted and the search fails timeout', async () => {
  let aborted = false;
  const hang = { name: 'hang', search: (q, { signal }) => new Promise((_, reject) => {
    signal.addEventListener('abort', () => { aborted = true; reject(Object.assign(new Error('aborted'), { code: 'timeout' })); });
  }) };
  const s = await createSession({ webSearch: { providers: [hang, provider('fetches', '/hang')] } });
  const t0 = Date.now();
  const r = await s.webSearch({ query: 'q', timeout: 1 });
  assert.equal(r.exitCode, 1, r.output);
  assert.equal(kind(r).type, 'timeout');
  assert.ok(Date.now() - t0 < 20000);
  await new Promise((res) => setTimeout(res, 50));
  assert.ok(aborted, 'the provider\'s signal was aborted');
  await s.close();
});

test('web_search is governed: a policy deny asks no provider; bad input is refused before any request', async () => {
  hits.clear();
  const s = await createSession({ webSearch: { providers: [provider('a', '/ok/a')] },
    permissionPolicy: { deny: ['web_search'], defaultDecision: 'allow' } });
  const r = await s.governedTool('web_search', { query: 'q' }).catch((e) => e);
  assert.ok(r instanceof Error ? /denied|deny/i.test(r.message) : r.exitCode !== 0, String(r.output ?? r.message));
  await s.close();

  const t = await createSession({ webSearch: { providers: [provider('a', '/ok/a')] } });
  for (const [args, re] of [
    [{ query: 'q', engine: 'a' }, /did you mean engines/],
    [{ query: 'q', engines: ['nope'] }, /unknown engine "nope"; configured: a/],
    [{ query: '' }, /query/],
    [{ query: 'q', limit: 0 }, /limit/],
  ]) {
    const x = await t.webSearch(args).catch((e) => e);
    const text = x instanceof Error ? x.message : x.output;
    assert.match(text, re);
    if (!(x instanceof Error)) assert.equal(kind(x).type, 'invalid_argument');
  }
  assert.equal(hits.size, 0, `requests arrived: ${[...hits.keys()]}`);
  await t.close();

  for (const [opts, re] of [
    [{ webSearch: { providers: [{ name: 'a' }] } }, /providers\[0\]\.search must be a function/],
    [{ webSearch: { providers: [provider('a b', '/ok/a')] } }, /must be 1–64 characters/],
    [{ webSearch: { providers: [provider('a', '/ok/a'), provider('a', '/ok/a')] } }, /given twice/],
    [{ webSearch: { providers: [] } }, /at least one provider/],
    [{ webSearch: { engines: [] } }, /unknown key "engines"/],
  ]) await assert.rejects(createSession(opts), re);
});

test('web_search: a SearXNG endpoint reached by the session itself, loopback only when allowed', async () => {
  hits.clear();
  await assert.rejects(createSession({ webSearch: { providers: [{ name: 'searx', kind: 'searxng', url: `${origin}/searx/search` }] } }),
    /searx.*is loopback.*allowOrigins/);
  await assert.rejects(createSession({ webSearch: { providers: [{ name: 'b', kind: 'brave' }] } }), /kind brave needs apiKey/);
  await assert.rejects(createSession({ webSearch: { providers: [{ name: 'x', kind: 'google', url: 'https://g.example/' }] } }), /kind must be searxng or brave/);
  await assert.rejects(createSession({ webSearch: { providers: [{ name: 'x', kind: 'searxng', url: 'https://g.example/', search() {} }] } }), /search or kind, not both/);
  assert.equal(hits.size, 0);
  const s = await createSession({ webFetch: { allowOrigins: [origin] }, webSearch: { providers: [
    { name: 'searx', kind: 'searxng', url: `${origin}/searx/search` }, provider('a', '/ok/a')] } });
  const r = await s.webSearch({ query: 'wasm', limit: 2 });
  assert.equal(r.exitCode, 0, r.output);
  assert.match(r.output, /1\. S1\n {3}https:\/\/s\.example\/1\n {3}searx on wasm/);
  assert.equal(meta(r).returned_result_count, 2);
  assert.equal(hits.get('/searx/search'), 1);
  await s.close();
});
