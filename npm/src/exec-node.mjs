// The exec capability of a directory workspace in Node: the host kind
// "exec" that Go's workspace/dirfs (exec_js.go) calls to run bash and git.
// The same rules as the native runner (workspace/dirfs/exec_unix.go):
// each command is a process group of its own (detached: setsid), inside
// bubblewrap when it is installed and works (read-only system, the root
// the only writable place, private /tmp, no network unless allowed, a PID
// namespace), its output kept as a 64 KiB head and a 36 KiB tail with
// exact counts, one deadline over draining the pipes and the exit; on
// timeout or abort the whole group gets SIGKILL, then up to 500 ms for
// the pipes to drain. A `cd` persists: bash reports its final directory on
// fd 3 when it exits.

import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const HEAD = 64 << 10;
const TAIL = 36 << 10;
const SETTLE_MS = 500;
// The wraps of workspace/dirfs/exec_unix.go (shellWrap, sandboxWrap; the
// reasons are there): the command runs with fd 3 closed; inside bubblewrap
// the EXIT trap waits while a background child holds the output pipes.
const SHELL_TRAP = 'trap \'pwd -P >&3\' EXIT; ';
const SANDBOX_TRAP = '__a3s_held() { local f; for f in /proc/[0-9]*/fd/*; do case $f in /proc/1/*|/proc/$$/*) ;; *) [[ $f -ef /proc/1/fd/1 || $f -ef /proc/1/fd/2 ]] && return 0;; esac; done; return 1; }; ' +
  'trap \'__a3s_rc=$?; pwd -P >&3; while __a3s_held; do /bin/sleep 0.05; done; exit $__a3s_rc\' EXIT; ';
const EVAL = 'eval "$__a3s_cmd" 3>&-';
const SHELL_WRAP = SHELL_TRAP + '__a3s_cmd=$1; shift; ' + EVAL;
const SANDBOX_WRAP = SANDBOX_TRAP + '__a3s_cmd=$1; shift; ' + EVAL;
// WARM_READ is the prelude of a warm shell (workspace/dirfs/warm_unix.go):
// the directory NUL-terminated, the command's length in bytes on a line,
// then the command, from fd 4.
const WARM_READ = 'IFS= read -r -d \'\' __a3s_dir <&4 && IFS= read -r __a3s_n <&4 && LC_ALL=C IFS= read -r -N "$__a3s_n" __a3s_cmd <&4 || exit 125; ' +
  'exec 4<&-; [[ $__a3s_dir -ef . ]] || cd -- "$__a3s_dir"; unset __a3s_dir __a3s_n; SECONDS=0; ';

// Process groups still running, killed if Node exits first (a detached
// child gets no SIGHUP).
const live = new Set();
let exitHooked = false;
function track(pgid) {
  if (!exitHooked) {
    exitHooked = true;
    process.on('exit', () => { for (const g of live) killGroup(g); });
  }
  live.add(pgid);
}
function killGroup(pgid) {
  try { process.kill(-pgid, 'SIGKILL'); } catch { /* gone */ }
}

/** A bounded capture: the first HEAD bytes, then a rolling TAIL (or, with whole > 0, the first whole bytes). */
class Capture {
  /** @param {number} whole */
  constructor(whole = 0) {
    this.whole = whole;
    this.total = 0;
    /** @type {Buffer[]} */ this.head = [];
    this.headLen = 0;
    /** @type {Buffer[]} */ this.tail = [];
    this.tailLen = 0;
  }
  /** @param {Buffer} b */
  write(b) {
    this.total += b.length;
    const cap = this.whole > 0 ? this.whole : HEAD;
    if (this.headLen < cap) {
      const k = Math.min(cap - this.headLen, b.length);
      this.head.push(b.subarray(0, k));
      this.headLen += k;
      b = b.subarray(k);
    }
    if (b.length === 0 || this.whole > 0) return;
    this.tail.push(b);
    this.tailLen += b.length;
    while (this.tailLen - this.tail[0].length >= TAIL) this.tailLen -= /** @type {Buffer} */ (this.tail.shift()).length;
  }
  result() {
    let tail = Buffer.concat(this.tail);
    if (tail.length > TAIL) tail = tail.subarray(tail.length - TAIL);
    return { head: Buffer.concat(this.head).toString('base64'), tail: tail.toString('base64'), total: this.total };
  }
}

