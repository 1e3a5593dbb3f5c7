// The engine conformance cases, the red-team pack and the bounds of issue
// 11 (a 1 GiB allocation, 1,000 concurrent ctx calls, a flood of refused
// calls, a 20 MB result), run through session.program in whatever host
// imports this module (the browser tier loads it into a Chromium page),
// and, given the host's own PTC kinds, the engine-level bounds driven as
// Go's HostEngine drives them. Returns one {name, ok, detail} per case;
// the cases mirror ptc/enginetest (Go), which runs them on every engine.
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

// drive runs one script on PTC host kinds as Go's HostEngine does and
// reports what crossed: the calls, the most outstanding at once, the
// violation and the done message.
async function drive(kinds, start) {
  const { run, runtime } = await kinds['ptc.start']({ name: 'inline.js', inputs: {}, methods: ['readFile', 'tool'], tools: ['read'], timeoutMs: 60000, ...start });
  let calls = 0, outstanding = 0, maxOutstanding = 0, violation;
  try {
    for (;;) {
      const p = await kinds['ptc.poll']({ run });
      if (p.violation) violation = p.violation;
      calls += p.calls.length;
      outstanding += p.calls.length;
      maxOutstanding = Math.max(maxOutstanding, outstanding);
      for (const c of p.calls) setTimeout(() => { outstanding--; kinds['ptc.reply']({ run, id: c.id, ok: true, value: '"alpha\\n"' }); }, 0);
      if (p.done) return { runtime, calls, maxOutstanding, violation, done: p.done };
    }
  } finally {
    await kinds['ptc.stop']({ run });
  }
}

// stallWatch measures the longest gap between 10 ms ticks of this thread.
function stallWatch() {
  let last = performance.now(), max = 0;
  const t = setInterval(() => { const now = performance.now(); max = Math.max(max, now - last); last = now; }, 10);
  return () => { clearInterval(t); return max; };
}

const ALLOC = {
  arraybuffer: 'new ArrayBuffer(2 ** 30)',
  uint8array: 'new Uint8Array(2 ** 30)',
  repeat: "'x'.repeat(2 ** 30)",
  doubling: "(() => { let s = 'x'.repeat(1 << 20); for (let i = 0; i < 10; i++) { s = s + s; s.indexOf('y'); } return s; })()",
  pushBuffers: '(() => { const k = []; for (let i = 0; i < 1024; i++) k.push(new Uint8Array(1 << 20).fill(1)); return k; })()',
  pushStrings: "(() => { const k = []; for (let i = 0; i < 16384; i++) k.push(String(i).padEnd(1 << 16, 'y')); return k; })()",
};

