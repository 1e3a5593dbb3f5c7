// The start-up code the workerd tier (run.mjs, entry.mjs) and the
// workerd benchmark (bench/workerd.bench.mjs) share: a free loopback port,
// the package packed and installed into a scratch app as a user would,
// and `wrangler dev` (workerd, with local R2 and SQLite Durable Objects
// persisted to a directory) started and stopped as one process group.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const bin = (name) => join(repo, 'node_modules', '.bin', name);

/** freePort answers a TCP port free on 127.0.0.1 now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** wranglerEnv is the environment wrangler runs in here: no metrics, no prompts, logs under scratch. */
export const wranglerEnv = (scratch) => ({ ...process.env, WRANGLER_SEND_METRICS: 'false', CI: '1', WRANGLER_LOG_PATH: join(scratch, 'wrangler-logs') });

/**
 * installApp packs the package (npm/) into scratch and installs the
 * tarball into scratch/<name>, a Worker project whose own code is API.md's
 * one line re-exporting `@a3s-lab/code-wasm/worker`, with its wrangler.jsonc
 * (SESSIONS, WORKSPACE). Answers the project directory.
 */
export function installApp(scratch, name = 'app') {
  const packOut = execFileSync('npm', ['pack', '--json', '--pack-destination', scratch], { cwd: join(repo, 'npm'), encoding: 'utf8' });
  const project = join(scratch, name);
  mkdirSync(join(project, 'src'), { recursive: true });
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'code-wasm-app', private: true, type: 'module' }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--offline', join(scratch, JSON.parse(packOut)[0].filename)], { cwd: project, stdio: 'ignore' });
  writeFileSync(join(project, 'src', 'index.js'), "export { default, CodeSession } from '@a3s-lab/code-wasm/worker';\n");
  writeFileSync(join(project, 'wrangler.jsonc'), `{
  "name": "code-wasm",
  "main": "src/index.js",
  "compatibility_date": "2026-04-26",
  "durable_objects": { "bindings": [{ "name": "SESSIONS", "class_name": "CodeSession" }] },
  "migrations": [{ "tag": "v1", "new_sqlite_classes": ["CodeSession"] }],
  "r2_buckets": [{ "binding": "WORKSPACE", "bucket_name": "code-workspaces" }]
}
`);
  return project;
}

/**
 * startWranglerDev runs `wrangler dev` in project on a free port with its
 * state persisted to state, and waits (up to 90 s) until ready(base)
 * answers true. Answers {base, stop}; stop ends the process group and
 * waits for it.
 * @param {{project: string, state: string, env: NodeJS.ProcessEnv, ready: (base: string) => Promise<boolean>, out?: boolean}} o
 */
export async function startWranglerDev({ project, state, env, ready, out = false }) {
  const port = await freePort();
  const dev = spawn(bin('wrangler'), ['dev', '--ip', '127.0.0.1', '--port', String(port), '--persist-to', state, '--show-interactive-dev-session=false'],
    { cwd: project, env, stdio: ['ignore', out ? 'inherit' : 'ignore', 'inherit'], detached: true });
  const exited = new Promise((r) => dev.on('exit', r));
  const stop = async () => {
    if (dev.exitCode === null && dev.signalCode === null) process.kill(-dev.pid, 'SIGTERM');
    await exited;
  };
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90000;
  for (;;) {
    let why = 'not ready';
    try {
      if (await ready(base)) break;
    } catch (e) {
      why = e.message;
    }
    if (Date.now() > deadline || dev.exitCode !== null) {
      await stop();
      throw new Error(`wrangler dev did not answer at ${base}: ${why}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return { base, stop };
}
