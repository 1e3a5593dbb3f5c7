// session.getArtifact: a cut output (over 100 KiB) points to its artifact,
// in its suffix and in metadata.artifact, and getArtifact returns it whole.
// One read pages itself under 100 KiB (it says "continue with offset="),
// so the long output is a batch of reads covering a 300 KiB file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createSession } from '@a3s-lab/code-wasm';

const require = createRequire(import.meta.url);
const pkgJson = require.resolve('@a3s-lab/code-wasm/package.json');
const dts = readFileSync(new URL(JSON.parse(readFileSync(pkgJson, 'utf8')).types, `file://${pkgJson}`), 'utf8');

let big = '';
for (let i = 0; big.length < 300 * 1024; i++) big += `line ${String(i).padStart(5, '0')} ${'x'.repeat(88)}\n`;
const lastLine = big.slice(big.lastIndexOf('\n', big.length - 2) + 1, -1);

test('a cut output is fetched whole with getArtifact', async () => {
  const s = await createSession({ workspace: { kind: 'memory' } });
  try {
    assert.equal((await s.writeFile('big.txt', big)).exitCode, 0);
    const lines = big.split('\n').length - 1;
    const invocations = [];
    for (let o = 0; o < lines; o += 500) invocations.push({ tool: 'read', args: { file_path: 'big.txt', offset: o, limit: 500 } });
    const r = await s.tool('batch', { invocations });
    assert.equal(r.exitCode, 0, r.output.slice(0, 300));
    const uri = r.output.match(/a3s:\/\/tool-output\/batch\/[0-9a-f]{64}/)?.[0];
    assert.ok(uri, `no artifact URI in the output's suffix: …${r.output.slice(-300)}`);
    const meta = JSON.parse(r.metadataJson);
    assert.equal(meta.artifact.artifact_uri, uri);

    const a = await s.getArtifact(uri);
    assert.equal(a.artifact_uri, uri);
    assert.equal(a.tool_name, 'batch');
    assert.equal(a.artifact_id, uri.split('/').pop());
    assert.equal(a.original_bytes, Buffer.byteLength(a.content));
    assert.ok(a.shown_bytes > 0 && a.shown_bytes < a.original_bytes, `${a.shown_bytes} of ${a.original_bytes}`);
    // The whole output: what was shown, then the rest, up to the file's last line.
    assert.ok(a.content.startsWith(r.output.slice(0, 1000)));
    for (const l of big.split('\n').slice(0, -1)) if (!a.content.includes(l)) assert.fail(`the artifact lacks ${l}`);
    assert.ok(!r.output.includes(lastLine), 'the shown output was cut');

    // Every key emitted is declared in index.d.ts's Artifact, and every declared key is emitted.
    const decl = dts.match(/^export interface Artifact \{\n([\s\S]*?)^\}/m)[1];
    const keys = [...decl.matchAll(/^ {2}(\w+):/gm)].map((m) => m[1]).sort();
    assert.deepEqual(Object.keys(a).sort(), keys);
  } finally {
    await s.close();
  }
});

test('getArtifact: unknown uri is null, a non-string uri rejects INVALID_CALL', async () => {
  const s = await createSession();
  try {
    assert.equal(await s.getArtifact('a3s://tool-output/read/' + '0'.repeat(64)), null);
    assert.equal(await s.getArtifact(''), null);
    for (const bad of [5, null, undefined, { uri: 'x' }]) {
      await assert.rejects(s.getArtifact(bad), (e) => e.code === 'INVALID_CALL' && /getArtifact: uri/.test(e.message), String(bad));
    }
  } finally {
    await s.close();
  }
  await assert.rejects(s.getArtifact('x'), (e) => e.code === 'SESSION_CLOSED');
});
