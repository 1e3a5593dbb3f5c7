// The program tool on Node's own engine (npm/src/ptc-node.mjs: a worker
// thread with an empty vm context), through the packed package: the spec's
// search-auth example inline and from a workspace path, a for(;;){} stopped
// by the timeout, and the red-team pack (ptc-redteam.fixture.mjs, shared
// with Go's ptc/enginetest), each attempt followed by a clean-realm canary.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSession } from '@a3s-lab/code-wasm';
import pack from './ptc-redteam.fixture.mjs';

// tools.en.md "Programmatic Tool Calling", byte for byte.
const searchAuth = `// search-auth.js
export default async function run(ctx, inputs) {
  const hits = await ctx.grep(inputs.query, { glob: '*.rs' });
  const files = await ctx.glob('crates/**/*.rs');
  const snippets = [];

  for (const file of files.slice(0, 20)) {
    const content = await ctx.readFile(file);
    if (content.includes(inputs.query)) {
      snippets.push({ file, preview: content.slice(0, 1200) });
    }
  }

  return {
    summary: \`Found \${snippets.length} candidate files for \${inputs.query}\`,
    evidence: snippets,
    rawSearch: hits,
  };
}
`;

const files = {
  'crates/auth/src/policy.rs': 'pub struct PermissionPolicy {\n    pub deny: Vec<String>,\n}\n',
  'crates/auth/src/lib.rs': 'mod policy;\npub use policy::PermissionPolicy;\n',
  'crates/core/src/main.rs': 'fn main() {}\n',
  'docs/auth.md': 'PermissionPolicy is documented here.\n',
  'scripts/ptc/search-auth.js': searchAuth,
};

for (const [name, where] of [['workspace path', { path: 'scripts/ptc/search-auth.js' }], ['inline source', { source: searchAuth }]]) {
  test(`search-auth example runs unchanged from a ${name}`, async () => {
    const s = await createSession({ workspace: { kind: 'memory', files } });
    try {
      const r = await s.program({
        ...where,
        inputs: { query: 'PermissionPolicy' },
        allowedTools: ['grep', 'glob', 'read'],
        limits: { timeoutMs: 30000, maxToolCalls: 30, maxOutputBytes: 65536 },
      });
      assert.equal(r.exitCode, 0, r.output);
      const meta = JSON.parse(r.metadataJson);
      assert.equal(meta.program.runtime, 'node-worker');
      assert.equal(meta.program.success, true);
      const res = meta.script_result;
      assert.equal(res.summary, 'Found 2 candidate files for PermissionPolicy');
      assert.deepEqual(res.evidence.map((e) => e.file).sort(), ['crates/auth/src/lib.rs', 'crates/auth/src/policy.rs']);
      for (const e of res.evidence) assert.equal(e.preview, files[e.file]);
      assert.match(res.rawSearch, /policy\.rs/);
      assert.ok(r.output.startsWith('Program script completed.\nFound 2 candidate files for PermissionPolicy\n'), r.output);
      assert.ok(meta.program.tool_calls.every((c) => c.success));
    } finally {
      await s.close();
    }
  });
}

test('for(;;){} is stopped within timeoutMs + 500 ms and the session stays usable', async () => {
  const s = await createSession({ workspace: { kind: 'memory', files } });
  try {
    const t0 = performance.now();
    const r = await s.program({ source: 'async function run() { for (;;) {} }', limits: { timeoutMs: 300 } });
    const took = performance.now() - t0;
    assert.equal(r.exitCode, 1);
    assert.equal(r.output, 'program script timed out after 300 ms');
    assert.equal(JSON.parse(r.errorKindJson).type, 'timeout');
    assert.ok(took < 300 + 500 + 200, `took ${took} ms`);
    const again = await s.program({ source: 'async function run(ctx) { return (await ctx.glob("**/*.rs")).length }' });
    assert.equal(again.exitCode, 0, again.output);
    assert.equal(JSON.parse(again.metadataJson).script_result, 3);
  } finally {
    await s.close();
  }
});

