// A small static server for the playground and the browser tests: serves
// web/ at / and the npm package at /npm/, with application/wasm for .wasm.
// The package's dependencies (QuickJS for the program tool) are served
// from the repository's node_modules at /node_modules/, and the bare
// specifiers of every JavaScript file served ('quickjs-emscripten-core')
// are rewritten to those paths, as a bundler would resolve them: a module
// Worker has no import map.
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { extname, join, normalize, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const modules = join(here, '..', 'node_modules');
const roots = [['/npm/', join(here, '..', 'npm')], ['/node_modules/', modules], ['/', here]];
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
      let body = await readFile(file);
      if (extname(file) === '.mjs' || extname(file) === '.js') body = resolveBare(body.toString('utf8'));
      res.writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
      res.end(body);
    } catch (e) {
      res.writeHead(e.status ?? 404, { 'content-type': 'text/plain' });
      res.end(e.status ? e.message : 'not found');
    }
  });
  return new Promise((resolve) => server.listen(port, host, () => resolve(server)));
}

// pick follows a package.json "exports" entry with the browser's
// conditions (a string, or an object of conditions in priority order).
function pick(entry) {
  if (typeof entry === 'string') return entry;
  if (entry === null || typeof entry !== 'object') return null;
  for (const c of ['browser', 'import', 'module', 'default']) {
    const v = c in entry ? pick(entry[c]) : null;
    if (v) return v;
  }
  return null;
}

const resolved = new Map();
// resolve maps a bare specifier ('pkg', '@scope/pkg/sub') to its URL path
// under /node_modules/, or null when no installed package has it.
function resolve(spec) {
  if (resolved.has(spec)) return resolved.get(spec);
  let url = null;
  const m = /^((?:@[^/]+\/)?[^/]+)(\/.*)?$/.exec(spec);
  try {
    const pkg = JSON.parse(readFileSync(join(modules, m[1], 'package.json'), 'utf8'));
    const sub = '.' + (m[2] ?? '');
    let exp = pkg.exports;
    if (exp && (typeof exp === 'string' || !Object.keys(exp).some((k) => k.startsWith('.')))) exp = { '.': exp };
    const target = exp ? pick(exp[sub]) : sub === '.' ? (pkg.module ?? pkg.main ?? 'index.js') : sub;
    if (target) url = '/node_modules/' + m[1] + '/' + target.replace(/^\.\//, '');
  } catch (_) { /* not installed: left as written */ }
  resolved.set(spec, url);
  return url;
}

// resolveBare rewrites `from 'x'`, `import 'x'` and `import('x')` of bare
// specifiers that resolve to an installed package.
function resolveBare(src) {
  return src.replace(/(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])([^'"./\s][^'"\s:]*)\2/g, (all, lead, q, spec) => {
    const url = resolve(spec);
    return url ? lead + q + url + q : all;
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf('--port');
  const port = i > 0 ? Number(process.argv[i + 1]) : 8080;
  const server = await serve({ port });
  console.log(`code-wasm playground: http://127.0.0.1:${server.address().port}/`);
}
