// The Worker of the workerd tier: it imports the package as a user would
// and answers each request from a fresh memory session.
import { createSession } from '@a3s-lab/code-wasm';

export default {
  async fetch(request) {
    const url = new URL(request.url);
    if (url.pathname === '/opfs' || url.pathname === '/directory') {
      try {
        await createSession({ workspace: { kind: url.pathname.slice(1), root: url.pathname === '/opfs' ? 'x' : '/tmp' } });
        return Response.json({ code: 'none' });
      } catch (e) {
        return Response.json({ code: e.code, message: e.message });
      }
    }
    if (url.pathname === '/send') {
      // The agent loop from a Worker: the wasm's own client (fetch) against
      // the scripted provider server the tier started.
      const p = url.searchParams;
      const s = await createSession({
        workspace: { kind: 'memory', files: { 'hello.txt': 'hello from workerd\n' } },
        llm: { provider: p.get('provider'), baseURL: p.get('baseURL'), apiKey: 'sk-test', model: 'model-test', maxRetries: 0 },
        permissionPolicy: { allow: ['read'] },
      });
      try {
        return Response.json({ result: await s.send('read hello.txt') });
      } catch (e) {
        return Response.json({ error: e.message, code: e.code });
      } finally {
        await s.close();
      }
    }
    if (url.pathname === '/webfetch') {
      // web_fetch from a Worker against the tier's local site (allowed
      // exactly): a page in windows, a 302 → 301 chain, a 429, loopback
      // refused without allowOrigins.
      const origin = url.searchParams.get('origin');
      const s = await createSession({ webFetch: { allowOrigins: [origin] } });
      const strict = await createSession();
      try {
        const call = async (sess, args) => {
          const r = await sess.tool('web_fetch', args);
          return { exitCode: r.exitCode, output: r.output.slice(0, 300), meta: r.metadataJson && JSON.parse(r.metadataJson), kind: r.errorKindJson && JSON.parse(r.errorKindJson) };
        };
        if (url.searchParams.get('only') === 'refused') return Response.json({ refused: await call(strict, { url: `${origin}/page` }) });
        let parts = '', off = 0, calls = 0;
        for (;;) {
          const r = await s.tool('web_fetch', { url: `${origin}/page`, offset: off, max_chars: 20000 });
          if (r.exitCode !== 0) return Response.json({ error: r.output });
          parts += r.output;
          calls++;
          const next = JSON.parse(r.metadataJson).range.next_offset;
          if (next === null) break;
          off = next;
        }
        const whole = await s.tool('web_fetch', { url: `${origin}/page`, max_chars: 100000 });
        return Response.json({
          reassembled: parts.length > 100000 ? 'long' : parts === whole.output, calls, length: parts.length,
          redirect: await call(s, { url: `${origin}/a` }),
          limited: await call(s, { url: `${origin}/limited` }),
        });
      } finally {
        await s.close();
        await strict.close();
      }
    }
    if (url.pathname === '/content') return content(await request.json());
    const session = await createSession({
      workspace: { kind: 'memory', files: { 'hello.txt': 'hello from workerd\n', 'src/a.rs': 'fn a() {}\n' } },
    });
    try {
      if (url.pathname === '/write') {
        const w = await session.writeFile('notes/n.txt', url.searchParams.get('text') ?? '');
        return Response.json({ write: w, read: await session.readFile('notes/n.txt'), glob: await session.glob('**/*.txt') });
      }
      if (url.pathname === '/hidden') {
        try {
          await session.tool('bash', { command: 'ls' });
          return Response.json({ code: 'none' });
        } catch (e) {
          return Response.json({ code: e.code, message: e.message });
        }
      }
      return Response.json({ toolNames: session.toolNames(), read: await session.readFile('hello.txt') });
    } catch (e) {
      return Response.json({ error: String(e && e.stack || e), code: e?.code }, { status: 500 });
    } finally {
      await session.close();
    }
  },
};

// content round-trips the files posted ([[path, base64, isText]]) through
// createSession's files, importFiles, exportFiles, readBytes, readText and
// writeBytes, and answers each file's SHA-256 as each of them gave it.
async function content({ files }) {
  const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const enc = new TextEncoder();
  const map = {};
  for (const [p, b64, isText] of files) {
    const b = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    map[p] = isText ? utf8.decode(b) : b;
  }
  const sha = async (v) => {
    const b = typeof v === 'string' ? enc.encode(v) : v;
    return Array.from(new Uint8Array(await crypto.subtle.digest('SHA-256', b)), (x) => x.toString(16).padStart(2, '0')).join('');
  };
  const seeded = await createSession({ workspace: { kind: 'memory', files: map } });
  const s = await createSession();
  try {
    const out = {};
    await s.importFiles(map);
    const exported = await s.exportFiles();
    const fromSeed = await seeded.exportFiles();
    for (const [p, , isText] of files) {
      const bytes = await s.readBytes(p);
      await s.writeBytes(`copy/${p}`, bytes);
      out[p] = {
        exported: await sha(exported[p]), exportedText: typeof exported[p] === 'string',
        seeded: await sha(fromSeed[p]), readBytes: await sha(bytes),
        readText: isText ? await sha(await s.readText(p)) : null,
      };
    }
    const copy = await s.exportFiles({ under: 'copy' });
    for (const p of Object.keys(out)) out[p].copy = await sha(copy[`copy/${p}`]);
    return Response.json(out);
  } catch (e) {
    return Response.json({ error: String(e && e.stack || e), code: e?.code }, { status: 500 });
  } finally {
    await s.close();
    await seeded.close();
  }
}