/** @param {string} name */
function inPath(name) {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (!dir) continue;
    const p = path.join(dir, name);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      if (fs.statSync(p).isFile()) return p;
    } catch { /* not here */ }
  }
  return '';
}

/** @type {Map<string, boolean>} */
const bwrapWorks = new Map();
/** @type {{path: string | undefined, bwrap: string}} */
const bwrapSeen = { path: undefined, bwrap: '' };
/** The path of a bwrap in PATH that can make the namespaces, or "". */
function bubblewrap() {
  // Looked up again only when PATH changes: the lookup stats every PATH
  // entry, on every command otherwise.
  if (bwrapSeen.path === process.env.PATH) return bwrapSeen.bwrap;
  const p = inPath('bwrap');
  if (p && !bwrapWorks.has(p)) {
    const r = spawnSync(p, ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp',
      '--unshare-pid', '--unshare-net', '--die-with-parent', '--', '/bin/sh', '-c', 'echo ok'], { encoding: 'utf8', timeout: 10000 });
    bwrapWorks.set(p, r.status === 0 && r.stdout === 'ok\n');
  }
  bwrapSeen.path = process.env.PATH;
  bwrapSeen.bwrap = p && bwrapWorks.get(p) ? p : '';
  return bwrapSeen.bwrap;
}

/**
 * Warm shells (workspace/dirfs/warm_unix.go has the reasons): once a runner
 * ran a command, bash is spawned ahead (WARM_SHELLS), each a detached process group with
 * its pipes open, blocked reading its directory and command from fd 4; the
 * next command is handed to it and is then run exactly as a shell spawned
 * for it (one command per shell: $$, variables and the group are its own).
 * spawn() forks this whole process synchronously, so the next shell is
 * spawned REFILL_MS after a call answered, never while one runs: calls back
 * to back past the ready shells spawn their own, as without a pool.
 * A shell spawned under another environment (or sandbox) than the call's
 * is discarded; op 'close' kills the idle shells. Pools are named by the
 * Go runner (`pool`).
 * @typedef {{child: import('node:child_process').ChildProcess, key: string, dead: boolean}} Warm
 * @type {Map<string, WarmPool>}
 */
const pools = new Map();

// WARM_SHELLS is how many shells a pool keeps ready: two, so that two
// calls back to back both find one.
const WARM_SHELLS = 2;
// REFILL_MS: the next shell is spawned this long after a call answered,
// and not while a call runs (spawn forks this process synchronously).
const REFILL_MS = 20;

class WarmPool {
  constructor() {
    /** @type {Warm[]} */ this.idle = []; // oldest first
    /** @type {ReturnType<typeof setTimeout> | null} */ this.timer = null;
    this.closed = false;
  }

  /**
   * An idle shell, handed cwd and command, or null (the caller spawns its
   * own, as without a pool): none, only ones of another key or dead (those
   * are discarded), or a command with a NUL (bash cannot hold it). A refill
   * scheduled is put off until the call answers.
   * @param {string} key @param {string} cwd @param {string} command
   */
  take(key, cwd, command) {
    if (this.timer) { clearTimeout(this.timer); this.timer = null; }
    if (command.includes('\0')) return null;
    let w;
    while ((w = this.idle.shift())) {
      if (w.key === key && !w.dead) break;
      discard(w);
    }
    if (!w) return null;
    const s = /** @type {import('node:net').Socket} */ (w.child.stdio[4]);
    s.on('error', () => { /* the shell died: its exit ends the call */ });
    s.end(Buffer.concat([Buffer.from(`${cwd}\0${Buffer.byteLength(command)}\n`), Buffer.from(command)]), () => s.destroy());
    return w.child;
  }

