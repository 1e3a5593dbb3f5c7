// bash, git and verifyCommands on a directory workspace, through the
// built package in Node: the exec host kind (src/exec-node.mjs) runs the
// commands; Go (workspace/dirfs, tools/bash.go, tools/git.go) decides.
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createSession } from '@a3s-lab/code-wasm';

const hasBwrap = spawnSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8' }).status === 0;
const hasGit = spawnSync('git', ['--version']).status === 0;
const modes = hasBwrap ? ['none', 'auto'] : ['none'];

function tmp() {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'exec-test-'));
  return fs.realpathSync(d);
}
function meta(r) { return r.metadataJson ? JSON.parse(r.metadataJson) : undefined; }
function kind(r) { return r.errorKindJson ? JSON.parse(r.errorKindJson).type : undefined; }
function marker() { return `100.${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}`; }

// left lists the processes whose command line holds s.
function left(s) {
  const out = [];
  for (const p of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const c = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8');
      if (c.includes(s)) out.push(c.replaceAll('\0', ' '));
    } catch { /* gone */ }
  }
  return out;
}
// noneLeft waits up to 10 s (a busy machine reaps slowly; the processes it
// looks for sleep 100 s).
async function noneLeft(s) {
  for (let i = 0; i < 500; i++) {
    if (left(s).length === 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail(`processes left: ${left(s).join('; ')}`);
}

// Sessions a test opens are closed after it.
const opened = [];
afterEach(async () => { for (const s of opened.splice(0)) await s.close(); });

async function dirSession(root, sandbox = 'none', extra = {}) {
  const s = await createSession({ workspace: { kind: 'directory', root, sandbox, ...extra }, permissionPolicy: { defaultDecision: 'allow' } });
  opened.push(s);
  return s;
}

test('a directory lists bash, and git when it is a repository', async () => {
  const root = tmp();
  const s = await dirSession(root);
  assert.ok(s.toolNames().includes('bash'));
  assert.ok(!s.toolNames().includes('git'));
  if (hasGit) {
    execFileSync('git', ['init', '-q'], { cwd: root });
    const s2 = await dirSession(root);
    assert.ok(s2.toolNames().includes('git'));
    const r = await s2.git('status');
    assert.equal(r.exitCode, 0, r.output);
    // The positional form: git(command, subcommand, name, …).
    fs.writeFileSync(path.join(root, 'a.txt'), 'a\n');
    const env = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@e' };
    execFileSync('git', ['add', 'a.txt'], { cwd: root, env });
    execFileSync('git', ['commit', '-qm', 'first'], { cwd: root, env });
    assert.equal((await s2.git('branch', undefined, 'feature')).exitCode, 0);
    const list = await s2.git('branch', { signal: AbortSignal.timeout(60000) });
    assert.match(list.output, /feature/);
    await assert.rejects(s2.git({ command: 'log', bogus: 1 }), (e) => e.code === 'INVALID_CALL');
  }
});

for (const mode of modes) {
  test(`sleep & echo hi with timeout 1000 (sandbox ${mode})`, async () => {
    const s = await dirSession(tmp(), mode);
    const m = marker();
    const t0 = performance.now();
    const r = await s.tool('bash', { command: `sleep ${m} & echo hi`, timeout: 1000 });
    const took = performance.now() - t0;
    // 1,600 ms on a quiet machine; the child sleeps 100 s.
    assert.ok(took < 10_000, `took ${took} ms`);
    assert.ok(r.output.startsWith('hi\n'), r.output);
    assert.equal(meta(r).sandboxed, mode === 'auto');
    assert.equal(meta(r).output.timed_out, true);
    assert.equal(kind(r), 'timeout');
    await noneLeft(m);
  });

  test(`a background child that ends or lets go of the pipes ends the call (sandbox ${mode})`, async () => {
    const s = await dirSession(tmp(), mode);
    const m = marker();
    for (const [command, out] of [['(sleep 0.3; echo late) & echo hi; exit 4', 'hi\nlate\n'], [`sleep ${m} >/dev/null 2>&1 & echo hi; exit 4`, 'hi\n']]) {
      const t0 = performance.now();
      const r = await s.tool('bash', { command, timeout: 20000 });
      assert.ok(performance.now() - t0 < 10000, `${command}: took ${performance.now() - t0} ms`);
      assert.equal(meta(r).exit_code, 4, command);
      assert.equal(meta(r).output.timed_out, false, command);
      assert.ok(r.output.startsWith(out), `${command}: ${r.output}`);
    }
    await noneLeft(m);
  });

  test(`5 MiB on each stream (sandbox ${mode})`, async () => {
    const s = await dirSession(tmp(), mode);
    const r = await s.tool('bash', { command: 'seq -f %09.0f 1 524288 & seq -f %09.0f 524289 1048576 >&2; wait', timeout: 60000 });
    const o = meta(r).output ?? {};
    assert.equal(o.total_bytes, 10485760);
    assert.equal(o.stdout_bytes, 5242880);
    assert.equal(o.stderr_bytes, 5242880);
    assert.equal(o.captured_bytes, 102400);
    let want = '';
    for (let i = 1; i <= 524288; i++) want += String(i).padStart(9, '0') + '\n';
    const art = await s.getArtifact(meta(r).metadata_artifact.artifact_uri);
    const full = JSON.parse(art.content);
    assert.ok(full.stdout.startsWith(want.slice(0, 65536)), 'stdout head');
    assert.ok(full.stdout.endsWith(want.slice(want.length - 36864)), 'stdout tail');
  });

  test(`cd persists (sandbox ${mode})`, async () => {
    const root = tmp();
    fs.mkdirSync(path.join(root, 'sub'));
    const s = await dirSession(root, mode);
    await s.bash('cd sub');
    assert.equal(await s.bash('pwd'), `${root}/sub\n`);
    await s.bash("echo 'unbalanced");
    assert.equal(await s.bash('exit 3'), '\n[exit code 3]');
    assert.equal(await s.bash('pwd'), `${root}/sub\n`);
  });

  test(`close during sleep & sleep settles (sandbox ${mode})`, async () => {
    const s = await dirSession(tmp(), mode);
    const m = marker();
    const p = s.bash(`sleep ${m} & sleep ${m}`);
    await new Promise((r) => setTimeout(r, 400));
    const t0 = performance.now();
    await s.close();
    await assert.rejects(p, (e) => e.code === 'SESSION_CLOSED' || e.code === 'ABORTED');
    // 1 s quiet; the sleeps last 100 s.
    assert.ok(performance.now() - t0 < 10_000, `close took ${performance.now() - t0} ms`);
    await noneLeft(m);
  });
}

// warmShells lists the pids of the idle warm shells of a root (their
// command line holds the prelude; a zombie's is empty): bash, and
// bubblewrap's processes around it in the sandbox.
function warmShells(root) {
  const out = [];
  for (const p of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      if (fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('__a3s_dir') && fs.readlinkSync(`/proc/${p}/cwd`) === root) out.push(p);
    } catch { /* gone */ }
  }
  return out;
}
// until polls f up to 10 s (a busy machine spawns and reaps slowly).
async function until(f, what) {
  for (let i = 0; i < 500; i++) {
    const v = f();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail(what);
}

for (const mode of modes) {
  test(`warm shells: one fresh shell per call, kept healthy by exit and kill -9, a timeout kills the group, close kills the idle shells (sandbox ${mode})`, async () => {
    const root = tmp();
    fs.mkdirSync(path.join(root, 'sub'));
    const s = await dirSession(root, mode);
    await s.bash('true'); // the pool fills after a first command
    // warm runs call in an idle shell: one of the shells that were idle is gone after.
    const warm = async (call) => {
      const idle = await until(() => { const w = warmShells(root); return w.length > 0 && w; }, 'no warm shell');
      const r = await call();
      await until(() => { const now = warmShells(root); return idle.some((p) => !now.includes(p)); }, `no idle shell of ${idle} ran the call`);
      return [r, idle];
    };
    const seen = new Set();
    for (let i = 0; i < 3; i++) {
      const [pid, idle] = await warm(() => s.bash('echo $$'));
      if (mode === 'none') assert.ok(idle.includes(pid.trim()), `$$ ${pid} is not the warm shell ${idle}`);
      seen.add(idle.join());
    }
    assert.equal(seen.size, 3);
    await warm(() => s.bash('x=1; export Y=2; f() { :; }; cd sub'));
    assert.equal((await warm(() => s.bash('echo "${x-none} ${Y-none} $(type -t f || echo none) $(pwd)"')))[0], `none none none ${root}/sub\n`);
    assert.equal((await warm(() => s.bash('cat; [[ -e /proc/$$/fd/4 ]] && echo fd4 open; echo end')))[0], 'end\n');
    assert.equal((await warm(() => s.bash('exit 3')))[0], '\n[exit code 3]');
    await warm(() => s.bash('kill -9 $$'));
    const big = 'é'.repeat(70000);
    assert.match((await warm(() => s.bash(`s='${big}'; echo \${#s}; pwd`)))[0], new RegExp(`^(70000|140000)\\n${root}/sub\\n$`));
    const m = marker();
    const [r] = await warm(() => s.tool('bash', { command: `sleep ${m} & echo hi`, timeout: 1000 }));
    assert.equal(meta(r).output.timed_out, true);
    assert.ok(r.output.startsWith('hi\n'), r.output);
    await noneLeft(m);
    await until(() => warmShells(root).length > 0, 'no warm shell');
    await s.close();
    await until(() => warmShells(root).length === 0, `close left the warm shells ${warmShells(root)}`);
  });
}

test('the sandbox: setsid escapee gone, nothing written outside, no network unless allowed', { skip: !hasBwrap }, async () => {
  const root = tmp();
  const outside = tmp();
  const s = await dirSession(root, 'auto');
  const m = marker();
  const r = await s.tool('bash', { command: `setsid sleep ${m} & echo in > inside.txt; echo out > ${outside}/out.txt; echo x > /etc/a3s-test`, timeout: 5000 });
  assert.equal(meta(r).sandboxed, true);
  await noneLeft(m);
  assert.equal(fs.readFileSync(path.join(root, 'inside.txt'), 'utf8'), 'in\n');
  assert.ok(!fs.existsSync(path.join(outside, 'out.txt')));
  assert.ok(!fs.existsSync('/etc/a3s-test'));

  const server = net.createServer((c) => c.end('hello\n'));
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const port = server.address().port;
  try {
    const cmd = `exec 5<>/dev/tcp/127.0.0.1/${port} && head -n1 <&5`;
    const denied = await s.tool('bash', { command: cmd, timeout: 5000 });
    assert.notEqual(denied.output.split('\n')[0], 'hello');
    const open = await dirSession(root, 'auto', { network: true });
    const allowed = await open.tool('bash', { command: cmd, timeout: 5000 });
    assert.equal(allowed.output, 'hello\n');
  } finally {
    server.close();
  }
});

test('governed bash without a sandbox is unsupported; sandbox none runs it', async () => {
  const saved = process.env.PATH;
  process.env.PATH = '/nonexistent'; // no bwrap to find
  let s;
  try {
    s = await dirSession(tmp(), 'auto');
  } finally {
    process.env.PATH = saved;
  }
  const r = await s.governedTool('bash', { command: 'echo hi' });
  assert.equal(kind(r), 'unsupported', r.output);
  assert.equal(await s.bash('echo trusted'), 'trusted\n');
  await s.close();
  const none = await dirSession(tmp(), 'none');
  const ok = await none.governedTool('bash', { command: 'echo hi' });
  assert.equal(ok.output, 'hi\n');
  assert.equal(meta(ok).sandboxed, false);
});

// A repository of n commits: commit i rewrites src/f(i%200).txt with 50
// lines of multi-byte text.
function gitRepo(n) {
  const dir = tmp();
  const env = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' };
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: dir, env });
  let fi = '';
  for (let i = 1; i <= n; i++) {
    let body = '';
    for (let l = 0; l < 50; l++) body += `line ${l} of commit ${i}: ünïcødé ✓ ${'é'.repeat(i % 7)}\n`;
    const msg = `c${i}`;
    fi += `commit refs/heads/main\nmark :${i}\ncommitter T <t@example.com> ${1700000000 + i} +0000\ndata ${msg.length}\n${msg}\n`;
    if (i > 1) fi += `from :${i - 1}\n`;
    fi += `M 100644 inline src/f${String(i % 200).padStart(3, '0')}.txt\ndata ${Buffer.byteLength(body)}\n${body}\n`;
  }
  execFileSync('git', ['fast-import', '--quiet'], { cwd: dir, env, input: fi });
  execFileSync('git', ['checkout', '-q', 'main'], { cwd: dir, env });
  return dir;
}

