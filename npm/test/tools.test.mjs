// The file tools through the built package, as a JS host calls them:
// session.tool(name, args) -> {name, output, exitCode, metadataJson, errorKindJson}.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSession } from '@a3s-lab/code-wasm';

const files = {
  'src/main.go': 'package main\n\nfunc main() {\n\tprintln("hi")\n}\n',
  'src/util.go': 'package main\n\n// TODO: tidy\nfunc helper() int { return 1 }\n',
  'web/app.ts': 'export function hello() {}\n',
  'web/view.tsx': 'export const View = () => null // hello\n',
  'crlf.txt': 'one\r\ntwo\r\nthree\r\n',
  'nonl.txt': 'a\nb',
  'log.txt': 'one\n',
};

async function session() {
  return createSession({ workspace: { kind: 'memory', files } });
}

function meta(r) { return r.metadataJson ? JSON.parse(r.metadataJson) : undefined; }
function kind(r) { return r.errorKindJson ? JSON.parse(r.errorKindJson).type : undefined; }

async function read(s, path) {
  const r = await s.tool('read', { file_path: path });
  assert.equal(r.exitCode, 0, r.output);
  return r.output.split('\n').filter((l) => /^\s*\d+\t/.test(l)).map((l) => l.replace(/^\s*\d+\t/, '')).join('\n');
}

test('the memory surface: read, ls, write, edit, patch, grep, glob; no bash or git', async () => {
  const s = await session();
  const names = s.toolNames();
  for (const n of ['edit', 'glob', 'grep', 'ls', 'patch', 'read', 'write']) assert.ok(names.includes(n), n);
  assert.ok(!names.includes('bash') && !names.includes('git'));
  const defs = s.toolDefinitions();
  for (const d of defs.filter((d) => names.includes(d.name) && ['read', 'write', 'edit', 'patch', 'grep', 'glob', 'ls'].includes(d.name))) {
    assert.equal(d.parameters.type, 'object', d.name);
    assert.equal(d.parameters.additionalProperties, false, d.name);
    assert.equal(d.parameters.oneOf, undefined, d.name);
    assert.ok(d.description.length > 80, d.name);
  }
  await s.close();
});

