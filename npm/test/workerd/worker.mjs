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