test('git log over 2,000 commits: 200 pages of 10, also with a commit landing between pages', { skip: !hasGit }, async () => {
  const dir = gitRepo(2000);
  const s = await dirSession(dir);
  const env = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@e' };
  for (const landing of [false, true]) {
    const seen = new Set();
    let cursor;
    let pages = 0;
    for (;;) {
      const r = await s.git({ command: 'log', limit: 10, cursor });
      assert.equal(r.exitCode, 0, r.output);
      pages++;
      for (const c of meta(r).commits) {
        assert.ok(!seen.has(c.id), `${c.id} repeated`);
        seen.add(c.id);
      }
      cursor = meta(r).page.next_cursor;
      if (!cursor) break;
      if (landing && pages === 1) {
        fs.writeFileSync(path.join(dir, 'new.txt'), 'x\n');
        execFileSync('git', ['add', 'new.txt'], { cwd: dir, env });
        execFileSync('git', ['commit', '-qm', 'landed'], { cwd: dir, env });
      }
    }
    assert.equal(pages, 200);
    assert.equal(seen.size, 2000);
  }
});

test('a multi-byte diff in 256-byte pages concatenates to git diff', { skip: !hasGit }, async () => {
  const dir = gitRepo(300);
  const s = await dirSession(dir);
  const want = execFileSync('git', ['--no-pager', 'diff', '--no-ext-diff', 'HEAD~25', 'HEAD'], { cwd: dir, encoding: 'utf8', maxBuffer: 1 << 26 });
  let got = '';
  let cursor;
  const dec = new TextDecoder('utf-8', { fatal: true });
  for (;;) {
    const r = await s.git({ command: 'diff', target: 'HEAD~25 HEAD', maxBytes: 256, cursor });
    assert.equal(r.exitCode, 0, r.output);
    const rng = meta(r).range;
    const page = Buffer.from(r.output).subarray(0, rng.returned_bytes);
    assert.ok(page.length <= 256);
    got += dec.decode(page); // throws on invalid UTF-8
    cursor = rng.next_cursor;
    if (!cursor) break;
  }
  assert.equal(Buffer.byteLength(got), Buffer.byteLength(want));
  assert.equal(got, want);
  const bad = await s.git('push');
  assert.equal(kind(bad), 'invalid_argument');
});

