// session.glob returns every matching path (the Go helper pages the glob
// tool 1,000 at a time), sorted, up to core.MaxGlobPaths; past that it
// rejects TOOL_FAILED saying how to narrow the pattern.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSession } from '@a3s-lab/code-wasm';

const files = (n, dir = 'd') => Object.fromEntries(Array.from({ length: n }, (_, i) => [`${dir}/f${String(i).padStart(5, '0')}.txt`, 'x']));

test('glob returns every path across pages, sorted', async () => {
  const s = await createSession({ workspace: { kind: 'memory', files: { ...files(2500), 'other.md': 'y' } } });
  const got = await s.glob('**/*.txt');
  assert.equal(got.length, 2500);
  assert.deepEqual(got, [...got].sort());
  assert.equal(new Set(got).size, 2500, 'no path twice across pages');
  assert.equal(got[0], 'd/f00000.txt');
  assert.equal(got.at(-1), 'd/f02499.txt');
  assert.deepEqual(await s.glob('*.md'), ['other.md']);
  assert.deepEqual(await s.glob('nothing/**'), []);
  await s.close();
});

test('glob past the cap rejects TOOL_FAILED with the way out', async () => {
  const s = await createSession({ workspace: { kind: 'memory', files: files(10_001) } });
  await assert.rejects(s.glob('**'), (e) => {
    assert.equal(e.code, 'TOOL_FAILED', e.message);
    assert.match(e.message, /10001 files match "\*\*", more than the 10000 Glob returns; narrow the pattern/);
    return true;
  });
  assert.equal((await s.glob('d/f0000*.txt')).length, 10);
  await s.close();
});
