// Exact workspace content in Chromium (the wasm in its Worker, bytes over
// postMessage): every file of GOROOT/src/net and GOROOT/src/image/testdata
// (binary) through createSession's files, importFiles, exportFiles,
// readBytes, readText and writeBytes, in a memory workspace and in OPFS
// (again from a new session on the same root), byte for byte (SHA-256).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join, relative } from 'node:path';
import { launch, server, freshProfile, removeProfile, watch } from './browser.mjs';

const goroot = execFileSync('go', ['env', 'GOROOT'], { encoding: 'utf8' }).trim();

function expected() {
  const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const want = {};
  for (const dir of ['net', 'image/testdata']) {
    const root = join(goroot, 'src', dir);
    for (const e of readdirSync(root, { recursive: true, withFileTypes: true })) {
      if (!e.isFile()) continue;
      const full = join(e.parentPath ?? e.path, e.name);
      const b = readFileSync(full);
      let isText = !b.includes(0);
      try { if (isText) utf8.decode(b); } catch { isText = false; }
      want[`${dir}/${relative(root, full)}`] = { sha: createHash('sha256').update(b).digest('hex'), isText };
    }
  }
  return want;
}

// roundTrip runs in the page: it fetches the files, moves them through
// every content call and answers each file's SHA-256 as each call gave it.
async function roundTrip({ paths, kind }) {
  const { createSession } = await import('/npm/src/entry-browser.mjs');
  const enc = new TextEncoder();
  const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const sha = async (v) => {
    if (v === undefined) return 'missing';
    const b = typeof v === 'string' ? enc.encode(v) : v;
    return Array.from(new Uint8Array(await crypto.subtle.digest('SHA-256', b)), (x) => x.toString(16).padStart(2, '0')).join('');
  };
  const map = {};
  await Promise.all(paths.map(async (p) => {
    const b = new Uint8Array(await (await fetch(`/goroot/${p}`)).arrayBuffer());
    try { map[p] = b.includes(0) ? b : utf8.decode(b); } catch { map[p] = b; }
  }));
  const workspace = kind === 'opfs' ? { kind: 'opfs', root: 'content-test' } : { kind: 'memory' };
  const out = {};
  for (const p of paths) out[p] = {};
  const s = await createSession({ workspace });
  await s.importFiles(map);
  const exported = await s.exportFiles();
  for (const p of paths) {
    const bytes = await s.readBytes(p);
    await s.writeBytes(`copy/${p}`, bytes);
    Object.assign(out[p], {
      exported: await sha(exported[p]), exportedText: typeof exported[p] === 'string', readBytes: await sha(bytes),
      readText: typeof map[p] === 'string' ? await sha(await s.readText(p)) : null,
    });
  }
  const copy = await s.exportFiles({ under: 'copy' });
  for (const p of paths) out[p].copy = await sha(copy[`copy/${p}`]);
  await s.close();
  // Memory: createSession's files; OPFS: what a new session finds.
  const s2 = await createSession(kind === 'opfs' ? { workspace } : { workspace: { kind: 'memory', files: map } });
  const again = await s2.exportFiles();
  for (const p of paths) out[p].again = await sha(again[p]);
  await s2.close();
  return out;
}

test('workspace content round-trips byte for byte in Chromium (memory and OPFS)', { timeout: 600_000 }, async () => {
  const want = expected();
  const paths = Object.keys(want);
  assert.ok(paths.length > 400 && Object.values(want).some((w) => !w.isText));
  const profile = freshProfile();
  const srv = await server([['/goroot/', join(goroot, 'src')]]);
  const ctx = await launch(profile);
  try {
    const page = await ctx.newPage();
    const errors = watch(page);
    await page.goto(`${srv.url}/test/blank.html`);
    for (const kind of ['memory', 'opfs']) {
      const got = await page.evaluate(roundTrip, { paths, kind });
      for (const [p, w] of Object.entries(want)) {
        const g = got[p];
        for (const k of ['exported', 'readBytes', 'copy', 'again']) assert.equal(g[k], w.sha, `${kind}: ${p}: ${k}`);
        assert.equal(g.exportedText, w.isText, `${kind}: ${p}: exported as ${w.isText ? 'text' : 'bytes'}`);
        if (w.isText) assert.equal(g.readText, w.sha, `${kind}: ${p}: readText`);
      }
    }
    assert.deepEqual(errors, []);
  } finally {
    await ctx.close();
    await srv.close();
    removeProfile(profile);
  }
});