test('verifyCommands: the statuses of the rules', async () => {
  const s = await dirSession(tmp());
  const pass = { id: 'pass', kind: 'test', description: 'ok', command: 'true', required: true };
  const fail = { id: 'fail', kind: 'test', description: 'no', command: 'exit 4', required: true };
  const slow = { id: 'slow', kind: 'test', description: 'slow', command: 'sleep 5', timeoutMs: 1000 };
  const optional = { id: 'lint', kind: 'lint', description: 'lint', command: 'false' };
  assert.equal((await s.verifyCommands('s', [])).status, 'skipped');
  const ok = await s.verifyCommands('release readiness', [pass]);
  assert.equal(ok.schema, 'a3s.verification_report.v1');
  assert.equal(ok.subject, 'release readiness');
  assert.equal(ok.status, 'passed');
  assert.deepEqual(ok.checks[0].suggested_tools, ['bash']);
  const bad = await s.verifyCommands('s', [pass, fail]);
  assert.equal(bad.status, 'failed');
  assert.equal(bad.checks[1].residual_risk, 'verification command exited with code 4: exit 4');
  const timedOut = await s.verifyCommands('s', [slow]);
  assert.equal(timedOut.status, 'failed');
  assert.match(timedOut.checks[0].residual_risk, /timed out after 1000 ms/);
  assert.equal((await s.verifyCommands('s', [pass, optional])).status, 'failed');
  await assert.rejects(s.verifyCommands('s', [pass, pass]), (e) => e.code === 'INVALID_CALL');
});

test("verifyPresets: this repository's go.mod and package.json", { skip: !process.env.CODE_WASM_REPO }, async () => {
  const s = await dirSession(process.env.CODE_WASM_REPO);
  const cmds = await s.verifyPresets();
  assert.deepEqual(cmds.map((c) => `${c.id}=${c.command}`), ['go-test=go test ./...', 'go-vet=go vet ./...']);
});