test('read: numbered lines, offset/limit footer, past-the-end error, range metadata', async () => {
  const s = await session();
  const r = await s.tool('read', { file_path: 'src/main.go', offset: 2, limit: 2 });
  assert.equal(r.name, 'read');
  assert.equal(r.exitCode, 0);
  assert.match(r.output, /^     3\tfunc main\(\) \{\n     4\t\tprintln\("hi"\)\n/);
  assert.match(r.output, /continue with offset=4/);
  const m = meta(r);
  assert.deepEqual(m.source_anchors, ['src/main.go']);
  assert.equal(m.range.next_offset, 4);
  assert.equal(m.range.total_lines, 5);
  const past = await s.tool('read', { file_path: 'src/main.go', offset: 6 });
  assert.equal(past.exitCode, 1);
  assert.equal(kind(past), 'invalid_argument');
  assert.match(past.output, /past the end/);
  const missing = await s.tool('read', { file_path: 'nope.txt' });
  assert.equal(kind(missing), 'not_found');
  const bad = await s.tool('read', { file_path: 'x', limit: 5000 });
  assert.equal(kind(bad), 'invalid_argument');
  await s.close();
});

test('read.files: request order, isolated failure, lossless continuation under a small budget', async () => {
  const big = {};
  for (let i = 0; i < 40; i++) big[`d/f${String(i).padStart(2, '0')}.txt`] = Array.from({ length: 25 }, (_, j) => `file ${i} line ${j}`).join('\n') + '\n';
  const s = await createSession({ workspace: { kind: 'memory', files: big } });
  const first = await s.tool('read', { files: [{ path: 'd/f01.txt', limit: 1 }, { path: 'missing' }, { path: 'd/f00.txt', limit: 1 }] });
  assert.equal(first.exitCode, 0);
  assert.ok(first.output.indexOf('=== d/f01.txt ===') < first.output.indexOf('=== missing ==='));
  assert.ok(first.output.indexOf('=== missing ===') < first.output.indexOf('=== d/f00.txt ==='));
  assert.equal(meta(first).batch.status, 'partial_failure');

  const got = {};
  const names = Object.keys(big).sort();
  for (let start = 0; start < names.length; start += 32) {
    let req = names.slice(start, start + 32).map((path) => ({ path }));
    let calls = 0;
    while (req.length) {
      assert.ok(++calls < 500, 'no progress');
      const r = await s.tool('read', { files: req, max_output_bytes: 2048 });
      assert.equal(r.exitCode, 0, r.output);
      assert.ok(Buffer.byteLength(r.output) <= 2048);
      let cur;
      for (const l of r.output.split('\n')) {
        const h = /^=== (.*) ===$/.exec(l);
        if (h) { cur = h[1]; got[cur] ??= []; continue; }
        const m = /^\s*(\d+)\t(.*)$/.exec(l);
        if (m && cur) {
          assert.equal(Number(m[1]), got[cur].length + 1, `${cur} line ${m[1]} out of order or repeated`);
          got[cur].push(m[2]);
        }
      }
      const b = meta(r).batch;
      req = b.continuation;
      assert.equal(b.truncated, req.length > 0);
    }
  }
  for (const n of names) assert.equal(got[n].join('\n') + '\n', big[n], n);
  const small = await s.tool('read', { files: [{ path: 'd/f00.txt' }], max_output_bytes: 100 });
  assert.equal(kind(small), 'invalid_argument');
  await s.close();
});

test('write: overwrite creates parents; append is compare-and-swap and idempotent', async () => {
  const s = await session();
  const w = await s.tool('write', { file_path: 'a/b/c.txt', content: 'x\n' });
  assert.equal(w.exitCode, 0);
  assert.equal(meta(w).created, true);
  assert.equal(meta(w).after, 'x\n');
  assert.equal(await read(s, 'a/b/c.txt'), 'x');
  const ap = { file_path: 'log.txt', content: 'two\n', mode: 'append', expected_offset: 4 };
  const a1 = await s.tool('write', ap);
  assert.equal(a1.exitCode, 0);
  assert.deepEqual({ ...meta(a1) }, { file_path: 'log.txt', mode: 'append', offset: 4, appended_bytes: 4, resulting_size: 8, already_applied: false });
  const a2 = await s.tool('write', ap);
  assert.equal(a2.exitCode, 0);
  assert.equal(meta(a2).already_applied, true);
  const stale = await s.tool('write', { ...ap, content: 'six\n' });
  assert.equal(stale.exitCode, 1);
  assert.equal(kind(stale), 'invalid_argument');
  assert.equal(await read(s, 'log.txt'), 'one\ntwo');
  const noOff = await s.tool('write', { file_path: 'log.txt', content: 'z', mode: 'append' });
  assert.match(noOff.output, /requires expected_offset/);
  await s.close();
});

test('edit: dry run, ambiguity guidance, counts, CRLF', async () => {
  const s = await session();
  const amb = await s.tool('edit', { file_path: 'src/main.go', old_string: 'main', new_string: 'Main' });
  assert.equal(amb.exitCode, 1);
  assert.match(amb.output, /occurs 2 times.*replace_all/);
  const dry = await s.tool('edit', { file_path: 'src/main.go', old_string: 'main', new_string: 'Main', replace_all: true, dry_run: true });
  assert.equal(dry.exitCode, 0);
  assert.equal(meta(dry).replacement_count, 2);
  assert.equal(meta(dry).dry_run, true);
  assert.equal(await read(s, 'src/main.go'), files['src/main.go'].trimEnd());
  const wrong = await s.tool('edit', { file_path: 'src/main.go', old_string: 'main', new_string: 'Main', replace_all: true, expected_replacements: 3 });
  assert.equal(kind(wrong), 'invalid_argument');
  const tooMany = await s.tool('edit', { file_path: 'src/main.go', old_string: 'main', new_string: 'Main', replace_all: true, max_replacements: 1 });
  assert.equal(kind(tooMany), 'invalid_argument');
  const ok = await s.tool('edit', { file_path: 'src/main.go', old_string: 'main', new_string: 'Main', replace_all: true, expected_replacements: 2 });
  assert.equal(ok.exitCode, 0);
  assert.equal(meta(ok).after, meta(dry).after);
  const crlf = await s.tool('edit', { file_path: 'crlf.txt', old_string: 'one\ntwo', new_string: '1\n2' });
  assert.equal(crlf.exitCode, 0);
  assert.equal(meta(crlf).after, '1\r\n2\r\nthree\r\n');
  const nf = await s.tool('edit', { file_path: 'nope', old_string: 'a', new_string: 'b' });
  assert.equal(kind(nf), 'not_found');
  await s.close();
});

test('patch: unified diff with CRLF and no-newline markers; strict failures change nothing', async () => {
  const s = await session();
  const p = await s.tool('patch', { file_path: 'crlf.txt', diff: '--- a/crlf.txt\n+++ b/crlf.txt\n@@ -1,3 +1,3 @@\n one\r\n-two\r\n+TWO\r\n three\r\n' });
  assert.equal(p.exitCode, 0, p.output);
  assert.equal(p.output, 'Applied 1 hunk(s) to crlf.txt');
  assert.equal(meta(p).after, 'one\r\nTWO\r\nthree\r\n');
  const nl = await s.tool('patch', { file_path: 'nonl.txt', diff: '@@ -2 +2,2 @@\n-b\n\\ No newline at end of file\n+b\n+c\n' });
  assert.equal(nl.exitCode, 0, nl.output);
  assert.equal(meta(nl).after, 'a\nb\nc\n');
  const bad = await s.tool('patch', { file_path: 'src/util.go', diff: '@@ -1,2 +1,2 @@\n package nope\n-\n+x\n' });
  assert.equal(bad.exitCode, 1);
  assert.equal(kind(bad), 'invalid_argument');
  assert.match(bad.output, /does not match/);
  assert.equal(await read(s, 'src/util.go'), files['src/util.go'].trimEnd());
  const counts = await s.tool('patch', { file_path: 'src/util.go', diff: '@@ -1,3 +1,3 @@\n package main\n' });
  assert.match(counts.output, /declares 3 old and 3 new/);
  await s.close();
});

test('grep: content, files_with_matches, count, summary, glob brace sets, -i, context', async () => {
  const s = await session();
  const c = await s.tool('grep', { pattern: 'func \\w+\\(' });
  assert.equal(c.exitCode, 0);
  assert.match(c.output, /^src\/main\.go:3:func main\(\) \{$/m);
  assert.match(c.output, /2 match\(es\) in 2 file\(s\)/);
  const m = meta(c);
  assert.equal(m.output_mode, 'content');
  assert.deepEqual(m.search, { matching_lines: 2, matching_files: 2, truncated: false });
  const ts = await s.tool('grep', { pattern: 'HELLO', '-i': true, glob: '*.{ts,tsx}', output_mode: 'files_with_matches' });
  assert.equal(ts.output.split('\n')[0], 'web/app.ts');
  assert.equal(ts.output.split('\n')[1], 'web/view.tsx');
  assert.equal(meta(ts).sort, 'path');
  assert.equal(meta(ts).page.total_items, 2);
  const cnt = await s.tool('grep', { pattern: 'main', output_mode: 'count', limit: 1 });
  assert.equal(cnt.output.split('\n')[0], 'src/main.go: 2 matching line(s)');
  assert.equal(meta(cnt).page.next_cursor, '1');
  const next = await s.tool('grep', { pattern: 'main', output_mode: 'count', limit: 1, cursor: '1' });
  assert.equal(next.output.split('\n')[0], 'src/util.go: 1 matching line(s)');
  const sum = await s.tool('grep', { pattern: 'main', output_mode: 'summary' });
  assert.equal(sum.output, '3 matching line(s) in 2 file(s)');
  const ctx = await s.tool('grep', { pattern: 'TODO', context: 1 });
  assert.match(ctx.output, /src\/util\.go-2-\nsrc\/util\.go:3:\/\/ TODO: tidy\nsrc\/util\.go-4-func helper/);
  const badCursor = await s.tool('grep', { pattern: 'main', output_mode: 'count', cursor: 'zz' });
  assert.match(badCursor.output, /cursor is invalid or expired/);
  const limitInContent = await s.tool('grep', { pattern: 'main', limit: 3 });
  assert.equal(kind(limitInContent), 'invalid_argument');
  const badRe = await s.tool('grep', { pattern: '(' });
  assert.equal(kind(badRe), 'invalid_argument');
  await s.close();
});

test('glob: doublestar, sort, pages, no-match success', async () => {
  const s = await session();
  const g = await s.tool('glob', { pattern: '**/*.go', sort: 'path' });
  assert.equal(g.exitCode, 0);
  assert.deepEqual(g.output.split('\n').slice(0, 2), ['src/main.go', 'src/util.go']);
  assert.match(g.output, /\(2 of 2 file\(s\) shown\)/);
  const m = meta(g);
  assert.equal(m.sort, 'path');
  assert.equal(m.page.total_items, 2);
  const p1 = await s.tool('glob', { pattern: '**/*', sort: 'path', limit: 3 });
  assert.equal(meta(p1).page.next_cursor, '3');
  const p2 = await s.tool('glob', { pattern: '**/*', sort: 'path', limit: 3, cursor: '3' });
  const all = [...meta(p1).paths, ...meta(p2).paths];
  assert.deepEqual(all, [...all].sort());
  assert.equal(new Set(all).size, all.length);
  assert.ok(all.length >= 6);
  const none = await s.tool('glob', { pattern: '**/*.rs' });
  assert.equal(none.exitCode, 0);
  assert.match(none.output, /^No files found matching pattern: \*\*\/\*\.rs/);
  const bad = await s.tool('glob', { pattern: '*', sort: 'mtime' });
  assert.equal(kind(bad), 'invalid_argument');
  await s.close();
});

test('ls: entries with kind and size, pages', async () => {
  const s = await session();
  const r = await s.tool('ls', {});
  assert.equal(r.exitCode, 0);
  const m = meta(r);
  assert.deepEqual(m.entries.find((e) => e.name === 'src'), { name: 'src', kind: 'dir', size: 0 });
  assert.deepEqual(m.entries.find((e) => e.name === 'log.txt'), { name: 'log.txt', kind: 'file', size: 4 });
  assert.match(r.output, /^dir\s+-\s+src\/$/m);
  const p = await s.tool('ls', { limit: 2 });
  assert.equal(meta(p).page.next_cursor, '2');
  assert.equal(meta(p).entries.length, 2);
  const f = await s.tool('ls', { path: 'log.txt' });
  assert.equal(kind(f), 'invalid_argument');
  const nf = await s.tool('ls', { path: 'nope' });
  assert.equal(kind(nf), 'not_found');
  await s.close();
});