  /** Spawns shells, REFILL_MS apart, until WARM_SHELLS are idle. @param {() => Warm} start */
  fill(start) {
    if (this.idle.length >= WARM_SHELLS || this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.closed || this.idle.length >= WARM_SHELLS) return;
      try { this.idle.push(start()); } catch { /* the next call spawns its own */ }
      this.fill(start);
    }, REFILL_MS);
  }

  close() {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    for (const w of this.idle.splice(0)) discard(w);
  }
}

/** @param {Warm} w */
function discard(w) {
  w.dead = true;
  if (w.child.pid) { killGroup(w.child.pid); live.delete(w.child.pid); }
  for (const s of w.child.stdio) s?.destroy();
}

/**
 * spawnWarm spawns a warm shell in root.
 * @param {string} root @param {string} bwrap @param {boolean} network @param {Record<string, string>} env @param {string} key @param {WarmPool} pool
 * @returns {Warm}
 */
function spawnWarm(root, bwrap, network, env, key, pool) {
  const prog = sandboxed(bwrap, network, root, root, ['/bin/bash', '-c', WARM_READ + (bwrap ? SANDBOX_TRAP : SHELL_TRAP) + EVAL, 'bash']);
  const child = spawn(prog[0], prog.slice(1), { cwd: root, env, detached: true, stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'] });
  /** @type {Warm} */
  const w = { child, key, dead: false };
  const gone = () => {
    const i = pool.idle.indexOf(w);
    if (i >= 0) { pool.idle.splice(i, 1); discard(w); }
    w.dead = true;
  };
  child.on('error', gone);
  child.on('exit', gone);
  if (child.pid) track(child.pid);
  return w;
}

/**
 * sandboxed puts prog inside bubblewrap (when bwrap is not ""), starting in cwd.
 * @param {string} bwrap @param {boolean} network @param {string} root @param {string} cwd @param {string[]} prog
 */
function sandboxed(bwrap, network, root, cwd, prog) {
  if (!bwrap) return prog;
  return [bwrap, '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--bind', root, root,
    '--unshare-pid', '--unshare-ipc', '--unshare-uts', ...(network ? [] : ['--unshare-net']),
    '--die-with-parent', '--chdir', cwd, '--', ...prog];
}

/**
 * The host kind: {op: 'info' | 'run' | 'close', root, sandbox, network, pool?, request?}.
 * @param {any} p
 * @param {{signal?: AbortSignal}} ctx
 */
export async function execHost(p, { signal } = {}) {
  if (p.sandbox !== '' && p.sandbox !== 'auto' && p.sandbox !== 'none') throw new Error(`sandbox must be 'auto' or 'none', not ${JSON.stringify(p.sandbox)}`);
  const bwrap = p.sandbox === 'none' ? '' : bubblewrap();
  if (p.op === 'info') {
    return { sandbox: bwrap ? 'bubblewrap' : '', unconfined: p.sandbox === 'none', network: !!bwrap && !!p.network, git: inPath('git') !== '' };
  }
  if (p.op === 'close') {
    pools.get(p.pool)?.close();
    pools.delete(p.pool);
    return {};
  }
  if (p.op !== 'run') throw new Error(`exec: unknown op ${JSON.stringify(p.op)}`);
  let pool;
  if (typeof p.pool === 'string' && p.pool && p.request?.command) {
    pool = pools.get(p.pool);
    if (!pool) pools.set(p.pool, pool = new WarmPool());
  }
  return run(fs.realpathSync(p.root), bwrap, !!p.network, p.request, p.timeoutMs ?? 0, signal, pool);
}

/**
 * @param {string} root
 * @param {string} bwrap
 * @param {boolean} network
 * @param {{command?: string, argv?: string[], cwd?: string, env?: string[], unset?: string[], wholeStdout?: number}} req
 * @param {number} timeoutMs
 * @param {AbortSignal | undefined} signal
 * @param {WarmPool | undefined} pool  the runner's warm shells (a command only)
 */
function run(root, bwrap, network, req, timeoutMs, signal, pool) {
  const shell = !!req.command;
  let cwd = root;
  if (req.cwd && req.cwd !== '.') {
    const c = path.join(root, req.cwd);
    try { if (fs.statSync(c).isDirectory()) cwd = c; } catch { /* gone: the root */ }
  }
  let prog = shell ? ['/bin/bash', '-c', bwrap ? SANDBOX_WRAP : SHELL_WRAP, 'bash', /** @type {string} */ (req.command)] : /** @type {string[]} */ (req.argv);
  if (!shell && !bwrap) {
    // A program is looked up outside the workspace: a checked-in "git"
    // must not run in its place.
    const found = prog[0].includes('/') ? prog[0] : inPath(prog[0]);
    if (!found) throw new Error(`exec: ${prog[0]} is not installed (not in PATH)`);
    const abs = fs.realpathSync(found);
    if (abs === root || abs.startsWith(root + '/')) throw new Error(`exec: ${prog[0]} resolves inside the workspace (${abs}); refusing to run it`);
    prog = [abs, ...prog.slice(1)];
  }
  prog = sandboxed(bwrap, network, root, cwd, prog);
  /** @type {Record<string, string>} */
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !(req.unset ?? []).some((u) => `${k}=${v}`.startsWith(u))) env[k] = v;
  }
  for (const kv of req.env ?? []) {
    const i = kv.indexOf('=');
    if (i > 0) env[kv.slice(0, i)] = kv.slice(i + 1);
  }

  const key = `${bwrap}\0${JSON.stringify(env)}`;
  const warm = pool && !signal?.aborted ? pool.take(key, cwd, /** @type {string} */ (req.command)) : null;
  const refill = () => pool?.fill(() => spawnWarm(root, bwrap, network, env, key, pool));

  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      if (warm?.pid) { killGroup(warm.pid); live.delete(warm.pid); }
      for (const s of warm?.stdio ?? []) s?.destroy();
      reject(new Error('exec: aborted'));
      return;
    }
    const child = warm ?? spawn(prog[0], prog.slice(1), { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe', shell ? 'pipe' : 'ignore'] });
    const all = new Capture();
    const out = new Capture(req.wholeStdout ?? 0);
    const err = new Capture();
    let cwdText = '';
    let timedOut = false;
    let cancelled = false;
    let finished = false;
    let timer;
    let settleTimer;
    const pgid = child.pid;
    const streams = /** @type {import('node:stream').Readable[]} */ ([child.stdout, child.stderr, shell ? child.stdio[3] : null, warm ? child.stdio[4] : null].filter(Boolean));
    child.stdout?.on('data', (b) => { all.write(b); out.write(b); });
    child.stderr?.on('data', (b) => { all.write(b); err.write(b); });
    if (shell) child.stdio[3]?.on('data', (b) => { if (cwdText.length < 65536) cwdText += b.toString('utf8'); });
    const onAbort = () => stop(false);
    const finish = (/** @type {number | null} */ code) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      clearTimeout(settleTimer);
      signal?.removeEventListener('abort', onAbort);
      if (pgid) { killGroup(pgid); live.delete(pgid); }
      for (const s of streams) s.destroy();
      refill();
      if (cancelled) { reject(new Error('exec: aborted')); return; }
      let dir = '';
      if (shell && !timedOut) {
        const lines = cwdText.replace(/\n+$/, '').split('\n');
        const last = lines[lines.length - 1];
        if (last === root) dir = '.';
        else if (last.startsWith(root + '/')) dir = last.slice(root.length + 1);
      }
      resolve({ exitCode: code ?? -1, timedOut, cancelled, sandboxed: !!bwrap, output: all.result(), stdout: out.result(), stderr: err.result(), cwd: dir });
    };
    const stop = (/** @type {boolean} */ byDeadline) => {
      if (finished || timedOut || cancelled) return;
      if (byDeadline) timedOut = true; else cancelled = true;
      if (pgid) killGroup(pgid);
      // A process outside the group may hold the pipes: stop waiting.
      settleTimer = setTimeout(() => finish(child.exitCode), SETTLE_MS);
    };
    child.on('error', (e) => { if (!finished) { finished = true; clearTimeout(timer); signal?.removeEventListener('abort', onAbort); refill(); reject(e); } });
    if (pgid) track(pgid);
    // 'close': the process exited and every pipe reached its end.
    child.on('close', (code) => finish(code));
    if (timeoutMs > 0) timer = setTimeout(() => stop(true), timeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
