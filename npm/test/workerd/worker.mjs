// The Worker of the workerd tier: it imports the package as a user would
// and answers each request from a fresh memory session.
import { createSession } from '@a3s-lab/code-wasm';
// The r2 workspace is the Worker entry's (its sessions in R2); until that
// entry exists the test builds the same createSession from the package's
// modules, with the r2.* host kinds over this Worker's WORKSPACE binding.
import wasmModule from '../node_modules/@a3s-lab/code-wasm/dist/code.wasm';
import { loadApi } from '../node_modules/@a3s-lab/code-wasm/src/loader.mjs';
import { makeCreateSession } from '../node_modules/@a3s-lab/code-wasm/src/session.mjs';
import { r2HostKinds } from '../node_modules/@a3s-lab/code-wasm/src/r2host.mjs';

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === '/r2') return r2(env, await request.json());
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
    if (url.pathname === '/program') return program(await request.json());
    if (url.pathname === '/compile') {
      // The platform's own rule, which the bundle scan relies on.
      try {
        await WebAssembly.compile(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]));
        return Response.json({ refused: null });
      } catch (e) {
        return Response.json({ refused: String(e?.message ?? e) });
      }
    }
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

// program runs one script ({source, inputs?, limits?, allowedTools?}) in a
// fresh memory session that also has a host tool `hang` whose call never
// settles, and answers the ToolResult with the script's result and the
// milliseconds it took.
async function program({ source, inputs, limits, allowedTools }) {
  const s = await createSession({ workspace: { kind: 'memory', files: { 'a.txt': 'alpha\n', 'b.txt': 'beta\n' } } });
  s.registerTool({ name: 'hang', description: 'never answers', parameters: { type: 'object' }, handler: () => new Promise(() => {}) });
  try {
    const t0 = Date.now();
    const r = await s.program({ source, inputs, limits, ...(allowedTools ? { allowedTools } : {}) });
    const meta = r.metadataJson ? JSON.parse(r.metadataJson) : {};
    const pwned = await s.tool('read', { file_path: 'pwned.txt' });
    return Response.json({ exitCode: r.exitCode, output: r.output, result: meta.script_result, runtime: meta.program?.runtime, ms: Date.now() - t0, pwned: pwned.exitCode === 0 });
  } catch (e) {
    return Response.json({ error: String(e && e.stack || e), code: e?.code }, { status: 500 });
  } finally {
    await s.close();
  }
}

// r2 runs tool calls ([[name, args], …]) one after another in a session
// whose workspace is root ('<prefix>/<session>') in the WORKSPACE bucket,
// and answers each result with the session's tool names.
async function r2(env, { root, calls, kinds = true }) {
  const create = makeCreateSession(() => loadApi(async () => wasmModule), { hostKinds: kinds ? r2HostKinds(env.WORKSPACE) : {} });
  let s;
  try {
    s = await create({ workspace: { kind: 'r2', root } });
  } catch (e) {
    return Response.json({ code: e.code, message: e.message });
  }
  try {
    const results = [];
    for (const [name, args] of calls) {
      const r = await s.tool(name, args);
      results.push({ exitCode: r.exitCode, output: r.output });
    }
    return Response.json({ toolNames: s.toolNames(), results });
  } catch (e) {
    return Response.json({ error: String(e && e.stack || e), code: e?.code }, { status: 500 });
  } finally {
    await s.close();
  }
}
