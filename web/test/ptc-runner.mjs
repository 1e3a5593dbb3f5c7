// The engine conformance cases and the red-team pack, run through
// session.program in whatever host imports this module (the browser tier
// loads it into a Chromium page). Returns one {name, ok, detail} per case;
// the cases mirror ptc/enginetest (Go), which runs natively on goja and
// Node.
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
  'scripts/ptc/search-auth.js': searchAuth,
  'a.txt': 'alpha\n',
  'big.txt': 'é€'.repeat(200) + '\n',
};
for (let i = 0; i < 16; i++) files[`f/${String(i).padStart(2, '0')}.txt`] = `file ${i}\nsecond line\n`;

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

const meta = (r) => (r.metadataJson ? JSON.parse(r.metadataJson) : {});
const utf8len = (s) => new TextEncoder().encode(s).length;

export async function runPtcSuite(createSession, pack, engine) {
  const out = [];
  const s = await createSession({ workspace: { kind: 'memory', files } });
  const check = async (name, fn) => {
    try {
      const detail = await fn();
      out.push({ name, ok: detail === true, detail: detail === true ? '' : String(detail) });
    } catch (e) {
      out.push({ name, ok: false, detail: 'threw ' + (e && e.stack ? e.stack : e) });
    }
  };
  const program = (o) => s.program(o);
  try {
    for (const [n, where] of [['path', { path: 'scripts/ptc/search-auth.js' }], ['inline', { source: searchAuth }]]) {
      await check(`search_auth_${n}`, async () => {
        const r = await program({ ...where, inputs: { query: 'PermissionPolicy' }, allowedTools: ['grep', 'glob', 'read'],
          limits: { timeoutMs: 30000, maxToolCalls: 30, maxOutputBytes: 65536 } });
        const m = meta(r), res = m.script_result;
        if (r.exitCode !== 0) return r.output;
        if (m.program.runtime !== engine + '-worker') return 'runtime ' + m.program.runtime;
        if (res.summary !== 'Found 2 candidate files for PermissionPolicy') return res.summary;
        for (const e of res.evidence) if (files[e.file] !== e.preview) return 'preview of ' + e.file;
        return /policy\.rs/.test(res.rawSearch) || 'rawSearch ' + res.rawSearch;
      });
    }
    await check('promise_all_fanout_16', async () => {
      const r = await program({ source: `async function run(ctx) {
  const names = Array.from({ length: 16 }, (_, i) => 'f/' + String(i).padStart(2, '0') + '.txt');
  return (await Promise.all(names.map((n) => ctx.readFile(n)))).map((t) => t.split('\\n')[0]);
}`, limits: { maxToolCalls: 16 } });
      const got = meta(r).script_result;
      if (r.exitCode !== 0) return r.output;
      return (got.length === 16 && got.every((t, i) => t === `file ${i}`) && meta(r).program.tool_calls.length === 16) || JSON.stringify(got);
    });
    await check('allow_list', async () => {
      const r = await program({ source: "async function run(ctx) { return await ctx.tool('write', {file_path: 'x.txt', content: 'p'}).catch(() => 'swallowed') }", allowedTools: ['read'] });
      const x = await s.tool('read', { file_path: 'x.txt' });
      return (r.exitCode === 1 && r.output === "tool 'write' is not allowed for this PTC script" && x.exitCode !== 0) || r.output;
    });
    await check('max_tool_calls', async () => {
      const r = await program({ source: "async function run(ctx) { for (let i = 0; i < 5; i++) { try { await ctx.readFile('a.txt') } catch (e) {} } }", limits: { maxToolCalls: 3 } });
      return (r.exitCode === 1 && r.output === 'PTC script exceeded maxToolCalls=3' && meta(r).program.tool_calls.length === 3) || r.output;
    });
    await check('max_output_bytes_utf8_safe', async () => {
      for (const limit of [1, 9, 10, 101]) {
        const r = await program({ source: "async function run(ctx) { const r = await ctx.read('big.txt'); return {out: r.output, t: r.truncated} }", limits: { maxOutputBytes: limit } });
        const g = meta(r).script_result;
        if (r.exitCode !== 0 || utf8len(g.out) > limit || utf8len(g.out) < limit - 2 || g.out.includes('\uFFFD') || g.t !== true) return `limit ${limit}: ${JSON.stringify(g)}`;
      }
      return true;
    });
    await check('timeout_stops_for_loop', async () => {
      const t0 = performance.now();
      const r = await program({ source: 'async function run() { for (;;) {} }', limits: { timeoutMs: 300 } });
      const took = performance.now() - t0;
      return (r.output === 'program script timed out after 300 ms' && took < 300 + 500 + 300) || `${r.output} after ${took} ms`;
    });
    await check('exception_message_and_line', async () => {
      const r1 = await program({ source: "async function run(ctx) {\n  const x = 1;\n  throw new Error('boom');\n}\n" });
      const r2 = await program({ source: "export default async function run(ctx) {\n  await ctx.readFile('a.txt');\n\n  null.f();\n}\n" });
      return (r1.output === 'program script error: boom (line 3)' && /^program script error: TypeError: .* \(line 4\)$/.test(r2.output)) || `${r1.output} | ${r2.output}`;
    });
    await check('inputs_round_trip', async () => {
      const inputs = { s: 'héllo \u2028 "q" \\ 😀', n: 1.5, i: -7, b: true, z: null, a: [1, 'two', [], {}], o: { deep: { k: 'v' } } };
      const r = await program({ source: 'async function run(ctx, inputs) { return inputs }', inputs });
      return JSON.stringify(meta(r).script_result) === JSON.stringify(inputs) || r.output;
    });
    await check('program_inside_program_rejected', async () => {
      const r = await program({ source: "async function run(ctx) { return ctx.tool('program', {type: 'script', source: 'async function run(){return 1}'}) }", allowedTools: ['program', 'read'] });
      return (r.exitCode === 1 && r.output === "tool 'program' is not allowed for this PTC script") || r.output;
    });
    for (const a of pack) {
      if (a.engines && !a.engines.includes(engine)) continue;
      await check('redteam/' + a.name, async () => {
        const r = await program({ source: a.source.join('\n') + '\n', inputs: { list: [1, 2] }, limits: { timeoutMs: 1000, ...(a.limits || {}) } });
        const res = meta(r).script_result;
        if (/escaped/.test(r.output) || /escaped/.test(JSON.stringify(res ?? null))) return 'ESCAPE: ' + r.output;
        if (a.expect === 'contained' && (r.exitCode !== 0 || res !== 'contained')) return `want contained: ${r.output}`;
        if (a.expect === 'fails' && r.exitCode === 0) return `want failure: ${r.output}`;
        if (a.category === 'lifetime' || a.allowWrite) await new Promise((ok) => setTimeout(ok, 200));
        if ((await s.tool('read', { file_path: 'pwned.txt' })).exitCode === 0) return 'ESCAPE: pwned.txt written';
        const c = await program({ source: canary });
        return meta(c).script_result === 'clean' || 'next program not clean: ' + c.output;
      });
    }
  } finally {
    await s.close();
  }
  return out;
}