test('program rejects unknown option keys', async () => {
  const s = await createSession({ workspace: { kind: 'memory', files } });
  await assert.rejects(s.program({ sourc: 'x' }), /unknown option "sourc"/);
  await s.close();
});

const canary = `async function run(ctx) {
  const bad = [];
  if (Object.prototype.polluted !== undefined || Object.prototype.injected !== undefined) bad.push('Object.prototype');
  if (JSON.parse('{"a":1}').a !== 1 || JSON.stringify({ b: 2 }) !== '{"b":2}') bad.push('JSON');
  if ([1, 2].map((x) => x * 2).join() !== '2,4') bad.push('Array.prototype.map');
  if (Promise.prototype.constructor !== Promise) bad.push('Promise');
  if (globalThis.__marker !== undefined) bad.push('marker');
  const t = await ctx.readFile('a.txt');
  if (t !== 'alpha\\n') bad.push('readFile ' + t);
  return bad.length ? bad.join(',') : 'clean';
}
`;

test('red-team pack: nothing escapes, the host stays healthy, the next program is clean', async (t) => {
  assert.ok(pack.length >= 30, `${pack.length} attempts`);
  const s = await createSession({ workspace: { kind: 'memory', files: { 'a.txt': 'alpha\n' } } });
  try {
    for (const a of pack) {
      if (a.engines && !a.engines.includes('node')) continue;
      await t.test(a.name, async () => {
        const r = await s.program({ source: a.source.join('\n') + '\n', inputs: { list: [1, 2] }, limits: { timeoutMs: 1000, ...(a.limits || {}) } });
        const meta = r.metadataJson ? JSON.parse(r.metadataJson) : {};
        assert.ok(!/escaped/.test(r.output) && !/escaped/.test(JSON.stringify(meta.script_result ?? null)), `ESCAPE: ${r.output}`);
        if (a.expect === 'contained') {
          assert.equal(r.exitCode, 0, r.output);
          assert.equal(meta.script_result, 'contained');
        } else if (a.expect === 'fails') {
          assert.notEqual(r.exitCode, 0, r.output);
        }
        if (a.category === 'lifetime' || a.allowWrite) await new Promise((res) => setTimeout(res, 200));
        const pw = await s.tool('read', { file_path: 'pwned.txt' });
        assert.notEqual(pw.exitCode, 0, 'pwned.txt was written');
        const c = await s.program({ source: canary });
        assert.equal(c.exitCode, 0, c.output);
        assert.equal(JSON.parse(c.metadataJson).script_result, 'clean');
      });
    }
  } finally {
    await s.close();
  }
});

// An abort or close() while a script spins terminates its worker: the
// process uses (almost) no CPU afterwards.
for (const how of ['abort', 'close']) {
  test(`${how} during for(;;){} terminates the program worker`, async () => {
    const s = await createSession({ workspace: { kind: 'memory', files } });
    const ac = new AbortController();
    const p = s.program({ source: 'async function run() { for (;;) {} }', limits: { timeoutMs: 30000 } }, { signal: ac.signal });
    await new Promise((r) => setTimeout(r, 300));
    if (how === 'abort') ac.abort(); else await s.close();
    const t0 = performance.now();
    await assert.rejects(p, { code: how === 'abort' ? 'ABORTED' : 'SESSION_CLOSED' });
    assert.ok(performance.now() - t0 < 1000, 'settles within the grace');
    await new Promise((r) => setTimeout(r, 300));
    const c0 = process.cpuUsage();
    await new Promise((r) => setTimeout(r, 500));
    const c = process.cpuUsage(c0);
    assert.ok((c.user + c.system) / 1000 < 250, `the worker still spins: ${(c.user + c.system) / 1000} ms CPU in 500 ms`);
    if (how === 'abort') await s.close();
  });
}
