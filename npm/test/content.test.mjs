// Exact workspace content: readText, readBytes, writeBytes, exportFiles,
// importFiles and createSession's files, byte for byte over every file of
// GOROOT/src/net plus binary files (GOROOT/src/image/testdata and edge
// cases).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { createSession } from '@a3s-lab/code-wasm';

const goroot = execFileSync('go', ['env', 'GOROOT'], { encoding: 'utf8' }).trim();

// goFiles maps dir/<path> to the bytes of every file under GOROOT/src/dir.
function goFiles(dir) {
  const root = join(goroot, 'src', dir);
  const out = {};
  for (const e of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const p = join(e.parentPath ?? e.path, e.name);
    out[`${dir}/${relative(root, p).split('\\').join('/')}`] = new Uint8Array(readFileSync(p));
  }
  return out;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const asText = (b) => { try { return b.includes(0) ? null : utf8.decode(b); } catch { return null; } };

// roundTrip: GOROOT/src/net, image test data and edge cases, as bytes, and
// as the form exportFiles gives (a string for text, else a Uint8Array).
function roundTrip() {
  const bytes = { ...goFiles('net'), ...goFiles('image/testdata') };
  bytes['edge/all-bytes.bin'] = Uint8Array.from({ length: 256 }, (_, i) => i);
  bytes['edge/latin1.txt'] = Uint8Array.from([0x63, 0x61, 0x66, 0xe9, 0x0a]);
  bytes['edge/bom.txt'] = new TextEncoder().encode('\ufeffhello\n');
  bytes['edge/crlf.txt'] = new TextEncoder().encode('a\r\nb\rc\n');
  bytes['edge/empty.txt'] = new Uint8Array(0);
  bytes['edge/nul.txt'] = new TextEncoder().encode('a\0b');
  const mixed = {};
  for (const [p, b] of Object.entries(bytes)) mixed[p] = asText(b) ?? b;
  return { bytes, mixed };
}

function sameFiles(got, want, how) {
  assert.deepEqual(Object.keys(got).sort(), Object.keys(want).sort(), `${how}: the same paths`);
  for (const [p, w] of Object.entries(want)) {
    if (typeof w === 'string') assert.equal(got[p], w, `${how}: ${p}`);
    else {
      assert.ok(got[p] instanceof Uint8Array, `${how}: ${p} is a Uint8Array`);
      assert.ok(Buffer.compare(got[p], w) === 0, `${how}: ${p} bytes`);
    }
  }
}

test('GOROOT/src/net and binary files round-trip byte for byte', async (t) => {
  const { bytes, mixed } = roundTrip();
  assert.ok(Object.keys(bytes).length > 400);
  const s = await createSession();
  t.after(() => s.close());
  await s.importFiles(mixed);
  sameFiles(await s.exportFiles(), mixed, 'importFiles then exportFiles');
  for (const [p, b] of Object.entries(bytes)) {
    assert.ok(Buffer.compare(await s.readBytes(p), b) === 0, `readBytes ${p}`);
    const t = asText(b);
    if (t !== null) assert.equal(await s.readText(p), t, `readText ${p}`);
  }
  // writeBytes of every file into a second tree, then exportFiles under it.
  for (const [p, b] of Object.entries(bytes)) {
    const r = await s.writeBytes(`copy/${p}`, b);
    assert.equal(r.exitCode, 0, r.output);
  }
  const copy = await s.exportFiles({ under: 'copy' });
  sameFiles(Object.fromEntries(Object.entries(copy).map(([p, v]) => [p.slice(5), v])), mixed, 'writeBytes then exportFiles');
  // createSession's files take strings and bytes alike.
  const s2 = await createSession({ workspace: { kind: 'memory', files: mixed } });
  t.after(() => s2.close());
  sameFiles(await s2.exportFiles(), mixed, 'createSession files then exportFiles');
  const go = await s2.exportFiles({ under: 'net/http', include: '*.go' });
  assert.ok(Object.keys(go).length > 20 && Object.keys(go).every((p) => /^net\/http\/[^/]+\.go$/.test(p)), 'include matches under the directory');
});

test('content calls refuse bad input by name and change nothing', async (t) => {
  const s = await createSession();
  t.after(() => s.close());
  await assert.rejects(s.importFiles({ 'ok.txt': 'x', '../out.txt': 'y' }), (e) => e.code === 'TOOL_FAILED' && /files\["\.\.\/out\.txt"\]/.test(e.message));
  await assert.rejects(s.readBytes('ok.txt'), (e) => e.code === 'TOOL_FAILED', 'nothing of the refused import was written');
  await assert.rejects(s.importFiles({ 'a.txt': 5 }), (e) => e.code === 'INVALID_CALL' && /files\["a\.txt"\] must be a string or a Uint8Array, got 5/.test(e.message));
  await assert.rejects(s.importFiles({ 'a.txt': 'x', './a.txt': 'y' }), /same file/);
  await assert.rejects(s.writeBytes('a.bin', 'text'), (e) => e.code === 'INVALID_CALL' && /Uint8Array/.test(e.message));
  await s.writeBytes('bad.txt', Uint8Array.from([0xff, 0xfe]));
  await assert.rejects(s.readText('bad.txt'), (e) => e.code === 'TOOL_FAILED' && /readBytes/.test(e.message));
  await assert.rejects(s.exportFiles({ include: '[z' }), /include/);
  await assert.rejects(s.exportFiles({ undr: 'x' }), (e) => e.code === 'INVALID_CALL' && /unknown option "undr"/.test(e.message));
  await assert.rejects(createSession({ workspace: { kind: 'memory', files: { 'a.txt': 5 } } }), /options\.workspace\.files\["a\.txt"\] must be a string or a Uint8Array, got 5/);
});

test('content calls go through the kernel: hooks see their paths, events show them', async (t) => {
  const seen = [];
  const s = await createSession({
    hooks: [{ id: 'lock', event: 'pre_tool_use', matcher: { pathPattern: 'locked/**' }, handler: (ev) => { seen.push(ev.toolName ?? ev.tool_name); return { action: 'block', reason: 'locked' }; } }],
  });
  t.after(() => s.close());
  const events = s.events();
  const r = await s.writeBytes('locked/a.bin', Uint8Array.of(1));
  assert.equal(r.exitCode, 1);
  assert.match(r.output, /locked/);
  await assert.rejects(s.importFiles({ 'locked/b.txt': 'x' }), (e) => e.code === 'TOOL_FAILED');
  await assert.rejects(s.readText('locked/a.bin'), (e) => e.code === 'TOOL_FAILED');
  await s.importFiles({ 'free/c.txt': 'x' });
  assert.equal(seen.length, 3, 'the hook was asked for each locked call');
  const names = [];
  for await (const e of events) {
    if (e.type === 'tool_end') names.push(e.toolName);
    if (names.length === 4) break;
  }
  assert.deepEqual(names, ['writeBytes', 'importFiles', 'readText', 'importFiles']);
});

// Over 8 MiB the files cross in several chunks that share one buffer, and
// export pages share one page: every file must still come back exact,
// including ones larger than a chunk (they cross alone).
test('several chunks and pages through one reused buffer stay byte for byte', async (t) => {
  let x = 12345;
  const rand = (n) => Uint8Array.from({ length: n }, () => ((x = (x * 1103515245 + 12345) >>> 0) >>> 16) & 0xff);
  const text = (i, n) => `file ${i} ${'abcdefghijklmnopqrstuvwxyz\u00e9\u4e16\n'.repeat(Math.ceil(n / 30))}`.slice(0, n);
  const files = {};
  for (let i = 0; i < 48; i++) files[`d${i % 5}/f${i}.${i % 3 ? 'txt' : 'bin'}`] = i % 3 ? text(i, 600_000 + i) : rand(500_000 + i);
  files['big/alone.bin'] = rand(9 << 20);
  files['big/alone.txt'] = text(99, 9 << 20);
  const s = await createSession({ workspace: { kind: 'memory', files } });
  t.after(() => s.close());
  sameFiles(await s.exportFiles(), files, 'createSession files then exportFiles');
  const s2 = await createSession();
  t.after(() => s2.close());
  await s2.importFiles(files);
  sameFiles(await s2.exportFiles(), files, 'importFiles then exportFiles');
});