export async function runPtcSuite(createSession, pack, engine, { runtime, kinds } = {}) {
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
        if (m.program.runtime !== runtime) return 'runtime ' + m.program.runtime;
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
      // timeoutMs counts from the script's start: the engine's start
      // (engine_start_ms) is not part of it; the bound is generous (load;
      // unstopped, the script spins for ever).
      const started = meta(r).program.engine_start_ms;
      return (r.output === 'program script timed out after 300 ms' && Number.isInteger(started) && took - started < 300 + 8000) || `${r.output} after ${took} ms (engine start ${started} ms)`;
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
    for (const [name, expr] of Object.entries(ALLOC)) {
      await check(`alloc_1gib_${name}_fails_only_the_program`, async () => {
        const r = await program({ source: `async function run(ctx) { const x = ${expr}; return 'allocated'; }`, limits: { timeoutMs: 60000 } });
        if (r.exitCode !== 1 || !/^program script error: .*(out of memory|invalid string length|string too long|invalid array buffer length)/.test(r.output)) return r.output;
        if ((await s.tool('read', { file_path: 'a.txt' })).exitCode !== 0) return 'the next tool call failed';
        const next = await program({ source: "async function run(ctx) { return (await ctx.readFile('a.txt')).trim() }" });
        return meta(next).script_result === 'alpha' || 'the next program: ' + next.output;
      });
    }
    await check('concurrent_1000_results_or_clear_errors', async () => {
      for (const limits of [{ maxToolCalls: 1000 }, {}]) {
        const r = await program({ source: `async function run(ctx) {
  const out = await Promise.allSettled(Array.from({ length: 1000 }, () => ctx.readFile('a.txt')));
  const ok = out.filter((x) => x.status === 'fulfilled' && x.value === 'alpha\\n').length;
  const refused = out.filter((x) => x.status === 'rejected' && /^PTC script exceeded maxToolCalls=\\d+$/.test(x.reason.message)).length;
  return { ok, refused };
}`, limits: { timeoutMs: 120000, ...limits } });
        // 1,000 call records pass the 64 KiB metadata bound: the whole
        // metadata is then an artifact of its own.
        let m = meta(r);
        if (m.metadata_artifact) m = JSON.parse((await s.getArtifact(m.metadata_artifact.artifact_uri)).content);
        const calls = m.program.tool_calls.length;
        if (r.exitCode === 0 && m.script_result.ok + m.script_result.refused !== 1000) return JSON.stringify(m.script_result);
        if (r.exitCode === 0 && m.script_result.ok !== calls) return `${m.script_result.ok} results, ${calls} recorded calls`;
        if (r.exitCode !== 0 && !/^PTC script exceeded maxToolCalls=\d+$/.test(r.output)) return r.output;
        if (calls > (limits.maxToolCalls ?? 20)) return `${calls} calls crossed`;
        if ((await s.tool('read', { file_path: 'a.txt' })).exitCode !== 0) return 'the session is unhealthy';
      }
      return true;
    });
    await check('flood_and_20mb_result_do_not_stall_the_page', async () => {
      const stop = stallWatch();
      const flood = await program({ source: "async function run(ctx) { for (let i = 0; i < 1000000; i++) ctx.readFile('a.txt'); return 'flooded' }", limits: { timeoutMs: 60000 } });
      const big = await program({ source: "async function run() { return 'x'.repeat(20 * 1000 * 1000) }", limits: { timeoutMs: 60000 } });
      const stall = stop();
      if (!(flood.exitCode === 0 || flood.output === 'PTC script exceeded maxToolCalls=20')) return flood.output;
      if (meta(flood).program.tool_calls.length > 20) return 'refused calls crossed';
      if (big.output !== 'program script error: the program result is 20000002 bytes of JSON; the limit is 1048576') return big.output;
      return stall < 3000 || `the page stalled ${stall} ms`;
    });
    if (kinds) {
      await check('engine_in_flight_bounded_1000_complete', async () => {
        const source = "async function run(ctx) { return (await Promise.all(Array.from({ length: 1000 }, () => ctx.readFile('a.txt')))).length }";
        const r = await drive(kinds, { source, maxToolCalls: 1000 });
        const four = await drive(kinds, { source, maxToolCalls: 1000, maxInFlight: 4 });
        return (r.runtime === runtime && r.done.value === '1000' && r.calls === 1000 && r.maxOutstanding <= 16 && four.done.value === '1000' && four.maxOutstanding <= 4) ||
          JSON.stringify([r, four]);
      });
      await check('engine_refused_flood_never_crosses', async () => {
        const r = await drive(kinds, { source: "async function run(ctx) { for (let i = 0; i < 20; i++) await ctx.readFile('a.txt'); let last; for (let i = 0; i < 1000000; i++) last = ctx.readFile('a.txt'); try { await last } catch (e) { return e.message } }" });
        return (r.calls === 20 && r.violation === 'PTC script exceeded maxToolCalls=20' && r.done.value === '"PTC script exceeded maxToolCalls=20"') || JSON.stringify(r);
      });
      await check('engine_memory_and_stack_bounds', async () => {
        const r = await drive(kinds, { source: 'async function run() { const k = []; try { for (let i = 0; i < 64; i++) k.push(new Uint8Array(1 << 20).fill(1)) } catch (e) { return String(e) + " " + k.length } }', memoryBytes: 16 << 20 });
        const d = await drive(kinds, { source: 'async function run() { let d = 0; function f() { d++; f(); } try { f() } catch (e) { return [e instanceof RangeError, d > 100] } }' });
        return (/^"InternalError: out of memory (1[0-9]|2[0-9])"$/.test(r.done.value) && d.done.value === '[true,true]') || JSON.stringify([r.done, d.done]);
      });
    }
    // QuickJS is compiled by now; the spare worker started after the last
    // program gets a moment to boot: the pack's timeouts are for the
    // attempts.
    await new Promise((ok) => setTimeout(ok, 1000));
    for (const a of pack) {
      if (a.engines && !a.engines.includes(engine)) continue;
      await check('redteam/' + a.name, async () => {
        const r = await program({ source: a.source.join('\n') + '\n', inputs: { list: [1, 2] }, limits: { timeoutMs: a.expect === 'contained' ? 30000 : 2000, ...(a.limits || {}) }, ...(a.allowedTools ? { allowedTools: a.allowedTools } : {}) });
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
