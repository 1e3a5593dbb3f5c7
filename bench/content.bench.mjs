// Bulk workspace transfer in Node (issue 18 goal: >= 100 MB/s for
// GOROOT/src, about 150 MB in 11k files): createSession({files}),
// importFiles, exportFiles, and readText/readBytes/writeBytes of one large
// file, each side by side with its floors in the same run: a copy of the
// same bytes into a reused 8 MiB buffer (TextEncoder.encodeInto for
// strings), the least any JS → wasm transfer does; the same bytes into
// fresh wasm memory, the least a cold import does (the vs-floor column of
// the import rows is against the first floor); and the decoding of every
// file out of one page, the least exportFiles does.
//   node bench/content.bench.mjs      (make bench runs it; needs make build)
//   RUNS=5 DIR=src/net node bench/content.bench.mjs
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, dirname, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const { createSession } = await import(pathToFileURL(join(repo, 'npm/src/entry-node.mjs')).href);
const RUNS = Number(process.env.RUNS || 3);
const goroot = execFileSync('go', ['env', 'GOROOT'], { encoding: 'utf8' }).trim();
const root = join(goroot, process.env.DIR || 'src');

const utf8 = new TextDecoder('utf-8', { fatal: true });
const files = {};
let bytes = 0;
let binary = 0;
for (const e of readdirSync(root, { recursive: true, withFileTypes: true })) {
  if (!e.isFile()) continue;
  const p = join(e.parentPath ?? e.path, e.name);
  const b = new Uint8Array(readFileSync(p));
  bytes += b.length;
  let v = b;
  try { if (!b.includes(0)) v = utf8.decode(b); } catch { /* binary */ }
  if (v === b) binary++;
  files[relative(root, p)] = v;
}
const n = Object.keys(files).length;
const MB = bytes / 1e6;
console.log(`${root}: ${n} files (${binary} binary), ${MB.toFixed(1)} MB; best of ${RUNS}; load ${(await import('node:os')).loadavg()[0].toFixed(1)}`);

const best = async (fn) => {
  let b = Infinity;
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await fn();
    b = Math.min(b, performance.now() - t);
  }
  return b;
};
const enc = new TextEncoder();
// The floor: every file encoded (or copied) into a reused 8 MiB buffer,
// the JS half of importFiles without the crossing.
const floor = await best(async () => {
  const buf = new Uint8Array(8 << 20);
  let off = 0;
  for (const v of Object.values(files)) {
    const most = typeof v === 'string' ? v.length * 3 : v.length;
    if (most > buf.length) { if (typeof v === 'string') enc.encode(v); continue; }
    if (off + most > buf.length) off = 0;
    if (typeof v === 'string') off += enc.encodeInto(v, buf.subarray(off)).written;
    else { buf.set(v, off); off += v.length; }
  }
});

// The import floor a cold wasm instance pays: the same bytes copied into
// fresh wasm memory (grown for them, never touched), 8 MiB at a time. On
// some VMs the first touch of a page costs more than the copy.
const pages = [];
for (let off = 0; off < bytes; off += 8 << 20) {
  pages.push(new Uint8Array(Math.min(8 << 20, bytes - off)).fill(1));
}
const fresh = await best(async () => {
  const mem = new WebAssembly.Memory({ initial: Math.ceil(bytes / 65536) });
  pages.forEach((p, i) => new Uint8Array(mem.buffer, i * (8 << 20), p.length).set(p));
});
// The export floor: the JS half of exportFiles without Go. Every file's
// bytes copied into one reused 8 MiB page, then decoded into a string
// (text) or copied out (binary), and every result kept.
const kinds = Object.entries(files).map(([k, v]) => [k, typeof v === 'string' ? enc.encode(v) : v, typeof v === 'string']);
const dec = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const exportFloor = await best(async () => {
  const page = new Uint8Array(8 << 20);
  const o = {};
  for (const [k, b, text] of kinds) {
    const v = b.length > page.length ? b : (page.set(b), page.subarray(0, b.length));
    o[k] = text ? dec.decode(v) : v.slice();
  }
});

const rows = [];
const row = (what, ms, base = floor, mb = MB) => rows.push([what, `${ms.toFixed(0)} ms`, `${(mb / (ms / 1000)).toFixed(0)} MB/s`, `${(ms / base).toFixed(1)}x`]);
row('floor: encode/copy into one buffer', floor);
row('floor: copy into fresh wasm memory', fresh, fresh);

// The first session with these files lands them in wasm memory never
// touched before (its floor is the fresh-memory one); later ones may reuse
// pages a closed session left. The module's load and start are not timed.
await (await createSession()).close();
const t0 = performance.now();
await (await createSession({ workspace: { kind: 'memory', files } })).close();
row('createSession({files}), first (cold memory)', performance.now() - t0, fresh);
row('createSession({workspace: {files}})', await best(async () => {
  const s = await createSession({ workspace: { kind: 'memory', files } });
  await s.close();
}));
const s = await createSession();
row('importFiles(files)', await best(() => s.importFiles(files)));
row('floor: decode/copy every file out of one page', exportFloor, exportFloor);
let out;
row('exportFiles()', await best(async () => { out = await s.exportFiles(); }), exportFloor);
if (Object.keys(out).length !== n) throw new Error(`exported ${Object.keys(out).length} of ${n} files`);

// One large file: readText / readBytes / writeBytes of 32 MB.
const big = 'x'.repeat(127) + '\n';
const text = big.repeat((32 << 20) / 128);
const raw = enc.encode(text);
await s.writeBytes('big.txt', raw);
const one = 32 * 1.048576;
row('writeBytes(32 MiB)', await best(() => s.writeBytes('big.txt', raw)), floor, one);
row('readBytes(32 MiB)', await best(() => s.readBytes('big.txt')), floor, one);
row('readText(32 MiB)', await best(() => s.readText('big.txt')), floor, one);
await s.close();

console.log('| operation | time | rate | vs floor |\n|---|---|---|---|');
for (const r of rows) console.log(`| ${r.join(' | ')} |`);
