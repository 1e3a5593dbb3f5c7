// A small static server for the playground and the browser tests: serves
// web/ at / and the npm package at /npm/, with application/wasm for .wasm.
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const roots = [['/npm/', join(here, '..', 'npm')], ['/', here]];
const types = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript',
  '.css': 'text/css', '.wasm': 'application/wasm', '.json': 'application/json', '.svg': 'image/svg+xml',
  '.png': 'image/png', '.ts': 'text/plain',
};

// extra: more [urlPrefix, directory] mounts, checked first (the browser
// tests serve a compiled Go test binary and a Vite build this way).
export function serve({ port = 8080, host = '127.0.0.1', root, extra = [] } = {}) {
  const mounts = [...extra, ...(root ? [['/npm/', join(here, '..', 'npm')], ['/', root]] : roots)];
  const server = createServer(async (req, res) => {
    try {
      const url = new URL(req.url, 'http://x');
      let p = decodeURIComponent(url.pathname);
      const [prefix, dir] = mounts.find(([m]) => p.startsWith(m));
      let file = normalize(join(dir, p.slice(prefix.length)));
      if (!file.startsWith(dir)) throw Object.assign(new Error('forbidden'), { status: 403 });
      if ((await stat(file).catch(() => null))?.isDirectory()) file = join(file, 'index.html');
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
      res.end(body);
    } catch (e) {
      res.writeHead(e.status ?? 404, { 'content-type': 'text/plain' });
      res.end(e.status ? e.message : 'not found');
    }
  });
  return new Promise((resolve) => server.listen(port, host, () => resolve(server)));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf('--port');
  const port = i > 0 ? Number(process.argv[i + 1]) : 8080;
  const server = await serve({ port });
  console.log(`code-wasm playground: http://127.0.0.1:${server.address().port}/`);
}
